import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@elastic/elasticsearch';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser, openPage, screenshot } from '../harness/browser.js';
import { runNeon, neonOnce, type CliRun } from '../../devkit/cli-process.js';
import { freshIndex } from '../../devkit/fresh-names.js';

/**
 * The product as a newcomer runs it: `neon start` on the bundled sample, in embedded mode (no Kafka,
 * no Elasticsearch) and in cluster mode (real Kafka + Elasticsearch), each as a real subprocess.
 * Each run must replay the sample, raise spike alerts, answer a question with citations that lead to
 * the article, serve the same answer to `neon ask`, report its stages, and stop cleanly on SIGTERM.
 * The sample is cut to its first 500 summaries (January 1–25, 2025: the Los Angeles wildfires, and the
 * first stories the alert desk pushes, from January 19).
 */
const LIMIT = '500';
const dataDir = mkdtempSync(join(tmpdir(), 'neon-e2e-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface AskBody {
  answer: string;
  citations: { n: number; url: string | null; published_at: string }[];
  items: { id: string; kind: string; published_at: string; url: string | null; score: number }[];
}

/** The dashboard of the running product in Chromium: live spikes listed, a question answered with citations. */
async function useDashboard(url: string, mode: string): Promise<void> {
  const browser = await launchBrowser();
  try {
    const { page, problems, context } = await openPage(browser, `${url}/`);
    await expect.poll(() => page.locator('#spike-list > li').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await page.getByLabel('Question').fill('Los Angeles wildfires');
    await page.getByLabel('As of date (UTC)').fill('2025-01-10');
    await page.getByLabel('Store').selectOption('both');
    await page.getByLabel('Question').press('Enter');
    await expect.poll(() => page.locator('#answer a').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await page.locator('#answer').innerText()).toMatch(/January 1\d, 2025|January [1-9], 2025/);
    const shot = await screenshot(page, `product-${mode}-ask`);
    expect(shot).toMatch(/\.png$/);
    expect(problems.unexpected()).toEqual([]);
    await context.close();
  } finally {
    await browser.close();
  }
}

async function exercise(run: CliRun, env: NodeJS.ProcessEnv, mode: 'embedded' | 'cluster'): Promise<void> {
  const [, url] = await run.waitFor(/dashboard and API: (http:\/\/127\.0\.0\.1:\d+)\//, 240_000);
  await run.waitFor(/caught up: (\d+) chunks and (\d+) interactions searchable/, 300_000);
  const output = run.output();
  expect(output).toContain(mode === 'embedded' ? 'embedded mode' : 'cluster mode');
  // Stories pushed to the terminal: on the alert that started them or on one that grew them past the bar.
  expect(output).toMatch(/spike (STARTED|ongoing) +\S.*significance/);

  const spikes = (await (await fetch(`${url}/v1/spikes?state=all&limit=500`)).json()) as {
    spikes: { entity_name: string; latest: { urls: string[]; observed: number } }[];
  };
  expect(spikes.spikes.length).toBeGreaterThan(0);
  // Every record that counted articles links them (an episode that ended on a day without any has none).
  const counted = spikes.spikes.filter((s) => s.latest.observed > 0);
  expect(counted.length).toBeGreaterThan(0);
  expect(counted.every((s) => s.latest.urls.length > 0)).toBe(true);

  const question = new URLSearchParams({ q: 'Los Angeles wildfires', date: '2025-01-10', store: 'both', k: '5' });
  const ask = (await (await fetch(`${url}/v1/ask?${question.toString()}`)).json()) as AskBody;
  expect(ask.citations.length).toBeGreaterThan(0);
  // Cited: the extractive answer quotes the sentences that best answer, from whichever items hold them.
  expect(ask.answer).toMatch(/\[\d+\]/);
  for (const item of ask.items) expect(Date.parse(item.published_at)).toBeLessThanOrEqual(Date.parse('2025-01-11'));
  expect(ask.items.some((i) => /wildfire|Los Angeles/i.test(JSON.stringify(i)))).toBe(true);
  for (const c of ask.citations) expect(c.url).toMatch(/^https?:\/\//);

  // The CLI finds the running service by itself and gives the same answer.
  const cli = await neonOnce(
    ['ask', 'Los Angeles wildfires', '--date', '2025-01-10', '--store', 'both', '-k', '5', '--json'],
    env,
  );
  expect(cli.code).toBe(0);
  const cliAnswer = JSON.parse(cli.output.slice(cli.output.indexOf('{'))) as AskBody;
  expect(cliAnswer.items.map((i) => i.id)).toEqual(ask.items.map((i) => i.id));

  const topics = await neonOnce(['topics', '--json', '--max-lag', '0'], env);
  expect(topics.code).toBe(0);
  const lagByStage = (
    JSON.parse(topics.output.slice(topics.output.indexOf('{'))) as {
      stages: { stage: string; lag: number | null }[];
    }
  ).stages;
  expect(lagByStage.find((s) => s.stage === 'index-chunks')?.lag).toBe(0);

  const entities = await neonOnce(['entities', 'search', 'Los Angeles', '--json'], env);
  expect(entities.code).toBe(0);
  expect(entities.output).toContain('e-los-angeles');

  await useDashboard(url!, mode);

  run.kill('SIGTERM');
  expect(await run.exited).toBe(0);
}

describe('neon start on the bundled sample', { timeout: 600_000 }, () => {
  it('embedded: no broker, no Elasticsearch, falls back to the sample when the feeds do not answer', async () => {
    const env = { ...process.env, NEON_DATA_DIR: join(dataDir, 'embedded') } as NodeJS.ProcessEnv;
    delete env.KAFKA_BROKERS;
    delete env.ES_URL;
    // A feed on a port nothing listens on: the offline path a machine without internet takes.
    const feeds = join(dataDir, 'feeds.yaml');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(feeds, 'feeds:\n  - url: http://127.0.0.1:9/rss.xml\n    interval_seconds: 300\n');
    const run = runNeon(['start', '--port', '0', '--limit', LIMIT, '--feeds', feeds], env);
    try {
      await exercise(run, env, 'embedded');
      expect(run.output()).toContain('no live feed answered (offline?): replaying the bundled sample instead');
    } finally {
      if (run.running()) run.kill('SIGKILL');
    }
  });

  it('embedded: Ctrl-C in the middle of the work stops at once, with no dead letters and no crash', async () => {
    const env = { ...process.env, NEON_DATA_DIR: join(dataDir, 'interrupted') } as NodeJS.ProcessEnv;
    delete env.KAFKA_BROKERS;
    delete env.ES_URL;
    const run = runNeon(['start', '--port', '0', '--no-live'], env);
    try {
      // Interrupted mid-replay with a backlog: the stages hold in-flight records and the model is busy.
      // (How deep the backlog gets depends on the machine's speed; any backlog is in-flight work.)
      const [, replayed, total] = await run.waitFor(/replayed (\d+)\/(\d+) \(.*backlog [1-9]/, 240_000);
      run.kill('SIGINT');
      expect(Number(replayed)).toBeLessThan(Number(total));
      // Draining would take as long as the backlog; embedded mode drops it and exits at once.
      expect(await run.exited).toBe(0);
      expect(run.output()).toContain('in-flight work is dropped, not drained');
      const afterSignal = run.output().slice(run.output().indexOf('SIGINT'));
      expect(afterSignal).not.toMatch(/dead-lettered|stage failed|unexpected failure|terminate called|did not stop/);
      // Nothing is drained or redelivered in embedded mode, and it does not say otherwise.
      expect(afterSignal).not.toMatch(/draining|redelivered/);
    } finally {
      if (run.running()) run.kill('SIGKILL');
    }
  });

  it('cluster: the same pipeline on real Kafka and Elasticsearch', async () => {
    const topicPrefix = `${freshIndex('e2e')}.`;
    const indexPrefix = freshIndex('e2e');
    const env = {
      ...process.env,
      NEON_DATA_DIR: join(dataDir, 'cluster'),
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      ES_URL: inject('elasticsearchUrl'),
      NEON_TOPIC_PREFIX: topicPrefix,
      NEON_INDEX_PREFIX: indexPrefix,
    } as NodeJS.ProcessEnv;
    const run = runNeon(['start', '--cluster', '--port', '0', '--limit', LIMIT, '--no-live'], {
      ...env,
      // `ask`, `topics` and `entities` below talk to the running service, not to the cluster.
      KAFKA_BROKERS: env.KAFKA_BROKERS,
    });
    const cliEnv: NodeJS.ProcessEnv = { ...env };
    delete cliEnv.KAFKA_BROKERS;
    delete cliEnv.ES_URL;
    try {
      await exercise(run, cliEnv, 'cluster');
    } finally {
      if (run.running()) run.kill('SIGKILL');
      const kafka = new Kafka({ brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(topicPrefix));
      await admin.deleteTopics({ topics }).catch(() => undefined);
      await admin.disconnect();
      const es = new Client({ node: inject('elasticsearchUrl'), headers: inject('elasticsearchHeaders') });
      for (const row of await es.cat.indices({ index: `${indexPrefix}-*`, format: 'json', h: 'index' })) {
        await es.indices.delete({ index: row.index! }, { ignore: [404] });
      }
      for (const kind of ['chunks', 'interactions']) {
        await es.indices.deleteIndexTemplate({ name: `${indexPrefix}-${kind}-monthly` }, { ignore: [404] });
      }
      await es.close();
    }
  });
});

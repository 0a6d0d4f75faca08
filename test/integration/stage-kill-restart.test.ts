import type { Client } from '@elastic/elasticsearch';
import { useLiveClients } from '../harness/live-clients.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { documentIds, encodeArticle, sampleArticle } from '../../devkit/passthrough-stage.js';
import { testKafka } from '../harness/clients.js';
import { assertCommittedToEnd, assertExactDocuments, committedToEnd, waitUntil } from '../harness/invariants.js';
import { passthroughScenario, produce } from '../../devkit/passthrough-scenario.js';

/**
 * At-least-once through crashes: the stage runs as a child process and is killed with SIGKILL at
 * random points three times (no shutdown hook runs, nothing is flushed), then restarted. Whatever
 * was in flight is redelivered; deterministic document ids make the redelivery harmless.
 */

const live = useLiveClients();

interface Child {
  process: ChildProcess;
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

function startChild(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'devkit/passthrough-stage.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { process: child, ready, exited, output: () => output };
}

/** Documents whose `_version` is above 1: written again because their input was redelivered. */
async function countRewritten(client: Client, index: string): Promise<number> {
  let rewritten = 0;
  let after: (string | number)[] | undefined;
  for (;;) {
    const page = await client.search({
      index,
      size: 5000,
      version: true,
      _source: false,
      sort: [{ doc_id: 'asc' }],
      ...(after ? { search_after: after } : {}),
    });
    const hits = page.hits.hits;
    if (hits.length === 0) return rewritten;
    rewritten += hits.filter((hit) => (hit._version ?? 1) > 1).length;
    after = hits[hits.length - 1]!.sort as (string | number)[];
  }
}

describe('stage killed with SIGKILL and restarted', () => {
  it('ends with exactly the expected documents after three kills, and stops gracefully on SIGTERM', async () => {
    const s = await passthroughScenario(live.admin, live.es, live.cleanup, 'kill');
    const total = 15_000;
    const articles = Array.from({ length: total }, (_, i) => sampleArticle(i));
    await produce(
      testKafka(),
      s.input,
      articles.map((a) => ({ key: a.id, ...encodeArticle(a) })),
    );
    const env = {
      KAFKA_BROKERS: inject('kafkaBrokers').join(','),
      ES_URL: inject('elasticsearchUrl'),
      INPUT_TOPIC: s.input,
      INDEX: s.index,
      GROUP_ID: s.group,
      DLQ_TOPIC: s.dlq,
      // A killed member's partitions move on when its session expires; 10 s keeps the test short.
      SESSION_TIMEOUT_MS: '10000',
    };
    const expected = articles.flatMap((a) => documentIds(a.id));
    const observations: string[] = [];
    for (let kill = 1; kill <= 3; kill++) {
      const before = (await live.es.count({ index: s.index })).count;
      const spawned = Date.now();
      const child = startChild(env);
      await child.ready;
      // Wait for this run to make progress (or find nothing left to do: an earlier run may have
      // indexed everything before it was killed), then kill it at a random moment shortly after.
      await waitUntil(
        async () => {
          await live.es.indices.refresh({ index: s.index });
          const count = (await live.es.count({ index: s.index })).count;
          return count > before || count === expected.length;
        },
        60_000,
        `progress in run ${kill}`,
      );
      const progressAfter = Date.now() - spawned;
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 1200));
      child.process.kill('SIGKILL');
      const exit = await child.exited;
      expect(exit.signal).toBe('SIGKILL');
      const after = (await live.es.count({ index: s.index })).count;
      observations.push(
        `run ${kill}: first new document ${progressAfter} ms after spawn; killed with ${after}/${expected.length} documents`,
      );
    }
    const final = startChild(env);
    await final.ready;
    await waitUntil(
      () => committedToEnd(live.admin, s.group, s.input),
      120_000,
      'all offsets committed after the kills',
    );
    final.process.kill('SIGTERM');
    const stopStarted = Date.now();
    const exit = await final.exited;
    const stopMs = Date.now() - stopStarted;
    expect(exit.code, final.output().slice(-2000)).toBe(0);
    expect(stopMs).toBeLessThan(30_000);

    await assertExactDocuments(live.es, s.index, expected);
    await assertCommittedToEnd(live.admin, s.group, s.input);
    const rewritten = await countRewritten(live.es, s.index);
    observations.push(
      `final run: all committed; SIGTERM stop took ${stopMs} ms; documents ${expected.length}, re-written by redelivery: ${rewritten}`,
    );
    process.stderr.write(`[kill test] ${observations.join('\n[kill test] ')}\n`);
  });
});

/**
 * The dashboard shows hostile news as text. Articles whose titles, texts, sources, addresses and
 * entity names carry markup and script (`<img … onerror>`, `<script>`, `"><svg onload>`, CR/LF)
 * go through the product's real pipeline (test/harness/live-dashboard-server.ts: every stage on the
 * embedded transport and datastore) until they are searchable and the hostile names spike; then a
 * real Chromium opens the dashboard served by the product's API and walks through the digest, the
 * alerts, the entity and a cited answer. A `javascript:` address never gets that far: intake and
 * the record codec both refuse it, which is checked too.
 *
 * The page's Content-Security-Policy refuses inline scripts and handlers, so markup that reached the
 * DOM would mostly show as a CSP refusal on the console rather than run: the console, the elements'
 * attributes and the links are checked as well as `window.__pwned`.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArticleInput } from '../../processors/intake/article-input.js';
import type { Article } from '../../schemas/records.generated.js';
import { launchBrowser, openPage, screenshot, type OpenedPage } from '../harness/browser.js';
import { startLiveDashboard, type IngestResult, type LiveDashboard } from '../harness/live-dashboard-server.js';

const IMG = '<img src=x onerror=window.__pwned=1>';
const SCRIPT = '<script>window.__pwned=1</script>';
const SVG = '"><svg onload=window.__pwned=1>';
const ALERT = '<img src=x onerror=alert(1)>';
/** Entity names as the recogniser reads them from the texts below: markup without spaces stays in a name. */
const ZORVATH = 'Zorvath<svg/onload=window.__pwned=1>Holdings';
const KALMIR = 'Kalmir"><img/src/onerror=window.__pwned=1>Industries';
const VELTRIX = 'Velt<script>window.__pwned=1</script>rix Labs';
const JAVASCRIPT_URL = 'javascript:window.__pwned=1';
/** A real http(s) address that still carries markup, as another producer of the topic could write it. */
const RAW_URL = `https://wire.example/zorvath/raw"><svg onload=window.__pwned=1>`;

const DAY = 86_400_000;
const FIRST_DAY = Date.UTC(2025, 1, 1);
const BURST_DAY = Date.UTC(2025, 2, 3);
const NOW = Date.UTC(2025, 2, 10);

/** A deterministic stream of numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const PEOPLE = ['Anna Berglund', 'Quorin Delacroix', 'Marta Voss', 'Lisa Okafor', 'Ilse Varga', 'Tomas Reyes'];
const PLACES = ['Norland', 'Brenmoor', 'Valdor', 'Oslo', 'Paris', 'Lisbon'];
const BODIES = ['Helio Transit', 'Tarsk Energy', 'the Port Authority', 'the Harbour Council', 'Norland Rail'];
const VERBS = ['met', 'criticised', 'praised', 'sued', 'hired', 'thanked', 'visited', 'warned', 'funded'];
const TOPICS = [
  'the new tram line',
  'a fishing quota',
  'the winter budget',
  'a bridge repair',
  'the school reform',
  'a wind farm',
  'the water tariff',
  'a hospital wing',
  'the ferry timetable',
];

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Ordinary news for a month before the burst, so the feed has volume and the names a history. */
function background(): ArticleInput[] {
  const random = seeded(7);
  const inputs: ArticleInput[] = [];
  for (let day = FIRST_DAY; day < BURST_DAY; day += DAY) {
    for (let n = 0; n < 5; n++) {
      const sentences = Array.from({ length: 5 }, () => {
        const who = pick(random, [...PEOPLE, ...BODIES]);
        const whom = pick(random, [...PEOPLE, ...BODIES]);
        return (
          `${who} ${pick(random, VERBS)} ${whom} in ${pick(random, PLACES)} over ${pick(random, TOPICS)}, ` +
          `${2 + Math.floor(random() * 900)} residents were told.`
        );
      });
      inputs.push({
        url: `https://daily.example/${new Date(day).toISOString().slice(0, 10)}/story-${n}`,
        title: sentences[0]!.slice(0, 60),
        text: sentences.join(' '),
        published_at: day + (8 + n * 2) * 3_600_000,
      });
    }
  }
  return inputs;
}

/** Two days of stories about the hostile names: enough for Zorvath's to spike. */
function burst(): ArticleInput[] {
  const random = seeded(11);
  const inputs: ArticleInput[] = [];
  for (let d = 0; d < 2; d++) {
    for (let n = 0; n < 10; n++) {
      const at = BURST_DAY + d * DAY + (7 + n) * 3_600_000;
      const topic = pick(random, TOPICS);
      inputs.push({
        url: `https://news.example/zorvath/${d}-${n}?ref=${encodeURIComponent(SVG)}`,
        title: `${ZORVATH} and ${topic} ${n % 2 === 0 ? IMG : SCRIPT} ${ALERT}`,
        text: [
          `On ${pick(random, ['Monday', 'Tuesday'])}, ${ZORVATH} announced a merger with ${KALMIR} in ${pick(random, PLACES)}.`,
          `Officials from ${VELTRIX} said ${SVG} the deal covered ${topic} and ${1 + Math.floor(random() * 90)} sites.`,
          `${pick(random, PEOPLE)} ${pick(random, VERBS)} ${ZORVATH} over ${topic}. ${IMG} ${SCRIPT}`,
          `${ZORVATH} expects ${100 + Math.floor(random() * 900)} new jobs, ${pick(random, PEOPLE)} said.`,
        ].join(' '),
        published_at: at,
        source: `Wire ${IMG}`,
      });
    }
  }
  return inputs;
}

/** Records a producer other than intake could write: a raw address with markup, CR/LF in title and source. */
function rawRecords(): Article[] {
  return [0, 1].map((i) => ({
    id: `raw-zorvath-${i}`,
    url: `${RAW_URL}${i}`,
    canonical_url: `${RAW_URL}${i}`,
    source: `Wire\r\n${IMG}`,
    title: `Raw ${SVG}\r\nsecond line ${SCRIPT}`,
    text:
      `${ZORVATH} signed the merger contract with ${KALMIR} in Norland.\r\n${SCRIPT} ` +
      `The contract of ${ZORVATH} runs for ${5 + i} years. ${IMG}`,
    published_at: BURST_DAY + DAY + (20 + i) * 3_600_000,
    fetched_at: NOW,
    language: null,
    version: 1,
  }));
}

let browser: Browser;
let live: LiveDashboard;
let ingested: IngestResult;
let javascriptRecordError: unknown;
const opened: OpenedPage[] = [];

beforeAll(async () => {
  [browser, live] = await Promise.all([launchBrowser(), startLiveDashboard()]);
  const inputs = [
    ...background(),
    ...burst(),
    // A javascript: address, as a feed could carry it.
    { url: JAVASCRIPT_URL, title: `Click ${IMG}`, text: `${ZORVATH} news for everyone here.`, published_at: BURST_DAY },
  ].sort((a, b) => Number(a.published_at) - Number(b.published_at));
  ingested = await live.ingest(inputs, NOW);
  await live.publishRecords(rawRecords());
  // The same address written straight onto the topic: the record codec is the second gate.
  javascriptRecordError = await live
    .publishRecords([{ ...rawRecords()[0]!, id: 'raw-javascript', url: JAVASCRIPT_URL, canonical_url: JAVASCRIPT_URL }])
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  await live.settle(120_000);
}, 300_000);

afterAll(async () => {
  for (const { context } of opened) await context.close().catch(() => undefined);
  await browser.close();
  await live.close();
});

interface Attack {
  pwned: string;
  dialogs: string[];
}

async function visit(): Promise<OpenedPage & { attack: () => Promise<Attack> }> {
  const page = await openPage(browser, `${live.url}/`);
  opened.push(page);
  const dialogs: string[] = [];
  page.page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return {
    ...page,
    attack: async () => ({
      pwned: await page.page.evaluate(() => typeof (globalThis as { __pwned?: unknown }).__pwned),
      dialogs,
    }),
  };
}

/**
 * What data could have planted in the DOM: inline handlers (`on*` attributes), links whose address
 * is not http(s) once resolved, scripts not served by the dashboard itself, and elements a payload
 * names (`svg` with onload, `img` with src=x).
 */
function domProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    interface El {
      tagName: string;
      attributes: ArrayLike<{ name: string; value: string }>;
      getAttribute(name: string): string | null;
    }
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<El>; baseURI: string } })
      .document;
    const problems: string[] = [];
    for (const el of Array.from(doc.querySelectorAll('*'))) {
      for (const attribute of Array.from(el.attributes)) {
        if (attribute.name.toLowerCase().startsWith('on')) {
          problems.push(`<${el.tagName.toLowerCase()}> has ${attribute.name}="${attribute.value}"`);
        }
      }
    }
    for (const link of Array.from(doc.querySelectorAll('a[href]'))) {
      const href = link.getAttribute('href') ?? '';
      const protocol = new URL(href, doc.baseURI).protocol;
      if (protocol !== 'http:' && protocol !== 'https:') problems.push(`a link to ${href}`);
    }
    for (const script of Array.from(doc.querySelectorAll('script'))) {
      const src = script.getAttribute('src') ?? '';
      if (!src.startsWith('/web/') && !src.startsWith('web/')) problems.push(`a script ${src || '(inline)'}`);
    }
    for (const img of Array.from(doc.querySelectorAll('img'))) {
      if (img.getAttribute('src') === 'x') problems.push('an <img src=x>');
    }
    return problems;
  });
}

async function expectUnharmed(opened: Awaited<ReturnType<typeof visit>>): Promise<void> {
  expect(await opened.attack()).toEqual({ pwned: 'undefined', dialogs: [] });
  expect(await domProblems(opened.page)).toEqual([]);
  expect(opened.problems.unexpected()).toEqual([]);
}

describe('hostile news through the real pipeline', () => {
  it('is refused at the gates where it must be, and otherwise kept as text', async () => {
    // A javascript: address never becomes an article: intake refuses it, and so does the codec.
    expect(ingested.refused).toEqual([expect.objectContaining({ reason: 'invalid_url' })]);
    expect(ingested.refused[0]!.input.url).toBe(JAVASCRIPT_URL);
    expect(String(javascriptRecordError)).toMatch(/url: must be an absolute http\(s\) URL/);

    const entities = (await (await fetch(`${live.url}/v1/entities?q=zorvath&limit=20`)).json()) as {
      entities: { name: string }[];
    };
    expect(entities.entities.map((e) => e.name)).toContain(ZORVATH);
    const spikes = (await (await fetch(`${live.url}/v1/spikes?state=all&limit=100`)).json()) as {
      spikes: { entity_name: string }[];
    };
    // All three hostile names spike on the burst's second day; the digest folds them into one story.
    expect(spikes.spikes.map((e) => e.entity_name)).toEqual(expect.arrayContaining([ZORVATH, KALMIR, VELTRIX]));
  });

  it('shows the digest and the alerts of hostile names as text', async () => {
    const visited = await visit();
    const { page } = visited;
    // The three hostile alerts and the digest's story are drawn; every alert's details opened.
    await expect.poll(() => page.locator('#spike-list > li').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    await expect.poll(() => page.locator('#spike-digest > li').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    for (const summary of await page.locator('#spike-list details summary').all()) await summary.click();
    await expectUnharmed(visited);
    // The alerts arrive over the live stream too (through the harness's proxy, like every request).
    await expect.poll(() => page.locator('#spike-connection').innerText(), { timeout: 10_000 }).toBe('Live');
    expect(live.requests.some((r) => r.path === '/v1/spikes/stream')).toBe(true);

    expect(await page.locator('#spike-list .entity-link').allInnerTexts()).toEqual(
      expect.arrayContaining([ZORVATH, KALMIR, VELTRIX]),
    );
    // The digest's story: its lead as a link, the names folded in as text.
    const digest = await page.locator('#spike-digest').innerText();
    for (const name of [ZORVATH, KALMIR, VELTRIX]) expect(digest).toContain(name);
    // The alerts' first interactions, as text: an alert carries those extraction had produced when
    // it was raised (which of extraction and the spike stage gets there first depends on timing),
    // so the page is held to what the API's alerts carry (the timeline test below shows them all).
    const listed = (await (await fetch(`${live.url}/v1/spikes?state=all&limit=100`)).json()) as {
      spikes: { latest: { first_interactions: { text: string }[] } }[];
    };
    const statements = listed.spikes.flatMap((e) => e.latest.first_interactions.map((i) => i.text));
    const flat = (text: string): string => text.replace(/\s+/g, ' ');
    const alerts = await page.locator('#spike-list').innerText();
    for (const statement of statements) expect(flat(alerts)).toContain(flat(statement));
    if (statements.some((t) => t.includes(ZORVATH))) {
      expect(alerts).toContain(`${ZORVATH} announced a merger with ${KALMIR}`);
    }
    // An alert's entity is a way in: the entity panel shows the name as text.
    await page.locator('#spike-list .entity-link', { hasText: 'Zorvath' }).first().click();
    await expect.poll(() => page.locator('#entity-name').innerText(), { timeout: 10_000 }).toBe(ZORVATH);
    await screenshot(page, 'hostile-01-spikes');
    await expectUnharmed(visited);
  });

  it('shows a hostile entity, its timeline and sources as text', async () => {
    const visited = await visit();
    const { page } = visited;
    const input = page.getByRole('combobox', { name: 'Find an entity' });
    await input.pressSequentially('zorv', { delay: 30 });
    await expect
      .poll(() => page.locator('#entity-options [role=option]').count(), { timeout: 10_000 })
      .toBeGreaterThan(0);
    await expectUnharmed(visited);
    expect(await page.locator('#entity-options [role=option] .option-name').allInnerTexts()).toEqual([ZORVATH]);
    await input.press('ArrowDown');
    await input.press('Enter');
    await expect.poll(() => page.locator('#timeline > li').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    await expectUnharmed(visited);
    expect(await page.locator('#entity-name').innerText()).toBe(ZORVATH);
    const timeline = await page.locator('#timeline').innerText();
    expect(timeline).toContain(`${ZORVATH} announced a merger with ${KALMIR}`);
    expect(timeline).toContain(IMG);
    await screenshot(page, 'hostile-02-entity');
  });

  it('answers a question citing the hostile articles, all of it as text', async () => {
    const visited = await visit();
    const { page } = visited;
    await page.getByLabel('Question').fill('What did Zorvath Holdings announce with Kalmir Industries?');
    await page.getByLabel('As of date (UTC)').fill('2025-03-05');
    await page.getByLabel('Store').selectOption('both');
    await page.getByLabel('Items (k)').fill('10');
    await page.getByLabel('Question').press('Enter');
    await expect.poll(() => page.locator('#answer a.cite').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await expectUnharmed(visited);
    expect(live.requests.filter((r) => r.path === '/v1/ask').at(-1)?.query).toMatchObject({
      q: 'What did Zorvath Holdings announce with Kalmir Industries?',
      date: '2025-03-05',
      store: 'both',
    });
    const answer = await page.locator('#answer').innerText();
    expect(answer).toMatch(/Zorvath/);
    const items = await page.locator('#items').innerText();
    for (const hostile of [ZORVATH, IMG, SCRIPT, SVG]) expect(items).toContain(hostile);
    // The raw records' titles and addresses: CR/LF and markup shown, never parsed.
    expect(items).toContain(`Raw ${SVG}`);
    expect(items).toContain(`second line ${SCRIPT}`);
    const hrefs = await page
      .locator('#answer a.cite, #citations a, #items a')
      .evaluateAll((links: unknown[]) =>
        links.map((l) => (l as { getAttribute(n: string): string | null }).getAttribute('href') ?? ''),
      );
    expect(hrefs.length).toBeGreaterThan(0);
    // The raw address is a link only as the parsed, escaped URL.
    expect(hrefs.some((h) => h.startsWith('https://wire.example/zorvath/raw%22%3E%3Csvg'))).toBe(true);
    await screenshot(page, 'hostile-03-answer');
  });
});

/**
 * The dashboard in a real Chromium against a query service on a loopback port: the real spike
 * routes and server-sent events over a `SpikeHub`, the real status route, the dashboard's own
 * routes, and fixture answers for entities, mentions, timelines and questions
 * (test/harness/dashboard-fixture-server.ts). Screenshots of every step go to
 * test-artifacts/screenshots/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accessibilityProblems,
  attributeOfAll,
  axeViolations,
  focusedElement,
  horizontalOverflow,
  launchBrowser,
  openPage,
  screenshot,
  sessionValue,
  type OpenedPage,
} from '../harness/browser.js';
import {
  FIXTURE_ITEMS,
  fixtureAlert,
  FIXTURE_ENTITIES,
  liveAlert,
  m23DailyCounts,
  startDashboardFixture,
  type DashboardFixture,
} from '../harness/dashboard-fixture-server.js';

const DAY = 86_400_000;
const API_KEY = 'fixture-key-7f3a';

let browser: Browser;
let open: DashboardFixture;
let keyed: DashboardFixture;
const opened: OpenedPage[] = [];

beforeAll(async () => {
  [browser, open, keyed] = await Promise.all([
    launchBrowser(),
    startDashboardFixture(),
    startDashboardFixture({ apiKeys: [API_KEY] }),
  ]);
});

afterAll(async () => {
  for (const { context } of opened) await context.close().catch(() => undefined);
  await browser.close();
  await Promise.all([open.close(), keyed.close()]);
});

async function visit(fixture: DashboardFixture, options: Parameters<typeof openPage>[2] = {}): Promise<OpenedPage> {
  const page = await openPage(browser, `${fixture.url}/`, options);
  opened.push(page);
  return page;
}

const texts = (page: Page, selector: string): Promise<string[]> => page.locator(selector).allInnerTexts();

async function pickEntity(page: Page, typed: string, name: string): Promise<void> {
  const input = page.getByRole('combobox', { name: 'Find an entity' });
  await input.fill('');
  await input.pressSequentially(typed, { delay: 30 });
  await expect.poll(() => texts(page, '#entity-options [role=option] .option-name')).toContain(name);
  const names = await texts(page, '#entity-options [role=option] .option-name');
  for (let i = 0; i <= names.indexOf(name); i++) await input.press('ArrowDown');
  await expect(input.getAttribute('aria-activedescendant')).resolves.toMatch(/^entity-option-/);
  await input.press('Enter');
  await expect.poll(() => page.locator('#entity-name').innerText()).toBe(name);
}

async function ask(
  page: Page,
  fields: { q: string; date?: string; strategy?: string; store?: string; k?: number; hops?: 1 | 2 },
) {
  await page.getByLabel('Question').fill(fields.q);
  await page.getByLabel('As of date (UTC)').fill(fields.date ?? '');
  // Left as the page offers it unless asked: the request then shows the dashboard's default.
  if (fields.strategy !== undefined) await page.getByLabel('Strategy').selectOption(fields.strategy);
  await page.getByLabel('Related entities').selectOption(String(fields.hops ?? 1));
  await page.getByLabel('Store').selectOption(fields.store ?? 'chunks');
  await page.getByLabel('Items (k)').fill(String(fields.k ?? 10));
  // Enter in the question submits, as a keyboard user would.
  await page.getByLabel('Question').press('Enter');
}

describe('the dashboard', () => {
  it('lists the spike episodes open first, then shows and announces new alerts as they arrive', async () => {
    const { page, problems } = await visit(open);
    await expect.poll(() => page.locator('#spike-list > li').count()).toBe(4);
    expect(await texts(page, '#spike-list .entity-link')).toEqual(['M23', 'Goma', 'Félix Tshisekedi', 'M23']);
    expect(await attributeOfAll(page.locator('#spike-list > li'), 'data-state')).toEqual([
      'ONGOING',
      'STARTED',
      'ENDED',
      'ENDED',
    ]);
    await expect.poll(() => page.locator('#spike-connection').innerText()).toBe('Live');
    await expect.poll(() => page.locator('#status-fields').innerText()).toContain('congo-jan-2025');
    // The default view: the latest day's digest, its stories ranked within the alert budget.
    await expect.poll(() => texts(page, '#spike-digest .entity-link')).toEqual(['Goma']);
    expect(await page.locator('#spike-digest-date').inputValue()).toBe('2025-01-26');
    expect(await page.locator('#spike-digest-summary').innerText()).toContain('2025-01-26');
    await screenshot(page, '01-spikes-loaded-desktop');

    // A new episode, pushed as the spike stage would: it comes first and is announced politely.
    open.hub.apply(liveAlert());
    await expect.poll(() => page.locator('#spike-list > li').count()).toBe(5);
    expect(await texts(page, '#spike-list > li:first-child .entity-link')).toEqual(['Rwanda']);
    expect(await page.locator('#spike-list > li').first().getAttribute('class')).toContain('is-new');
    expect(await page.locator('#spike-list > li').first().getAttribute('data-state')).toBe('STARTED');
    // Delivered within the budget: the digest moves on to the new story's day.
    await expect.poll(() => texts(page, '#spike-digest .entity-link')).toEqual(['Rwanda']);
    expect(await page.locator('#spike-digest > li').first().innerText()).toContain('Pushed');
    const announcer = page.locator('#spike-announcer');
    expect(await announcer.getAttribute('aria-live')).toBe('polite');
    await expect.poll(() => announcer.textContent()).toContain('New spike: Rwanda, 27 mentions');

    // A state of a known episode updates it in place (no duplicate) and moves it to the top.
    const goma = FIXTURE_ENTITIES.find((e) => e.id === 'e-goma')!;
    open.hub.apply(
      fixtureAlert({
        entity: goma,
        started: '2025-01-26',
        state: 'ENDED',
        windowEnd: '2025-01-30',
        observed: 9,
        score: 0.6,
      }),
    );
    await expect.poll(() => announcer.textContent()).toContain('Spike ended: Goma');
    expect(await page.locator('#spike-list > li').count()).toBe(5);
    expect(await page.locator('#spike-list > li').first().getAttribute('data-state')).toBe('ENDED');
    expect(await texts(page, '#spike-list > li:first-child .entity-link')).toEqual(['Goma']);

    // A dropped stream is resumed by the browser with Last-Event-ID: what happened meanwhile arrives.
    const streams = (): number => open.requests.filter((r) => r.path === '/v1/spikes/stream').length;
    const before = streams();
    open.dropConnections();
    const minova = FIXTURE_ENTITIES.find((e) => e.id === 'e-minova')!;
    open.hub.apply(
      fixtureAlert({
        entity: minova,
        started: '2025-01-22',
        state: 'STARTED',
        windowEnd: '2025-01-23',
        observed: 8,
        score: 3.1,
      }),
    );
    await expect
      .poll(() => texts(page, '#spike-list > li:first-child .entity-link'), { timeout: 15_000 })
      .toEqual(['Minova']);
    const resumed = open.requests.filter((r) => r.path === '/v1/spikes/stream').slice(before);
    expect(resumed.length).toBeGreaterThan(0);
    expect(Number(resumed[0]!.lastEventId)).toBeGreaterThan(0);
    await expect.poll(() => page.locator('#spike-connection').innerText()).toBe('Live');
    await expect.poll(() => announcer.textContent()).toContain('New spike: Minova');

    // "Open only" hides the ended ones.
    await page.getByLabel('Show', { exact: true }).selectOption('open');
    expect(await texts(page, '#spike-list .entity-link')).toEqual(['Minova', 'Rwanda', 'M23']);
    await page.getByLabel('Show', { exact: true }).selectOption('all');
    await screenshot(page, '02-spike-arrived-live');

    // The status strip is polled: by now it has been asked more than once and has moved on.
    await expect
      .poll(() => open.requests.filter((r) => r.path === '/v1/status').length, { timeout: 15_000 })
      .toBeGreaterThanOrEqual(2);
    const strip = await page.locator('#status-fields').innerText();
    for (const text of [
      'embedded',
      'Chunks',
      'Interactions',
      'all-MiniLM-L6-v2',
      'none (extractive answers)',
      'offline',
    ]) {
      expect(strip).toContain(text);
    }
    // (The stream cut on purpose above is the only failed load.)
    expect(problems.unexpected(/ERR_INCOMPLETE_CHUNKED_ENCODING/)).toEqual([]);
  });

  it('finds an entity by typing and shows its mentions with spike bands, and its timeline with sources', async () => {
    const { page, problems } = await visit(open);
    await pickEntity(page, 'm2', 'M23');

    const chart = page.locator('#mentions-chart svg');
    await expect.poll(() => chart.locator('.bar').count()).toBeGreaterThan(0);
    const request = open.requests.filter((r) => r.path === '/v1/entities/e-m23/mentions').at(-1)!;
    expect(request.query.granularity).toBe('day');
    const from = Date.parse(request.query.from!);
    const to = Date.parse(request.query.to!);
    const days = Math.floor(to / DAY) - Math.floor(from / DAY) + 1;
    // One bar per day of the period, days without mentions included (the API leaves them out).
    expect(await chart.locator('.bar').count()).toBe(days);
    const counts = (await attributeOfAll(chart.locator('.bar'), 'data-count')).map(Number);
    const expected = m23DailyCounts().filter((c) => c.start >= Math.floor(from / DAY) * DAY && c.start <= to);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(expected.reduce((a, c) => a + c.count, 0));
    expect(counts.filter((c) => c === 0).length).toBe(days - expected.length);
    // Its two spike episodes by day, the open one shaded to the end.
    expect(await chart.locator('.spike-band').count()).toBe(2);
    expect(await chart.locator('.spike-band.open').count()).toBe(1);
    // Text alternatives: the SVG is an image named by its title and description, and a table.
    expect(await chart.getAttribute('role')).toBe('img');
    // (The accessible name and description, as Chromium computes them for assistive technology.)
    const snapshot = await chart.ariaSnapshot();
    expect(snapshot).toContain('img "Mentions of M23 per day, 2024-11-25 to 2025-01-30 (UTC)');
    expect(snapshot).toContain('2 spike episodes');
    expect(await page.locator('#mentions-table tbody tr').count()).toBe(days);
    const axisLabels = await chart.locator('.x-axis text').allTextContents();
    expect(axisLabels).toContain('Date (UTC), per day');
    expect(axisLabels.some((t) => /^\d{1,2} (Nov|Dec|Jan)$/.test(t))).toBe(true);

    const timeline = FIXTURE_ITEMS.filter((i) => i.kind === 'interaction' && i.entity_ids.includes('e-m23'));
    await expect.poll(() => page.locator('#timeline > li').count()).toBe(timeline.length);
    expect(await page.locator('#timeline > li').first().innerText()).toContain(timeline.at(-1)!.text);
    const links = await attributeOfAll(page.locator('#timeline a'), 'href');
    expect(links).toEqual(timeline.map((i) => i.url).reverse());
    await screenshot(page, '03-entity-m23-desktop');

    // An alert's entity is a way in too: it selects the entity and moves focus to it.
    await page.locator('#spike-list .entity-link', { hasText: 'Goma' }).first().click();
    await expect.poll(() => page.locator('#entity-name').innerText()).toBe('Goma');
    await expect.poll(async () => (await focusedElement(page)).id).toBe('entity-name');
    await expect.poll(() => open.requests.some((r) => r.path === '/v1/entities/e-goma/timeline')).toBe(true);
    expect(open.requests.some((r) => r.path === '/v1/entities/e-goma')).toBe(true);
    await expect.poll(() => page.locator('#mentions-chart .spike-band').count()).toBe(1);

    // Nothing matches: said next to the box.
    await page.getByRole('combobox', { name: 'Find an entity' }).fill('zzzz');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    await expect.poll(() => page.locator('#entity-error').innerText()).toContain('No entity matches “zzzz”');
    expect(problems.unexpected()).toEqual([]);
  });

  it('asks a question as of a date and shows the cited answer and the items on a time axis', async () => {
    const { page, problems } = await visit(open);
    await ask(page, { q: 'Goma M23', date: '2025-01-28', store: 'both', k: 6, hops: 2 });
    await expect.poll(() => page.locator('#answer p').count()).toBeGreaterThan(1);
    const request = open.requests.filter((r) => r.path === '/v1/ask').at(-1)!;
    expect(request.query).toEqual({
      q: 'Goma M23',
      date: '2025-01-28',
      strategy: 'tempralm',
      store: 'both',
      k: '6',
      hops: '2',
    });

    // Every [n] of the answer is a link to its source, labelled with its date (the lead sentence and
    // three more: four of the six items).
    const cites = page.locator('#answer a.cite');
    expect(await cites.count()).toBe(4);
    for (const label of await attributeOfAll(cites, 'aria-label')) {
      expect(label).toMatch(/^Source \d+, (interaction|chunk) published 2025-01-\d\d \d\d:\d\d UTC/);
    }
    for (const href of await attributeOfAll(cites, 'href')) {
      expect(href).toMatch(/^(https:\/\/(news|wire)\.example\/|#ask-item-\d+$)/);
    }
    expect(await page.locator('#citations > li').count()).toBe(4);

    // The items on the time axis: one point each, nothing after the query time, the query time marked.
    const points = page.locator('#items-axis .axis-point');
    expect(await points.count()).toBe(6);
    expect(await page.locator('#items-axis .query-time text').textContent()).toBe('as of 2025-01-28 23:59 UTC');
    const published = await attributeOfAll(page.locator('#items time'), 'datetime');
    expect(published).toHaveLength(6);
    for (const at of published) expect(Date.parse(at!)).toBeLessThanOrEqual(Date.parse('2025-01-28T23:59:59.999Z'));
    // Focusing a point (keyboard) shows its text.
    await points.first().focus();
    await expect.poll(() => page.locator('#axis-tip').isVisible()).toBe(true);
    const firstItem = await page.locator('#items > li').first().locator('.item-text').innerText();
    expect(await page.locator('#axis-tip').innerText()).toContain(firstItem);
    const details = await page.locator('#query-details').innerText();
    expect(details).toContain('Goma M23, January 28, 2025');
    expect(details).toMatch(/retrieve 11\.8 ms/);
    expect(details).not.toContain('Time words');
    await screenshot(page, '04-ask-answer-desktop');

    // The question's own time words: how they were read is shown with the answer and the details.
    await ask(page, { q: 'Goma M23 last week', date: '2025-01-28', store: 'both', k: 6 });
    await expect.poll(() => page.locator('#query-details').innerText()).toContain('Time words');
    expect(await page.locator('#query-details').innerText()).toMatch(/2025-01-20.*2025-01-26/);
    expect(await page.locator('#answer-meta').innerText()).toMatch(/Time: .*2025-01-20/);

    // Failures are shown next to the form, with the API's message.
    await ask(page, { q: 'outage please' });
    await expect.poll(() => page.locator('#ask-error').innerText()).toContain('the datastore did not answer');
    expect(await page.locator('#ask-result').isVisible()).toBe(false);
    await page.getByLabel('Question').fill('');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await expect.poll(() => page.locator('#ask-error').innerText()).toContain('Type a question.');
    await screenshot(page, '05-ask-error-desktop');
    expect(problems.unexpected(/status of 503/)).toEqual([]);
  });

  it('asks for an API key when the API answers 401, then works with it', async () => {
    const { page, problems } = await visit(keyed);
    const keyInput = page.getByLabel('API key', { exact: true });
    await expect.poll(() => page.locator('#auth').isVisible()).toBe(true);
    await expect.poll(async () => (await focusedElement(page)).id).toBe('auth-key');
    expect(await page.locator('#spike-list > li').count()).toBe(0);
    await screenshot(page, '06-api-key-asked');

    await keyInput.fill('wrong-key');
    await keyInput.press('Enter');
    await expect.poll(() => page.locator('#auth-error').innerText()).toContain('was not accepted');

    await keyInput.fill(API_KEY);
    await keyInput.press('Enter');
    await expect.poll(() => page.locator('#auth').isVisible()).toBe(false);
    await expect.poll(() => page.locator('#spike-list > li').count()).toBe(4);
    await expect.poll(() => page.locator('#spike-connection').innerText()).toBe('Live');
    await expect.poll(() => page.locator('#status-fields').innerText()).toContain('embedded');
    expect(await sessionValue(page, 'neon.apiKey')).toBe(API_KEY);
    // Fetches carry the key as a bearer token; the event stream, which cannot, in its URL.
    const afterKey = keyed.requests.filter((r) => r.authorization === `Bearer ${API_KEY}`);
    expect(afterKey.some((r) => r.path === '/v1/spikes')).toBe(true);
    expect(keyed.requests.some((r) => r.path === '/v1/spikes/stream' && r.query.access_token === API_KEY)).toBe(true);

    keyed.hub.apply(liveAlert());
    await expect.poll(() => texts(page, '#spike-list > li:first-child .entity-link')).toEqual(['Rwanda']);
    await pickEntity(page, 'gom', 'Goma');
    await screenshot(page, '07-api-key-accepted');
    expect(problems.unexpected(/status of 401/)).toEqual([]);
  });

  it('is accessible: labelled controls, landmarks, text alternatives, contrast, keyboard, 320 px', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, problems } = await visit(open, { colorScheme });
      await expect.poll(() => page.locator('#spike-list > li').count()).toBeGreaterThan(0);
      await pickEntity(page, 'm2', 'M23');
      await ask(page, { q: 'Goma M23', date: '2025-01-28', store: 'both', k: 8 });
      await expect.poll(() => page.locator('#items-axis .axis-point').count()).toBe(8);
      await page.locator('#status-stages summary').click();
      await page.locator('#entity details.data-table summary').click();

      expect(await accessibilityProblems(page)).toEqual([]);
      expect(await axeViolations(page)).toEqual([]);
      for (const role of ['banner', 'navigation', 'main', 'contentinfo'] as const) {
        expect(await page.getByRole(role).count(), role).toBeGreaterThan(0);
      }
      for (const heading of ['Spike alerts', 'Entity', 'Ask']) {
        expect(await page.getByRole('region', { name: heading, exact: true }).count(), heading).toBe(1);
      }
      await screenshot(page, `08-everything-${colorScheme}`);
      expect(problems.unexpected()).toEqual([]);
    }

    // The keyboard: the skip link comes first and leads into the main content.
    const { page, problems } = await visit(open, { width: 320, height: 720 });
    await page.keyboard.press('Tab');
    expect((await focusedElement(page)).text).toBe('Skip to main content');
    await page.keyboard.press('Enter');
    expect((await focusedElement(page)).id).toBe('main');

    // 320 px: nothing wider than the screen, charts drawn to fit.
    await expect.poll(() => page.locator('#spike-list > li').count()).toBeGreaterThan(0);
    await pickEntity(page, 'm2', 'M23');
    await ask(page, { q: 'Goma M23', date: '2025-01-28', store: 'both', k: 6 });
    await expect.poll(() => page.locator('#items-axis .axis-point').count()).toBe(6);
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0);
    expect(Number(await page.locator('#mentions-chart svg').getAttribute('width'))).toBeLessThanOrEqual(320);
    await screenshot(page, '09-narrow-320');
    await page.setViewportSize({ width: 375, height: 812 });
    await expect
      .poll(async () => Number(await page.locator('#mentions-chart svg').getAttribute('width')))
      .toBeGreaterThan(300);
    await screenshot(page, '10-phone-375');
    expect(problems.unexpected()).toEqual([]);
  });
});

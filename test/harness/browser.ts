/**
 * A real browser for the dashboard's tests: Debian's Chromium driven by playwright-core (there is
 * no browser download here, so the system's Chromium is used and installed when missing).
 *
 *   const browser = await launchBrowser();
 *   const { page, problems } = await openPage(browser, url);
 *   await screenshot(page, 'spikes-desktop');
 *   expect(await axeViolations(page)).toEqual([]);
 *   expect(problems.unexpected()).toEqual([]);
 *   await browser.close();
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';

/** `NEON_CHROMIUM` may point at another Chromium or Chrome binary. */
export const CHROMIUM_PATH = process.env.NEON_CHROMIUM ?? '/usr/bin/chromium';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SCREENSHOT_DIR = path.join(REPO_ROOT, 'test-artifacts', 'screenshots');

const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-8000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

let installing: Promise<string> | undefined;

/**
 * The Chromium binary, installed with apt-get (as root) when it is missing. Anyone else gets a
 * message saying what to install.
 */
export function ensureChromium(): Promise<string> {
  installing ??= (async () => {
    if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
    if (process.env.NEON_CHROMIUM !== undefined) {
      throw new Error(`NEON_CHROMIUM=${CHROMIUM_PATH} does not exist`);
    }
    if (process.platform !== 'linux' || process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
      throw new Error(
        `The browser tests need Chromium at ${CHROMIUM_PATH}. Install it (Debian/Ubuntu: ` +
          '`sudo apt-get install -y chromium`) or set NEON_CHROMIUM to a Chromium or Chrome binary.',
      );
    }
    for (const args of [['update'], ['install', '-y', '--no-install-recommends', 'chromium']]) {
      const { code, output } = await run('apt-get', args);
      if (code !== 0) {
        throw new Error(`apt-get ${args.join(' ')} failed (exit ${code}) while installing Chromium:\n${output}`);
      }
    }
    if (!existsSync(CHROMIUM_PATH)) throw new Error(`apt-get installed chromium, but ${CHROMIUM_PATH} is not there`);
    return CHROMIUM_PATH;
  })();
  installing.catch(() => {
    installing = undefined;
  });
  return installing;
}

export async function launchBrowser(): Promise<Browser> {
  const executablePath = await ensureChromium();
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** What went wrong in a page: console errors (including CSP refusals), uncaught errors, failed loads. */
export interface PageProblems {
  readonly all: string[];
  /** Everything except what `expected` matches (e.g. the console line of an expected 401). */
  unexpected(...expected: RegExp[]): string[];
}

export interface OpenPageOptions {
  width?: number;
  height?: number;
  colorScheme?: 'light' | 'dark';
  reducedMotion?: 'reduce' | 'no-preference';
}

export interface OpenedPage {
  context: BrowserContext;
  page: Page;
  problems: PageProblems;
}

/** A fresh context (its own storage) and page, with its problems recorded, at `url`. */
export async function openPage(browser: Browser, url: string, options: OpenPageOptions = {}): Promise<OpenedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? 'light',
    reducedMotion: options.reducedMotion ?? 'reduce',
    locale: 'en-GB',
    timezoneId: 'Europe/Paris',
  });
  const page = await context.newPage();
  const all: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      all.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => all.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    const failure = request.failure()?.errorText ?? 'failed';
    // An event stream cut when the page goes away is not a problem of the page.
    if (!failure.includes('ERR_ABORTED')) all.push(`request failed: ${request.url()} ${failure}`);
  });
  await page.goto(url, { waitUntil: 'load' });
  return {
    context,
    page,
    problems: {
      all,
      unexpected: (...expected) => all.filter((line) => !expected.some((pattern) => pattern.test(line))),
    },
  };
}

/** Saves a full-page PNG as `test-artifacts/screenshots/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled' });
  return file;
}

/**
 * An attribute of every element a locator matches, in document order. (Tests are compiled without
 * the DOM's types, so in-page code lives here, typed by hand.)
 */
export function attributeOfAll(locator: Locator, name: string): Promise<(string | null)[]> {
  return locator.evaluateAll(
    (elements: unknown[], attribute: string) =>
      elements.map((element) => (element as { getAttribute(n: string): string | null }).getAttribute(attribute)),
    name,
  );
}

/** The focused element's id, and its text. */
export function focusedElement(page: Page): Promise<{ id: string; text: string }> {
  return page.evaluate(() => {
    const doc = globalThis as unknown as {
      document: { activeElement: { id: string; textContent: string | null } | null };
    };
    const element = doc.document.activeElement;
    return { id: element?.id ?? '', text: (element?.textContent ?? '').trim() };
  });
}

/** A value the page keeps in sessionStorage. */
export function sessionValue(page: Page, key: string): Promise<string | null> {
  return page.evaluate((name: string) => {
    const storage = globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } };
    return storage.sessionStorage.getItem(name);
  }, key);
}

/** How much wider than the viewport the page is (0 or less: no horizontal scrolling). */
export function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

let axeSource: string | undefined;

/**
 * Runs axe-core (WCAG 2.1 A and AA rules and best practices) on the page as it is now. The engine
 * is evaluated through the debugging protocol, which the page's Content-Security-Policy does not
 * govern, so the page needs no exception for it.
 */
export async function axeViolations(page: Page, options: { exclude?: string[] } = {}): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(axeSource);
  return page.evaluate(async (exclude: string[]) => {
    interface AxeResult {
      violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
    }
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<AxeResult> } }).axe;
    const context = exclude.length > 0 ? { exclude: exclude.map((selector) => [selector]) } : { include: [['html']] };
    const result = await axe.run(context, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(' ')),
    }));
  }, options.exclude ?? []);
}

/**
 * Checks of our own that hold for every page state, whatever axe says: every form control has a
 * label, every section is named by its heading, the landmarks exist, every visible SVG and image
 * has a text alternative or is hidden from assistive technology, and no element carries an inline
 * event handler. (Inline styles are refused by the page's CSP, which the console would report.)
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // No named functions inside: tsx and vitest transpile with esbuild, whose name-keeping helper
  // (`__name`) does not exist in the page.
  return page.evaluate(() => {
    interface El {
      tagName: string;
      id: string;
      labels?: ArrayLike<unknown> | null;
      attributes: ArrayLike<{ name: string }>;
      getAttribute(name: string): string | null;
      closest(selector: string): El | null;
      querySelector(selector: string): El | null;
      getClientRects(): ArrayLike<unknown>;
      textContent: string | null;
    }
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<El> } }).document;
    const problems: string[] = [];
    for (const el of Array.from(
      doc.querySelectorAll('input:not([type=hidden]), select, textarea, svg, img, section, *'),
    )) {
      const name = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}`;
      const tag = el.tagName.toLowerCase();
      const labelled =
        (el.labels !== undefined && el.labels !== null && el.labels.length > 0) ||
        (el.getAttribute('aria-label') ?? '').trim() !== '' ||
        (el.getAttribute('aria-labelledby') ?? '').trim() !== '';
      if ((tag === 'input' && el.getAttribute('type') !== 'hidden') || tag === 'select' || tag === 'textarea') {
        if (!labelled) problems.push(`${name} has no label`);
      }
      if (tag === 'section' && !labelled) problems.push(`${name} has no heading reference`);
      if (tag === 'svg' && !el.closest('[aria-hidden="true"]') && el.getClientRects().length > 0) {
        const titled = (el.querySelector('title')?.textContent ?? '').trim() !== '';
        if (!labelled && !titled) problems.push(`svg in ${el.closest('[id]')?.id ?? '?'} has no text alternative`);
      }
      if (tag === 'img' && el.getAttribute('alt') === null) problems.push(`${name} has no alt`);
      for (const attribute of Array.from(el.attributes)) {
        if (attribute.name.startsWith('on')) {
          problems.push(`${name} has an inline ${attribute.name} event handler`);
        }
      }
    }
    for (const landmark of ['header', 'nav', 'main', 'footer']) {
      if (doc.querySelectorAll(landmark).length === 0) problems.push(`no <${landmark}> landmark`);
    }
    if (doc.querySelectorAll('main').length !== 1) problems.push('there must be exactly one <main>');
    return [...new Set(problems)];
  });
}

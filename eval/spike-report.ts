/**
 * `npm run eval -- spikes`: the product's spike alerts against human judgement.
 *
 * Human bursts come from the entity links of Wikipedia's Current Events 2025 Q1 (development data,
 * read at run time, never copied; see `human-bursts.ts`). The product's side goes through its own
 * intake normalisation, markup, chunking, dedupe, spike detector and alert desk, in publication
 * order, on:
 * - the development sample (the daily pages, whose links give the human bursts);
 * - the bundled sample (`samples/wikipedia-current-events-2025q1/articles.jsonl`, what `npm start`
 *   replays: the same summaries without links, judged against the same human bursts by article id);
 * - Wikinews 2019–2020 and, with `--realtimeqa N`, N RealTime QA documents: no human links, alert
 *   volume only (full-length news).
 *
 * Configurations: `before` is what the detector did before the count model (NEON's rule, every
 * episode an alert, ranked by score); `neon` is NEON's rule through the desk and budget; `surprise`
 * (the default) the count model through the desk and budget; the others vary one setting of it.
 * Writes `eval/results/spikes.json` (the default configuration's figures on the development sample
 * at the top, every configuration and sample below). Beside the headline recall (a new story on the
 * burst's days), `recall_with_earlier_stories` also counts a burst whose story the digest had listed
 * in the two weeks before and that was still open on its days: alerted ahead of the humans' burst.
 *
 * Mentions reach the detector on the partitions `npm start` puts them in (the embedded broker's
 * key hash over the product's topic layout); `--partitions 1` runs one stream.
 *
 *   npm run eval -- spikes [--realtimeqa 3000] [--digest 2025-01-27] [--partitions 6] [--json]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chunkArticle } from '../processors/chunk/chunk-article.js';
import { SpikeDetector } from '../processors/spikes/detect-spikes.js';
import { NearDuplicateFilter } from '../processors/dedupe/drop-near-duplicates.js';
import { IntakeRejection, type ArticleInput } from '../processors/intake/article-input.js';
import { loadRealtimeQaDocuments } from './spike-realtimeqa.js';
import {
  currentEventArticleInput,
  loadWikipediaCurrentEvents,
  type CurrentEventItem,
} from '../streams/archives/load-wikipedia-current-events.js';
import { loadWikinews } from '../streams/archives/load-wikinews.js';
import { normalizeArticle, SUMMARY_MIN_TEXT_CHARS } from '../processors/intake/normalize-article.js';
import { embeddedPartitionOf } from '../streams/embedded/embedded-transport.js';
import { PRODUCT_PARTITIONS } from '../streams/pipeline/topics.js';
import { EntityRegistry } from '../processors/markup/entity-registry.js';
import { markArticle } from '../processors/markup/mark-article.js';
import { AlertDesk, dayOf, storyOpenOn, type AlertBudget } from '../processors/spikes/alert-desk.js';
import { digestLines, digestJson } from '../processors/spikes/digest-view.js';
import { DAY_MS, DEFAULT_DAY_RULE, NEON_DAY_RULE, type SpikeRule } from '../processors/spikes/spike-rule.js';
import type { Article, MarkedArticle, Mention, SpikeAlert } from '../schemas/records.generated.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { wilsonInterval, type Interval } from '../devkit/interval-statistics.js';
import {
  articlesPerEntityDay,
  burstHit,
  dayString,
  detectableBursts,
  explainMiss,
  entityTitles,
  humanBursts,
  scoreAgainstHumans,
  type HumanBurst,
  type MissReason,
  type ProductEpisode,
  type RankedAlert,
  type SpikeFigures,
} from './human-bursts.js';

const CURRENT_EVENTS = 'samples/wikipedia-current-events-2025q1';
const WIKINEWS = 'samples/wikinews-2019-2020';
const BUNDLED = fileURLToPath(new URL('../samples/wikipedia-current-events-2025q1/articles.jsonl', import.meta.url));
/** After the samples' last day: nothing is refused as coming from the future. */
const NOW = Date.UTC(2025, 3, 2);

interface Configuration {
  name: string;
  about: string;
  day: SpikeRule;
  /** Through the alert desk with this budget; undefined: every episode is an alert (as before). */
  budget?: Partial<AlertBudget>;
}

/** The default with one φ for every entity (no per-entity estimate): what the default was before. */
const FIXED_PHI_DAY_RULE: SpikeRule = { ...DEFAULT_DAY_RULE, overdispersionPriorWeight: null };

/** Configurations also run on the null feed (false alarms) and the feeds without human links. */
const NULL_FEED_CONFIGURATIONS = [
  'before',
  'neon',
  'surprise',
  'surprise-fixed-phi',
  'surprise-bar0.2',
  'surprise-bar0.6',
  'surprise-fixed-phi-bar0.6',
  'surprise-volume-as-counted',
];

const CONFIGURATIONS: Configuration[] = [
  { name: 'before', about: "NEON's rule, every episode an alert, ranked by score", day: NEON_DAY_RULE },
  {
    name: 'neon',
    about: "NEON's rule through the desk (stories, budget of 10)",
    day: NEON_DAY_RULE,
    budget: { minSignificance: 0 },
  },
  {
    name: 'surprise',
    about: "the count model through the desk (the default): each entity's own φ, shrunk towards 0.2",
    day: DEFAULT_DAY_RULE,
    budget: {},
  },
  {
    name: 'surprise-fixed-phi',
    about: 'the count model with one φ = 0.2 for every entity (the default before per-entity φ)',
    day: FIXED_PHI_DAY_RULE,
    budget: {},
  },
  ...[0.2, 0.3, 0.6, 1, 2].map((bar) => ({
    name: `surprise-bar${bar}`,
    about: `the count model, significance bar ${bar}`,
    day: {
      ...DEFAULT_DAY_RULE,
      minSignificance: bar,
      endSignificance: Math.min(bar, DEFAULT_DAY_RULE.endSignificance),
    },
    budget: { minSignificance: bar },
  })),
  {
    name: 'surprise-fixed-phi-bar0.6',
    about: 'one φ = 0.2 for every entity, significance bar 0.6 (compare at a matched null-feed rate)',
    day: { ...FIXED_PHI_DAY_RULE, minSignificance: 0.6 },
    budget: { minSignificance: 0.6 },
  },
  {
    name: 'surprise-end0.5',
    about: 'the count model, an episode ends as soon as it falls below the start bar',
    day: { ...DEFAULT_DAY_RULE, endSignificance: DEFAULT_DAY_RULE.minSignificance },
    budget: {},
  },
  {
    name: 'surprise-1day',
    about: 'the count model, today only (no 3-day window)',
    day: { ...DEFAULT_DAY_RULE, rollingBuckets: 1 },
    budget: {},
  },
  {
    name: 'surprise-poisson',
    about: 'the count model without overdispersion (φ = 0 for every entity)',
    day: { ...FIXED_PHI_DAY_RULE, overdispersion: 0 },
    budget: {},
  },
  {
    name: 'surprise-phi0.5',
    about: "the count model, each entity's own φ shrunk towards 0.5",
    day: { ...DEFAULT_DAY_RULE, overdispersion: 0.5 },
    budget: {},
  },
  {
    name: 'surprise-c0-20',
    about: 'the count model, newcomer prior weighing until 20 articles of history',
    day: { ...DEFAULT_DAY_RULE, historyHalfWeight: 20 },
    budget: {},
  },
  {
    name: 'surprise-c0-1',
    about: 'the count model, newcomer prior weighing until 1 article of history',
    day: { ...DEFAULT_DAY_RULE, historyHalfWeight: 1 },
    budget: {},
  },
  {
    name: 'surprise-volume-as-counted',
    about: "the count model reading each day's feed volume as counted (no volume prior: the default before)",
    day: { ...DEFAULT_DAY_RULE, volumePrior: 0 },
    budget: {},
  },
  ...[3, 30].map((prior) => ({
    name: `surprise-volume-prior${prior}`,
    about: `the count model, the day's volume read through a prior of ${prior} pseudo-mentions`,
    day: { ...DEFAULT_DAY_RULE, volumePrior: prior },
    budget: {},
  })),
  {
    name: 'surprise-budget5',
    about: 'the count model, budget of 5 a day',
    day: DEFAULT_DAY_RULE,
    budget: { perDay: 5 },
  },
];

interface Prepared {
  name: string;
  articles: Article[];
  marked: MarkedArticle[];
  mentions: Mention[];
  refused: Record<string, number>;
  first: number;
  last: number;
}

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/**
 * Articles through intake normalisation, then markup, chunking and dedupe in publication order. Both
 * samples are one-sentence summaries, read with the summary floor as `neon replay` and `npm start`
 * read them.
 */
function prepare(name: string, inputs: Iterable<ArticleInput>): Prepared {
  const articles: Article[] = [];
  const refused: Record<string, number> = {};
  for (const input of inputs) {
    try {
      articles.push(normalizeArticle(input, NOW, { minTextChars: SUMMARY_MIN_TEXT_CHARS }));
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      refused[error.reason] = (refused[error.reason] ?? 0) + 1;
    }
  }
  articles.sort((a, b) => a.published_at - b.published_at);
  const registry = new EntityRegistry();
  const dedupe = new NearDuplicateFilter();
  const marked: MarkedArticle[] = [];
  const mentions: Mention[] = [];
  for (const article of articles) {
    const m = markArticle(article, registry);
    marked.push(m);
    for (const chunk of chunkArticle(m)) {
      const decision = dedupe.offer(chunk);
      if (decision.kind === 'unique') mentions.push(...decision.mentions);
    }
  }
  const times = articles.map((a) => a.published_at);
  return {
    name,
    articles,
    marked,
    mentions,
    refused,
    first: dayOf(Math.min(...times)),
    last: dayOf(Math.max(...times)),
  };
}

interface Run {
  byDay: Map<number, RankedAlert[]>;
  desk?: AlertDesk;
  alerts: SpikeAlert[];
  episodes: number;
  seconds: number;
}

/** How many partitions mentions are spread over, by entity (`--partitions`). */
function partitionCount(): number {
  const n = Number(arg('--partitions') ?? PRODUCT_PARTITIONS);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--partitions must be a positive integer, not ${arg('--partitions')}`);
  return n;
}

/** The partition an entity's mentions arrive on, as `npm start` lays them out. */
const partitionOf = (mention: Mention, partitions: number): number =>
  embeddedPartitionOf(mention.entity_id, partitions);

/** The detector (day rule only: the samples have day-only dates) and the desk. */
function runConfiguration(data: Prepared, config: Configuration, partitions: number): Run {
  const started = performance.now();
  const detector = new SpikeDetector({ day: config.day, hour: null, now: () => NOW });
  const alerts: SpikeAlert[] = [];
  for (const mention of data.mentions) alerts.push(...detector.offer(mention, partitionOf(mention, partitions)).alerts);
  // Event time must pass the last day on every partition for its episodes to be judged: a tick far after the end.
  const last = data.mentions.at(-1);
  if (last) {
    const tick: Mention = {
      ...last,
      entity_id: 'e-eval-clock',
      name: 'clock',
      chunk_id: 'eval-clock',
      t: data.last + 3 * DAY_MS,
    };
    for (let p = 0; p < partitions; p++) {
      alerts.push(...detector.offer(tick, p).alerts.filter((a) => a.entity_id !== 'e-eval-clock'));
    }
  }
  const byDay = new Map<number, RankedAlert[]>();
  const episodes = new Set(alerts.map((a) => a.id)).size;
  if (config.budget === undefined) {
    for (const a of alerts.filter((alert) => alert.state === 'STARTED')) {
      const day = dayOf(a.episode_start ?? a.window_end - DAY_MS);
      const list = byDay.get(day) ?? [];
      list.push({ lead: a.entity_id, name: a.entity_name, entities: [a.entity_id], significance: a.score });
      byDay.set(day, list);
    }
    for (const list of byDay.values()) list.sort((a, b) => b.significance - a.significance);
    return { byDay, alerts, episodes, seconds: (performance.now() - started) / 1000 };
  }
  const desk = new AlertDesk({ budget: config.budget });
  for (const alert of alerts) desk.apply(alert);
  for (let d = data.first; d <= data.last; d += DAY_MS) {
    const digest = desk.digest(d);
    byDay.set(
      d,
      digest.stories.map((s) => ({
        lead: s.lead.entity_id,
        name: s.lead.entity_name,
        entities: s.members.map((m) => m.entity_id),
        significance: s.significance,
      })),
    );
  }
  return { byDay, desk, alerts, episodes, seconds: (performance.now() - started) / 1000 };
}

/** Alert volume only (no human links). */
function volumeFigures(data: Prepared, run: Run): Record<string, number> {
  const perDay: number[] = [];
  for (let d = data.first; d <= data.last; d += DAY_MS) perDay.push(run.byDay.get(d)?.length ?? 0);
  const active = perDay.filter(
    (n, i) => n > 0 || data.articles.some((a) => dayOf(a.published_at) === data.first + i * DAY_MS),
  );
  const sorted = [...active].sort((a, b) => a - b);
  return {
    days_with_articles: active.length,
    alerts: perDay.reduce((a, b) => a + b, 0),
    alerts_per_day_median: sorted.length === 0 ? 0 : sorted[sorted.length >> 1]!,
    alerts_per_day_max: Math.max(0, ...perDay),
    episodes: run.episodes,
  };
}

/**
 * A feed with no news in it: 40 days of 500 articles, each naming 8 of 5,000 entities drawn at
 * stationary, Zipf-like rates (seeded). Whatever is alerted here is a false alarm: episodes,
 * stories listed in the digest above the bar, and stories pushed.
 */
function nullFeedFigures(partitions: number): Record<string, Record<string, number>> {
  let seed = 7;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const start = Date.UTC(2025, 0, 6);
  const mentions: Mention[] = [];
  for (let d = 0; d < 40; d++) {
    for (let a = 0; a < 500; a++) {
      const t = start + d * DAY_MS + Math.floor(random() * DAY_MS);
      const entities = new Set<number>();
      while (entities.size < 8) entities.add(Math.floor(Math.pow(random(), 3) * 5000));
      for (const e of entities) {
        const article = `null-${d}-${a}`;
        mentions.push({
          entity_id: `e-${e}`,
          name: `Name ${e}`,
          entity_type: 'OTHER',
          t,
          chunk_id: `${article}:v1:0`,
          article_id: article,
          url: null,
        });
      }
    }
  }
  mentions.sort((x, y) => x.t - y.t);
  const figures: Record<string, Record<string, number>> = {};
  for (const config of CONFIGURATIONS.filter((c) => NULL_FEED_CONFIGURATIONS.includes(c.name))) {
    const detector = new SpikeDetector({ day: config.day, hour: null, now: () => NOW });
    const desk = new AlertDesk({ budget: config.budget ?? { minSignificance: 0 } });
    let started = 0;
    let pushed = 0;
    for (const m of mentions) {
      for (const alert of detector.offer(m, partitionOf(m, partitions)).alerts) {
        if (alert.state === 'STARTED') started += 1;
        if (desk.apply(alert).delivered) pushed += 1;
      }
    }
    // The last 20 days: past the baseline's first weeks.
    const listed: number[] = [];
    for (let d = 20; d < 40; d++) {
      const digest = desk.digest(start + d * DAY_MS);
      listed.push(config.budget === undefined ? digest.totals.stories : digest.stories.length);
    }
    listed.sort((a, b) => a - b);
    figures[config.name] = {
      episodes_per_day: Number((started / 40).toFixed(1)),
      listed_per_day_median: listed[listed.length >> 1]!,
      pushed: config.budget === undefined ? started : pushed,
    };
  }
  return figures;
}

const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
const iv = (i: { low: number; high: number }, asPct = true): string =>
  asPct ? `[${pct(i.low)}, ${pct(i.high)}]` : `[${i.low}, ${i.high}]`;

function row(config: string, f: SpikeFigures): string {
  return (
    `  ${config.padEnd(18)} recall ${pct(f.recall).padStart(4)} ${iv(f.recall_interval).padEnd(12)} ` +
    `(lead only ${pct(f.recall_lead_only)})  median rank ${String(f.median_rank ?? '–').padStart(4)} ` +
    `${f.median_rank_interval ? iv(f.median_rank_interval, false) : ''}  top 5 ${pct(f.top5_share).padStart(4)} ` +
    `${iv(f.top5_interval)}  alerts/day ${f.alerts_per_day_median} ${iv(f.alerts_per_day_median_interval, false)} ` +
    `max ${f.alerts_per_day_max}  unlinked ${pct(f.unlinked_share)} ${iv(f.unlinked_interval)}`
  );
}

function readBundled(): ArticleInput[] {
  return readFileSync(BUNDLED, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ArticleInput);
}

async function wikinewsInputs(path: string): Promise<ArticleInput[]> {
  const load = loadWikinews(path);
  if (!load.ok) return [];
  const inputs: ArticleInput[] = [];
  for await (const item of load.items) if (item.input) inputs.push(item.input);
  return inputs;
}

async function main(): Promise<void> {
  const base = devDataPath(CURRENT_EVENTS);
  if (base === undefined) {
    console.log(missingDevDataMessage(CURRENT_EVENTS));
    return;
  }
  const started = performance.now();
  const partitions = partitionCount();
  const items = loadWikipediaCurrentEvents(join(base, 'daily_markdown'));
  const itemsById = new Map<string, CurrentEventItem>(items.map((i) => [currentEventArticleInput(i).id!, i]));
  const bursts = humanBursts(items);
  const dev = prepare('development', items.map(currentEventArticleInput));
  const titles = entityTitles(dev.marked, itemsById);
  const reachableTitles = new Set(titles.values());
  const reachable = bursts.filter((b) => reachableTitles.has(b.title));
  const detectable = detectableBursts(reachable, dev.marked, titles);
  const bundled = prepare('bundled', readBundled());
  const bundledTitles = entityTitles(bundled.marked, itemsById);

  const results: Record<string, unknown> = {};
  const figures: Record<string, Record<string, SpikeFigures>> = { development: {}, bundled: {} };
  const all: Record<string, SpikeFigures> = {};
  const visible: Record<string, SpikeFigures> = {};
  let defaultRun: Run | undefined;
  for (const config of CONFIGURATIONS) {
    const run = runConfiguration(dev, config, partitions);
    if (config.name === 'surprise') defaultRun = run;
    figures.development![config.name] = scoreAgainstHumans(run.byDay, reachable, titles, dev);
    all[config.name] = scoreAgainstHumans(run.byDay, bursts, titles, dev);
    visible[config.name] = scoreAgainstHumans(run.byDay, detectable, titles, dev);
    const bundledRun = runConfiguration(bundled, config, partitions);
    figures.bundled![config.name] = scoreAgainstHumans(bundledRun.byDay, reachable, bundledTitles, bundled);
  }

  const volume: Record<string, Record<string, Record<string, number>>> = {};
  const wikinewsPath = devDataPath(WIKINEWS);
  const extra: Prepared[] = [];
  if (wikinewsPath) extra.push(prepare('wikinews', await wikinewsInputs(wikinewsPath)));
  const realtimeqa = Number(arg('--realtimeqa') ?? 0);
  if (realtimeqa > 0) {
    const docs = await loadRealtimeQaDocuments(realtimeqa);
    if (docs) extra.push(prepare('realtimeqa', docs));
  }
  for (const data of extra) {
    volume[data.name] = {};
    for (const config of CONFIGURATIONS.filter((c) => NULL_FEED_CONFIGURATIONS.includes(c.name))) {
      volume[data.name]![config.name] = volumeFigures(data, runConfiguration(data, config, partitions));
    }
  }

  const nullFeed = nullFeedFigures(partitions);
  const chosen = figures.development!.surprise!;
  const misses = defaultRun ? explainMisses(reachable, detectable, defaultRun, titles, dev.marked) : [];
  const withEarlier = defaultRun ? recallWithEarlierStories(defaultRun, reachable, titles) : undefined;
  Object.assign(results, {
    recall: chosen.recall,
    median_rank: chosen.median_rank,
    top5_share: chosen.top5_share,
    alerts_per_day_median: chosen.alerts_per_day_median,
    alerts_per_day_max: chosen.alerts_per_day_max,
    unlinked_share: chosen.unlinked_share,
    default_configuration: 'surprise',
    partitions,
    recall_with_earlier_stories: withEarlier,
    human_bursts: {
      definition:
        "episodes of consecutive days on which a title's linked stories fire NEON's rule (3-day sum > mean + 1 std of the previous 28, at least 3)",
      all: bursts.length,
      reachable: reachable.length,
      detectable: detectable.length,
      titles_with_entities: reachableTitles.size,
    },
    samples: {
      development: { articles: dev.articles.length, refused: dev.refused, mentions: dev.mentions.length },
      bundled: { articles: bundled.articles.length, refused: bundled.refused, mentions: bundled.mentions.length },
      ...Object.fromEntries(extra.map((d) => [d.name, { articles: d.articles.length, mentions: d.mentions.length }])),
    },
    configurations: Object.fromEntries(CONFIGURATIONS.map((c) => [c.name, c.about])),
    reachable_bursts: figures,
    all_bursts_development: all,
    detectable_bursts_development: visible,
    alert_volume: volume,
    null_feed: nullFeed,
    misses: {
      reasons: MISS_REASONS,
      by_reason: Object.fromEntries(
        Object.keys(MISS_REASONS).map((reason) => [reason, misses.filter((m) => m.reason === reason).length]),
      ),
      bursts: misses,
    },
    seconds: Number(((performance.now() - started) / 1000).toFixed(1)),
  });
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/spikes.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(results, null, 2));
    return;
  }
  console.log(
    `human bursts (Current Events 2025 Q1 links, NEON's rule): ${bursts.length} episodes, ` +
      `${reachable.length} on titles markup finds an entity for\n`,
  );
  for (const [sample, byConfig] of Object.entries(figures)) {
    console.log(`${sample} sample, reachable human bursts (n = ${reachable.length}):`);
    for (const [name, f] of Object.entries(byConfig)) console.log(row(name, f));
  }
  console.log(`\ndevelopment sample, all ${bursts.length} human bursts (markup misses count as misses):`);
  for (const [name, f] of Object.entries(all)) console.log(row(name, f));
  console.log(
    `\ndevelopment sample, the ${detectable.length} reachable bursts whose title the product's own articles ` +
      `show at least 3 times in the burst's window (what spike detection can see):`,
  );
  for (const [name, f] of Object.entries(visible)) console.log(row(name, f));
  for (const [name, byConfig] of Object.entries(volume)) {
    console.log(`\n${name} (no human links): alerts per day with articles`);
    for (const [config, v] of Object.entries(byConfig)) {
      console.log(
        `  ${config.padEnd(18)} median ${v.alerts_per_day_median}  max ${v.alerts_per_day_max}  ` +
          `alerts ${v.alerts} over ${v.days_with_articles} days (${v.episodes} episodes)`,
      );
    }
  }
  console.log('\nnull feed (no news: stationary rates; everything alerted is a false alarm):');
  for (const [config, v] of Object.entries(nullFeed)) {
    console.log(
      `  ${config.padEnd(18)} episodes/day ${v.episodes_per_day}  listed/day (median, last 20 days) ${v.listed_per_day_median}  pushed ${v.pushed}`,
    );
  }
  const digestDay = arg('--digest');
  if (digestDay && defaultRun?.desk) {
    console.log('');
    for (const line of digestLines(digestJson(defaultRun.desk.digest(Date.parse(`${digestDay}T00:00:00Z`)))))
      console.log(line);
  }
  if (withEarlier) {
    console.log(
      `\ndefault, counting stories listed in the two weeks before and still open on the burst's days: ` +
        `recall ${pct(withEarlier.recall)} ${iv(withEarlier.recall_interval)} (${withEarlier.recalled} of ${reachable.length})`,
    );
  }
  printMisses(misses, reachable.length);
}

/**
 * Recall counting, besides a new story of the burst's days, a story listed in the digest of one of
 * the two weeks before and still open on one of the burst's days: the burst was before the desk,
 * as a story it had been shown already. The headline recall counts only the former.
 */
function recallWithEarlierStories(
  run: Run,
  bursts: readonly HumanBurst[],
  titles: ReadonlyMap<string, string>,
): { recalled: number; recall: number; recall_interval: Interval } {
  const desk = run.desk;
  let recalled = 0;
  for (const burst of bursts) {
    let seen = burstHit(burst, run.byDay, titles) !== undefined;
    for (let d = burst.start - 2 * DAY_MS; !seen && desk && d <= burst.start + DAY_MS; d += DAY_MS) {
      for (let listed = d - 14 * DAY_MS; !seen && listed < d; listed += DAY_MS) {
        seen = desk
          .digest(listed)
          .stories.some(
            (story) => storyOpenOn(story, d) && story.members.some((m) => titles.get(m.entity_id) === burst.title),
          );
      }
    }
    if (seen) recalled += 1;
  }
  return {
    recalled,
    recall: bursts.length === 0 ? 0 : recalled / bursts.length,
    recall_interval: wilsonInterval(recalled, bursts.length),
  };
}

/** The product's episodes of a run, with the day of the story each was filed under. */
function productEpisodes(run: Run): ProductEpisode[] {
  const byId = new Map<string, SpikeAlert[]>();
  for (const alert of run.alerts) byId.set(alert.id, [...(byId.get(alert.id) ?? []), alert]);
  return [...byId.values()].map((states) => {
    const first = states[0]!;
    const start = dayOf(first.episode_start ?? first.window_end - DAY_MS);
    return {
      entity_id: first.entity_id,
      start,
      last: Math.max(...states.map((a) => a.window_end - DAY_MS)),
      storyDay: run.desk?.storyOf(first.id)?.day ?? start,
    };
  });
}

interface Miss {
  date: string;
  title: string;
  stories: number;
  reason: MissReason;
  /** A split's names: the product's entities linked to the title, with their articles in the window. */
  names?: { id: string; articles: number }[];
}

/** The articles naming each entity of `title` from two days before `start` to `start`, most first. */
function namesOfTitle(
  title: string,
  start: number,
  titles: ReadonlyMap<string, string>,
  perDay: ReadonlyMap<string, ReadonlyMap<number, number>>,
): { id: string; articles: number }[] {
  return [...titles]
    .filter(([, t]) => t === title)
    .map(([id]) => ({
      id,
      articles: [0, 1, 2].reduce((sum, back) => sum + (perDay.get(id)?.get(start - back * DAY_MS) ?? 0), 0),
    }))
    .filter((n) => n.articles > 0)
    .sort((a, b) => b.articles - a.articles || a.id.localeCompare(b.id));
}

/** The reachable human bursts the run missed, each with why (`explainMiss`). */
function explainMisses(
  bursts: readonly HumanBurst[],
  detectable: readonly HumanBurst[],
  run: Run,
  titles: ReadonlyMap<string, string>,
  marked: readonly MarkedArticle[],
): Miss[] {
  const visible = new Set(detectable);
  const episodes = productEpisodes(run);
  const perDay = articlesPerEntityDay(marked);
  return bursts
    .filter((burst) => burstHit(burst, run.byDay, titles) === undefined)
    .map((burst) => {
      const reason = explainMiss(burst, visible, episodes, titles, perDay);
      return {
        date: dayString(burst.start),
        title: burst.title,
        stories: burst.stories,
        reason,
        ...(reason === 'split_names' ? { names: namesOfTitle(burst.title, burst.start, titles, perDay) } : {}),
      };
    });
}

const MISS_REASONS: Record<MissReason, string> = {
  few_articles: "the product's articles name it fewer than 3 times in the burst's window (markup)",
  split_names: 'they do, but split over names markup did not fuse, none in 3 articles of 3 days',

  earlier_story: 'already in an episode or story that began before the window',
  not_listed: "an episode began in the window, but its story did not make the day's digest",
  below_bar: "the product's counts were within what the entity's baseline expects",
};

function printMisses(misses: readonly Miss[], reachable: number): void {
  console.log(`\nthe default's misses among the ${reachable} reachable human bursts, by reason:`);
  for (const [reason, about] of Object.entries(MISS_REASONS)) {
    console.log(
      `  ${String(misses.filter((m) => m.reason === reason).length).padStart(3)}  ${reason.padEnd(14)} ${about}`,
    );
  }
  if (!process.argv.includes('--misses')) return;
  console.log('\nmissed human bursts:');
  for (const m of misses) console.log(`  ${m.date}  ${m.title} (${m.stories} stories)  ${m.reason}`);
}

await main();

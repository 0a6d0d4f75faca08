/**
 * Markup quality against human entity links: Wikipedia "Portal:Current events", 2025 Q1 (each event
 * summary's inline Wikipedia links name the entities an editor chose to link).
 *
 *   npx tsx eval/markup-quality.ts [--limit N] [--examples]
 *
 * Wikipedia links only some entities, and some links are not named entities at all (common nouns
 * like "rubble", demonyms like "Israeli"). So:
 * - recall is reported on links whose surface starts with a capital letter (the main figure), and
 *   on all links;
 * - precision is the share of our mentions that overlap a link: a lower bound, since a correct
 *   mention of an entity the editors did not link counts against it;
 * - alias resolution: over the whole quarter with one registry, for each Wikipedia title reached by
 *   two or more different surface forms, how often two forms got the same canonical id
 *   (consolidation); and for each canonical id, how often two of its forms were linked to different
 *   titles (over-merging). Wikipedia itself links one surface to different titles now and then
 *   ("Israeli" → Israel, or → the Israel Defense Forces), which counts as over-merging here.
 */
import { join } from 'node:path';

import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { currentEventArticle } from './current-event-articles.js';
import {
  loadWikipediaCurrentEvents,
  type CurrentEventItem,
  type LinkedSpan,
} from '../streams/archives/load-wikipedia-current-events.js';
import { EntityRegistry } from '../processors/markup/entity-registry.js';
import { DEFAULT_SPELLING_THRESHOLD } from '../processors/markup/entity-fusion.js';
import { entityKey } from '../processors/markup/entity-id.js';
import { markArticle } from '../processors/markup/mark-article.js';
import { recognizeEntities } from '../processors/markup/recognize-entities.js';
import type { Article, MarkedArticle } from '../schemas/records.generated.js';

const DATASET = 'samples/wikipedia-current-events-2025q1';

interface Counts {
  gold: number;
  goldCapitalised: number;
  recalledExact: number;
  recalledOverlap: number;
  recalledCapitalisedExact: number;
  recalledCapitalisedOverlap: number;
  ours: number;
  oursExact: number;
  oursOverlap: number;
}

function main(): void {
  const args = process.argv.slice(2);
  const limitArg = args.indexOf('--limit');
  const limit = limitArg >= 0 ? Number(args[limitArg + 1]) : Infinity;
  const showExamples = args.includes('--examples');
  const sweep = args.includes('--sweep');

  const base = devDataPath(DATASET);
  if (base === undefined) {
    console.log(missingDevDataMessage(DATASET));
    return;
  }
  const items = loadWikipediaCurrentEvents(join(base, 'daily_markdown')).slice(0, limit);
  const articles = items.map(currentEventArticle);

  const registry = new EntityRegistry();
  const coldStarted = performance.now();
  const marked = articles.map((article) => markArticle(article, registry));
  const coldSeconds = (performance.now() - coldStarted) / 1000;

  // Throughput is timed again once the JIT has warmed up, with a fresh registry.
  const warmRegistry = new EntityRegistry();
  const warmStarted = performance.now();
  for (const article of articles) markArticle(article, warmRegistry);
  const markSeconds = (performance.now() - warmStarted) / 1000;

  const nerStarted = performance.now();
  for (const article of articles) recognizeEntities(article.text);
  const nerSeconds = (performance.now() - nerStarted) / 1000;

  const counts = spanCounts(items, marked);
  const linkedAliases = aliasResolution(items, marked, (id) => id);
  const aliases = aliasResolution(items, marked, (id) => registry.canonicalId(id));
  const fusion = fusionQuality(items, marked, registry);
  const chars = articles.reduce((n, a) => n + a.text.length, 0);
  const byType = new Map<string, number>();
  for (const m of marked.flatMap((x) => x.mentions)) byType.set(m.entity_type, (byType.get(m.entity_type) ?? 0) + 1);

  const pct = (n: number, d: number): string => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(1)}%`);
  const rows: [string, string][] = [
    ['items (event summaries)', `${items.length} (${(chars / items.length).toFixed(0)} chars on average)`],
    ['gold links / capitalised', `${counts.gold} / ${counts.goldCapitalised}`],
    ['our mentions', `${counts.ours}  (${[...byType].map(([t, n]) => `${t} ${n}`).join(', ')})`],
    [
      'recall, capitalised links (exact / overlap)',
      `${pct(counts.recalledCapitalisedExact, counts.goldCapitalised)} / ${pct(counts.recalledCapitalisedOverlap, counts.goldCapitalised)}`,
    ],
    [
      'recall, all links (exact / overlap)',
      `${pct(counts.recalledExact, counts.gold)} / ${pct(counts.recalledOverlap, counts.gold)}`,
    ],
    [
      'precision: mentions that match / overlap a link',
      `${pct(counts.oursExact, counts.ours)} / ${pct(counts.oursOverlap, counts.ours)}`,
    ],
    [
      'alias consolidation: surface-form pairs of one title with one id',
      `${pct(aliases.samePairs, aliases.pairs)} (${aliases.samePairs}/${aliases.pairs} pairs, ${aliases.titles} titles; as linked, before later fusions: ${pct(linkedAliases.samePairs, linkedAliases.pairs)})`,
    ],
    [
      `fusions (spelling θ ${DEFAULT_SPELLING_THRESHOLD})`,
      `${fusion.fusions} (${[...fusion.byRule].map(([rule, n]) => `${rule} ${n}`).join(', ')}); precision ${pct(fusion.correct, fusion.judged)} (${fusion.correct}/${fusion.judged} judged by their links)`,
    ],
    ['title purity: mentions of a title under its usual id', pct(aliases.pureMentions, aliases.mentions)],
    [
      'over-merging: ids whose forms were linked to 2+ titles',
      `${pct(aliases.mergedIds, aliases.ids)} (${aliases.mergedIds}/${aliases.ids} ids)`,
    ],
    ['registry entities after the quarter', String(registry.size)],
    [
      'markArticle throughput, warm (first pass)',
      `${(articles.length / markSeconds).toFixed(0)} articles/s, ${(chars / markSeconds / 1000).toFixed(0)}k chars/s (${(articles.length / coldSeconds).toFixed(0)} articles/s)`,
    ],
    ['recognizeEntities alone', `${(articles.length / nerSeconds).toFixed(0)} articles/s`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`markup quality on ${DATASET}`);
  for (const [k, v] of rows) console.log(`${k.padEnd(width)}  ${v}`);
  console.log(
    JSON.stringify({
      dataset: DATASET,
      items: items.length,
      counts,
      alias: { ...aliases, mergedExamples: undefined, consolidationExamples: undefined },
      alias_as_linked: { ...linkedAliases, mergedExamples: undefined, consolidationExamples: undefined },
      fusion: { ...fusion, byRule: Object.fromEntries(fusion.byRule), examples: undefined },
      articles_per_second: articles.length / markSeconds,
      ner_articles_per_second: articles.length / nerSeconds,
    }),
  );
  if (showExamples) {
    printExamples(items, marked, aliases);
    console.log(`\nfusions (✓ same linked title, ✗ different, ? not judged):\n  ${fusion.examples.join('\n  ')}`);
  }
  if (sweep) sweepSpellingThreshold(items, articles);
}

/**
 * The spelling threshold against the links: for each θ, the quarter is marked with a fresh registry
 * and the consolidation (recall of merges) and the precision of the fusions are printed.
 */
function sweepSpellingThreshold(items: readonly CurrentEventItem[], articles: readonly Article[]): void {
  console.log(
    '\nspelling threshold sweep (θ: consolidation after fusion, spelling fusions judged correct, over-merged ids)',
  );
  for (const threshold of [0.7, 0.75, 0.8, 0.85, 0.9, 1]) {
    const registry = new EntityRegistry([], { fusion: { spellingThreshold: threshold } });
    const marked = articles.map((article) => markArticle(article, registry));
    const aliases = aliasResolution(items, marked, (id) => registry.canonicalId(id));
    const fusion = fusionQuality(items, marked, registry);
    const spelling = fusion.byRuleJudged.get('spelling') ?? { judged: 0, correct: 0 };
    console.log(
      `  θ ${threshold.toFixed(2)}: ${aliases.samePairs}/${aliases.pairs} pairs; spelling ${fusion.byRule.get('spelling') ?? 0} fusions, ${spelling.correct}/${spelling.judged} correct; over-merged ${aliases.mergedIds}/${aliases.ids}`,
    );
  }
  const off = new EntityRegistry([], { fusion: false });
  const marked = articles.map((article) => markArticle(article, off));
  const aliases = aliasResolution(items, marked, (id) => off.canonicalId(id));
  console.log(
    `  no fusion: ${aliases.samePairs}/${aliases.pairs} pairs; over-merged ${aliases.mergedIds}/${aliases.ids}`,
  );
}

interface FusionFigures {
  fusions: number;
  byRule: Map<string, number>;
  byRuleJudged: Map<string, { judged: number; correct: number }>;
  /** Fusions whose two sides both had mentions matching a link. */
  judged: number;
  /** Those whose two sides' most linked titles agree. */
  correct: number;
  examples: string[];
}

/**
 * Each fusion in force, judged by the Wikipedia titles its two sides' mentions were linked to: right
 * when the title most linked from the fused entity's mentions is the one most linked from the
 * entity it was fused into. Mentions marked after the fusion carry the target's id already, so the
 * fused side is judged by its mentions from before.
 */
function fusionQuality(
  items: readonly CurrentEventItem[],
  marked: readonly MarkedArticle[],
  registry: EntityRegistry,
): FusionFigures {
  // Mentions marked after a fusion carry the target's id, so each side is judged by the mentions
  // that used its own name: the title most linked from those.
  const titlesBySurface = new Map<string, Map<string, number>>();
  items.forEach((item, i) => {
    for (const m of marked[i]!.mentions) {
      const link = item.links.find((l: LinkedSpan) => same(m, l));
      if (link === undefined) continue;
      const key = entityKey(m.surface);
      const titles = titlesBySurface.get(key) ?? new Map<string, number>();
      titles.set(link.title, (titles.get(link.title) ?? 0) + 1);
      titlesBySurface.set(key, titles);
    }
  });
  const figures: FusionFigures = {
    fusions: 0,
    byRule: new Map(),
    byRuleJudged: new Map(),
    judged: 0,
    correct: 0,
    examples: [],
  };
  for (const entity of registry.entities()) {
    const fusion = entity.fusion;
    if (fusion === null || fusion.revoked) continue;
    figures.fusions++;
    figures.byRule.set(fusion.rule, (figures.byRule.get(fusion.rule) ?? 0) + 1);
    const root = registry.get(registry.canonicalId(entity.id))!;
    const from = titlesBySurface.get(entityKey(entity.name));
    const into = titlesBySurface.get(entityKey(root.name));
    let mark = '?';
    if (from !== undefined && into !== undefined) {
      const ok = majority(from) === majority(into);
      figures.judged++;
      if (ok) figures.correct++;
      const perRule = figures.byRuleJudged.get(fusion.rule) ?? { judged: 0, correct: 0 };
      perRule.judged++;
      if (ok) perRule.correct++;
      figures.byRuleJudged.set(fusion.rule, perRule);
      mark = ok ? '✓' : '✗';
    }
    if (figures.examples.length < 80) {
      figures.examples.push(`${mark} ${entity.name} → ${root.name} (${fusion.rule}: ${fusion.evidence})`);
    }
  }
  return figures;
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }): boolean =>
  a.start < b.end && b.start < a.end;
const same = (a: { start: number; end: number }, b: { start: number; end: number }): boolean =>
  a.start === b.start && a.end === b.end;

function spanCounts(items: readonly CurrentEventItem[], marked: readonly MarkedArticle[]): Counts {
  const c: Counts = {
    gold: 0,
    goldCapitalised: 0,
    recalledExact: 0,
    recalledOverlap: 0,
    recalledCapitalisedExact: 0,
    recalledCapitalisedOverlap: 0,
    ours: 0,
    oursExact: 0,
    oursOverlap: 0,
  };
  items.forEach((item, i) => {
    const mentions = marked[i]!.mentions;
    for (const link of item.links) {
      const capitalised = /^\p{Lu}/u.test(item.text.slice(link.start, link.end));
      const exact = mentions.some((m) => same(m, link));
      const overlap = mentions.some((m) => overlaps(m, link));
      c.gold++;
      if (exact) c.recalledExact++;
      if (overlap) c.recalledOverlap++;
      if (capitalised) {
        c.goldCapitalised++;
        if (exact) c.recalledCapitalisedExact++;
        if (overlap) c.recalledCapitalisedOverlap++;
      }
    }
    for (const m of mentions) {
      c.ours++;
      if (item.links.some((l) => same(m, l))) c.oursExact++;
      if (item.links.some((l) => overlaps(m, l))) c.oursOverlap++;
    }
  });
  return c;
}

interface AliasFigures {
  /** Mentions that exactly match a link, and those among them under their title's most frequent id. */
  mentions: number;
  pureMentions: number;
  titles: number;
  pairs: number;
  samePairs: number;
  ids: number;
  mergedIds: number;
  mergedExamples: string[];
  consolidationExamples: string[];
}

/** Mentions that exactly match a link, grouped by title and by our id. */
function aliasResolution(
  items: readonly CurrentEventItem[],
  marked: readonly MarkedArticle[],
  resolve: (id: string) => string,
): AliasFigures {
  // title → surface key → id → count
  const byTitle = new Map<string, Map<string, Map<string, number>>>();
  // id → title → surfaces
  const byId = new Map<string, Map<string, Set<string>>>();
  items.forEach((item, i) => {
    for (const m of marked[i]!.mentions) {
      const link = item.links.find((l: LinkedSpan) => same(m, l));
      if (link === undefined) continue;
      const id = resolve(m.entity_id);
      record(byTitle, link.title, entityKey(m.surface), id);
      const titles = byId.get(id) ?? new Map<string, Set<string>>();
      titles.set(link.title, (titles.get(link.title) ?? new Set()).add(m.surface));
      byId.set(id, titles);
    }
  });
  let mentions = 0;
  let pureMentions = 0;
  for (const forms of byTitle.values()) {
    const perId = new Map<string, number>();
    for (const ids of forms.values()) for (const [id, n] of ids) perId.set(id, (perId.get(id) ?? 0) + n);
    const counts = [...perId.values()];
    mentions += counts.reduce((a, b) => a + b, 0);
    pureMentions += Math.max(...counts);
  }
  let titles = 0;
  let pairs = 0;
  let samePairs = 0;
  const consolidationExamples: string[] = [];
  for (const [title, forms] of byTitle) {
    if (forms.size < 2) continue;
    titles++;
    if (consolidationExamples.length < 40)
      consolidationExamples.push(
        `${title}: ${[...forms].map(([key, ids]) => `${key} → ${majority(ids)}`).join(' | ')}`,
      );
    const ids = [...forms.values()].map(majority);
    for (let a = 0; a < ids.length; a++) {
      for (let b = a + 1; b < ids.length; b++) {
        pairs++;
        if (ids[a] === ids[b]) samePairs++;
      }
    }
  }
  let mergedIds = 0;
  const mergedExamples: string[] = [];
  for (const [id, linkedTitles] of byId) {
    if (linkedTitles.size < 2) continue;
    mergedIds++;
    if (mergedExamples.length < 25)
      mergedExamples.push(`${id}: ${[...linkedTitles].map(([t, s]) => `${t} ← ${[...s].join('/')}`).join(' | ')}`);
  }
  return {
    titles,
    pairs,
    samePairs,
    mentions,
    pureMentions,
    ids: byId.size,
    mergedIds,
    mergedExamples,
    consolidationExamples,
  };
}

function record(byTitle: Map<string, Map<string, Map<string, number>>>, title: string, key: string, id: string): void {
  const forms = byTitle.get(title) ?? new Map<string, Map<string, number>>();
  const ids = forms.get(key) ?? new Map<string, number>();
  ids.set(id, (ids.get(id) ?? 0) + 1);
  forms.set(key, ids);
  byTitle.set(title, forms);
}

function majority(ids: Map<string, number>): string {
  let best = '';
  let bestCount = -1;
  for (const [id, n] of ids) {
    if (n > bestCount) {
      best = id;
      bestCount = n;
    }
  }
  return best;
}

function printExamples(
  items: readonly CurrentEventItem[],
  marked: readonly MarkedArticle[],
  aliases: AliasFigures,
): void {
  const missed = new Map<string, number>();
  const spurious = new Map<string, number>();
  items.forEach((item, i) => {
    const mentions = marked[i]!.mentions;
    for (const link of item.links) {
      const surface = item.text.slice(link.start, link.end);
      if (/^\p{Lu}/u.test(surface) && !mentions.some((m) => same(m, link)))
        missed.set(surface, (missed.get(surface) ?? 0) + 1);
    }
    for (const m of mentions) {
      if (!item.links.some((l) => overlaps(m, l)))
        spurious.set(`${m.surface}/${m.entity_type}`, (spurious.get(`${m.surface}/${m.entity_type}`) ?? 0) + 1);
    }
  });
  const top = (m: Map<string, number>): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 60)
      .map(([s, n]) => `${s} (${n})`)
      .join(', ');
  console.log(`\nmost missed capitalised links: ${top(missed)}`);
  console.log(`\nmost frequent mentions without a link: ${top(spurious)}`);
  console.log(`\nover-merged ids:\n  ${aliases.mergedExamples.join('\n  ')}`);
  console.log(`\ntitles reached by several forms:\n  ${aliases.consolidationExamples.join('\n  ')}`);
}

main();

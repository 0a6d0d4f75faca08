/**
 * `npx tsx eval/dedupe-quality.ts`: document-level near-duplicates on the RealTime QA articles with
 * the product's shingles and MinHash-LSH at the default threshold, compared with
 * `derived/neardup_pairs_jaccard_ge_0.5.json` (heuristic labels: 5-word-shingle Jaccard ≥ 0.5
 * between documents with different canonical URLs).
 *
 * Three comparisons, so each difference has one cause:
 *  1. LSH vs the exact word-trigram pairs (prefix-filter join): the loss of the approximation;
 *  2. LSH vs the labels over all documents;
 *  3. LSH vs the labels without template pages: the labels contain no pair from the clusters of
 *     pages that share one text under dozens of URLs (newsletter sign-ups, ad prompts), so these
 *     are set aside, defined without the labels as documents that are near-duplicates (by our
 *     exact word trigrams) of at least TEMPLATE_DEGREE others;
 *  4. LSH vs the labels after intake, as the pipeline sees them: only documents normalizeArticle
 *     accepts (boilerplate pages refused), with their cleaned text (boilerplate lines stripped).
 * Disagreements are printed for a person to inspect; the labels are heuristic, not ground truth.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NearDuplicateFilter, resolveDedupeOptions } from '../processors/dedupe/drop-near-duplicates.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { bandKeys } from '../processors/dedupe/lsh-bands.js';
import { MinHasher } from '../processors/dedupe/minhash.js';
import { exactSimilarPairs, lshSimilarPairs, type SimilarPair } from '../devkit/similarity-join.js';
import { jaccard, shingles, wordTokens } from '../processors/dedupe/trigram-shingles.js';
import type { Chunk } from '../schemas/records.generated.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { readRealtimeQaDocs } from '../devkit/realtimeqa-documents.js';

const LABELS_FILE = 'derived/neardup_pairs_jaccard_ge_0.5.json';
/** A text shared by this many near-duplicates is a page template, not a story (see the header). */
const TEMPLATE_DEGREE = 20;
const SHOWN_DISAGREEMENTS = 10;

/** Scheme, `www.`, query, fragment, `/index.html` and trailing slashes removed; host lower-cased. */
export function comparableUrl(url: string): string {
  const withoutScheme = url.replace(/^https?:\/\//i, '');
  const slash = withoutScheme.indexOf('/');
  const host = (slash < 0 ? withoutScheme : withoutScheme.slice(0, slash)).toLowerCase().replace(/^www\./, '');
  const path = (slash < 0 ? '' : withoutScheme.slice(slash)).replace(/[?#].*$/, '');
  return `${host}${path.replace(/\/index\.html?$/i, '').replace(/\/+$/, '')}`;
}

/** The labels' own measure, recomputed: Jaccard of lower-cased 5-word shingles. */
function fiveWordJaccard(a: string, b: string): number {
  const grams = (text: string): Set<string> => {
    const tokens = wordTokens(text);
    const out = new Set<string>();
    for (let i = 0; i + 4 < tokens.length; i++) out.add(tokens.slice(i, i + 5).join(' '));
    return out;
  };
  const x = grams(a);
  const y = grams(b);
  if (x.size === 0 || y.size === 0) return 0;
  let common = 0;
  for (const g of x) if (y.has(g)) common++;
  return common / (x.size + y.size - common);
}

interface Agreement {
  labelled: number;
  found: number;
  both: number;
  precision: number;
  recall: number;
  f1: number;
}

function agreement(found: ReadonlySet<string>, labelled: ReadonlySet<string>): Agreement {
  let both = 0;
  for (const key of found) if (labelled.has(key)) both++;
  const precision = found.size === 0 ? 0 : both / found.size;
  const recall = labelled.size === 0 ? 0 : both / labelled.size;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { labelled: labelled.size, found: found.size, both, precision, recall, f1 };
}

function urlPairKey(a: string, b: string): string {
  return a < b ? `${a}\n${b}` : `${b}\n${a}`;
}

function round(x: number, digits = 4): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

function readLabels(dir: string): { jaccard: number; url_a: string; url_b: string }[] {
  const raw = JSON.parse(readFileSync(join(dir, LABELS_FILE), 'utf8')) as unknown;
  if (!Array.isArray(raw)) throw new Error(`${LABELS_FILE} is not an array`);
  return (raw as unknown[]).flatMap((item) => {
    const r = item as Record<string, unknown>;
    return typeof r.url_a === 'string' && typeof r.url_b === 'string' && typeof r.jaccard === 'number'
      ? [{ jaccard: r.jaccard, url_a: r.url_a, url_b: r.url_b }]
      : [];
  });
}

function main(): void {
  const dir = devDataPath('realtimeqa');
  if (dir === undefined || !existsSync(join(dir, LABELS_FILE))) {
    console.log(`dedupe-quality: ${missingDevDataMessage('realtimeqa')}`);
    return;
  }
  const options = resolveDedupeOptions();
  const started = performance.now();
  const { docs, badLines, files } = readRealtimeQaDocs(dir);
  const labels = readLabels(dir);
  const byUrl = new Map(docs.map((d, i) => [d.url, i]));

  const sets = docs.map((d) => shingles(d.text, options.shingle));
  const hasher = new MinHasher(options.numHashes);
  const plan = { bands: options.bands, rows: options.numHashes / options.bands };
  const keys = sets.map((s) => bandKeys(hasher.signature(s), plan));
  const lsh = lshSimilarPairs(sets, keys, options.threshold);
  const exact = exactSimilarPairs(sets, options.threshold);
  const crossUrl = (p: SimilarPair): boolean => comparableUrl(docs[p.a]!.url) !== comparableUrl(docs[p.b]!.url);
  const lshPairs = lsh.pairs.filter(crossUrl);
  const exactPairs = exact.pairs.filter(crossUrl);

  // Template pages: many near-duplicates by the exact measure.
  const degree = new Map<number, number>();
  for (const p of exact.pairs) {
    degree.set(p.a, (degree.get(p.a) ?? 0) + 1);
    degree.set(p.b, (degree.get(p.b) ?? 0) + 1);
  }
  const isTemplate = (i: number): boolean => (degree.get(i) ?? 0) >= TEMPLATE_DEGREE;
  const templates = docs.filter((_, i) => isTemplate(i)).length;

  const key = (p: SimilarPair): string => urlPairKey(docs[p.a]!.url, docs[p.b]!.url);
  const lshKeys = new Set(lshPairs.map(key));
  const exactKeys = new Set(exactPairs.map(key));
  const labelKeys = new Set(labels.map((l) => urlPairKey(l.url_a, l.url_b)));
  const missingLabelDocs = labels.filter((l) => !byUrl.has(l.url_a) || !byUrl.has(l.url_b)).length;
  const notTemplate = (k: string): boolean => {
    const [a, b] = k.split('\n') as [string, string];
    return !isTemplate(byUrl.get(a) ?? -1) && !isTemplate(byUrl.get(b) ?? -1);
  };
  const lshNoTemplates = new Set([...lshKeys].filter(notTemplate));
  const labelNoTemplates = new Set([...labelKeys].filter(notTemplate));

  // After intake: the documents and text the pipeline would dedupe.
  const afterIntakeNow = Date.UTC(2024, 0, 1);
  const cleaned = docs.map((d) => {
    try {
      const input = { url: d.url, title: d.title, text: d.text };
      return normalizeArticle(
        d.publishDate === null ? input : { ...input, published_at: d.publishDate },
        afterIntakeNow,
      ).text;
    } catch {
      return undefined;
    }
  });
  const acceptedIdx = cleaned.flatMap((text, i) => (text === undefined ? [] : [i]));
  const acceptedSets = acceptedIdx.map((i) => shingles(cleaned[i]!, options.shingle));
  const acceptedKeys = acceptedSets.map((s) => bandKeys(hasher.signature(s), plan));
  const afterIntakePairs = lshSimilarPairs(acceptedSets, acceptedKeys, options.threshold)
    .pairs.map((p) => ({ a: acceptedIdx[p.a]!, b: acceptedIdx[p.b]!, similarity: p.similarity }))
    .filter(crossUrl);
  const acceptedUrls = new Set(acceptedIdx.map((i) => docs[i]!.url));
  const labelAfterIntake = new Set(
    labels
      .filter((l) => acceptedUrls.has(l.url_a) && acceptedUrls.has(l.url_b))
      .map((l) => urlPairKey(l.url_a, l.url_b)),
  );
  const afterIntakeKeys = new Set(afterIntakePairs.map((p) => urlPairKey(docs[p.a]!.url, docs[p.b]!.url)));

  // The product path: the streaming filter over the documents in publication order, window unbounded.
  const order = docs
    .map((d, i) => ({ i, t: d.publishDate === null ? Number.NaN : Date.parse(d.publishDate.replace(/\//g, '-')) }))
    .filter((x) => Number.isFinite(x.t))
    .sort((x, y) => x.t - y.t || x.i - y.i);
  const filter = new NearDuplicateFilter({ windowMs: 100 * 365 * 24 * 3600 * 1000 });
  let dropped = 0;
  for (const { i, t } of order) {
    const doc = docs[i]!;
    const chunk: Chunk = {
      id: `doc-${i}`,
      article_id: `doc-${i}`,
      index: 0,
      text: doc.text,
      title: doc.title,
      marked_text: doc.text,
      entity_ids: [],
      entities: [],
      t,
      provenance: [{ article_id: `doc-${i}`, url: doc.url, source: 'realtimeqa', published_at: t }],
    };
    if (filter.offer(chunk).kind === 'duplicate') dropped++;
  }

  const report = {
    data: {
      files,
      documents: docs.length,
      bad_lines: badLines,
      labelled_pairs: labels.length,
      missing_label_docs: missingLabelDocs,
    },
    options: { ...options, rows: plan.rows },
    lsh_vs_exact_trigram: {
      exact_pairs: exactPairs.length,
      lsh_pairs: lshPairs.length,
      recall: exactPairs.length === 0 ? 1 : round(lshPairs.length / exactPairs.length),
      lsh_candidates_verified: lsh.candidates,
    },
    vs_labels_all_documents: mapValues(agreement(lshKeys, labelKeys)),
    vs_labels_without_templates: {
      template_documents: templates,
      ...mapValues(agreement(lshNoTemplates, labelNoTemplates)),
    },
    vs_labels_after_intake: {
      documents_accepted: acceptedIdx.length,
      ...mapValues(agreement(afterIntakeKeys, labelAfterIntake)),
    },
    exact_trigram_vs_labels_without_templates: mapValues(
      agreement(new Set([...exactKeys].filter(notTemplate)), labelNoTemplates),
    ),
    streaming_filter: {
      documents_offered: order.length,
      dropped_as_duplicates: dropped,
      undated_skipped: docs.length - order.length,
    },
    seconds: round((performance.now() - started) / 1000, 1),
  };
  console.log(JSON.stringify(report, null, 2));

  const show = (title: string, keysToShow: string[], labelled: Map<string, number>): void => {
    console.log(`\n${title} (${keysToShow.length}; up to ${SHOWN_DISAGREEMENTS} shown)`);
    for (const k of keysToShow.slice(0, SHOWN_DISAGREEMENTS)) {
      const [ua, ub] = k.split('\n') as [string, string];
      const a = docs[byUrl.get(ua)!]!;
      const b = docs[byUrl.get(ub)!]!;
      const trigram = lshPairs.find((p) => key(p) === k)?.similarity;
      const ours = trigram ?? exactPairs.find((p) => key(p) === k)?.similarity;
      const word3 = ours ?? jaccard(shingles(a.text, options.shingle), shingles(b.text, options.shingle));
      console.log(
        `- word-trigram J ${round(word3, 3)} | 5-word J ${round(fiveWordJaccard(a.text, b.text), 3)}` +
          `${labelled.has(k) ? ` (label says ${round(labelled.get(k)!, 3)})` : ''}\n  A: ${a.title}\n     ${a.url}\n  B: ${b.title}\n     ${b.url}`,
      );
    }
  };
  const labelJaccard = new Map(labels.map((l) => [urlPairKey(l.url_a, l.url_b), l.jaccard]));
  show(
    'Found by LSH, not labelled (templates set aside)',
    [...lshNoTemplates].filter((k) => !labelNoTemplates.has(k)),
    labelJaccard,
  );
  show(
    'After intake: found by LSH, not labelled',
    [...afterIntakeKeys].filter((k) => !labelAfterIntake.has(k)),
    labelJaccard,
  );
  show(
    'Labelled, not found by LSH',
    [...labelKeys].filter((k) => !lshKeys.has(k) && byUrl.has(k.split('\n')[0]!) && byUrl.has(k.split('\n')[1]!)),
    labelJaccard,
  );
}

function mapValues(a: Agreement): Record<string, number> {
  return {
    labelled: a.labelled,
    found: a.found,
    both: a.both,
    precision: round(a.precision),
    recall: round(a.recall),
    f1: round(a.f1),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();

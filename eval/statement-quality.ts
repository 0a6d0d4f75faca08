/**
 * `npm run eval -- statements [--articles 400] [--sample-limit N] [--examples 0]`: what the offline
 * interaction extractor writes, on the bundled sample (Wikipedia Current Events 2025 Q1, `samples/`
 * of the repository) and on RealTime QA articles (the development data, read at run time; skipped
 * with a message when absent). Both go through the product's own intake normalisation, markup,
 * chunking and dedupe, then M1 extraction with every entity a target (the offline default), with a
 * statement written once as the extract stage writes it.
 *
 * Per dataset:
 * - interactions per unique chunk and per article, and documents (chunks + interactions) per article;
 * - the share of statements with a verb, and with a finite one (compromise's tags of the statement
 *   read alone: a cut-out like "NEOS party in Austria" has neither);
 * - the share that are whole sentences (every word of the sentence they come from, bracketed asides
 *   aside) and the mean share of their sentence's words they keep; mean length in words;
 * - the extractor's time per chunk (every entity of the chunk asked, as the stage asks), next to
 *   markup, chunking and dedupe per article;
 * - answer coverage (RealTime QA): of the answerable questions (`derived/answerable_question_ids.json`)
 *   whose documents were processed, the share whose correct choice occurs in some interaction text
 *   derived from the question's own documents published on or before the question date — and the
 *   same for the chunks, the ceiling either store can reach.
 *
 * Questions are taken spread evenly over the question dates, all their documents with them, until
 * `--articles` documents are in. Writes `eval/results/statements.json`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import nlp from 'compromise';
import { extractFromChunks } from '../processors/extract/extraction-plan.js';
import { ALL_ENTITIES } from '../processors/extract/extraction-targets.js';
import { OfflineInteractionExtractor } from '../processors/extract/interaction-extractor.js';
import { IntakeRejection, type ArticleInput } from '../processors/intake/article-input.js';
import { canonicalUrl } from '../processors/intake/canonical-url.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { readJsonlArticles } from '../streams/archives/read-jsonl-articles.js';
import { splitSentences } from '../processors/markup/split-sentences.js';
import type { Article, Chunk, Interaction } from '../schemas/records.generated.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { markChunkDedupe } from '../devkit/process-articles.js';

const SAMPLE_FILE = fileURLToPath(
  new URL('../samples/wikipedia-current-events-2025q1/articles.jsonl', import.meta.url),
);
const REALTIMEQA = 'realtimeqa';
/** Statements whose verbs are checked at most (evenly spaced): compromise's tagging is ~1 ms each. */
const VERB_CHECKS = 20_000;

const { values: args } = parseArgs({
  options: {
    articles: { type: 'string', default: '400' },
    'sample-limit': { type: 'string' },
    examples: { type: 'string', default: '0' },
  },
});

interface Question {
  question_id: string;
  question_date: string;
  choices: string[];
  answer: string[];
}

interface SearchDoc {
  url: string;
  title?: string | null;
  text?: string | null;
  publish_date?: string | null;
}

interface DatasetFigures {
  articles: number;
  unique_chunks: number;
  interactions: number;
  interactions_per_chunk: number;
  interactions_per_article: number;
  /** What the pipeline indexes per article: its unique chunks and its interactions. */
  documents_per_article: number;
  with_verb: number;
  with_finite_verb: number;
  verb_checked: number;
  whole_sentences: number;
  sentence_words_kept: number;
  mean_words: number;
  extractor_ms_per_chunk: number;
  markup_chunk_dedupe_ms_per_article: number;
  answer_coverage?: { questions: number; interactions: number; chunks: number };
}

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;

/** As eval/realtimeqa.ts compares a choice with a retrieved text. */
function normaliseText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[“”"‘’']/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

interface TaggedTerm {
  normal: string;
  tags: string[];
}

/** Whether compromise, reading the text alone, finds a verb, and a finite one (not a gerund, not "to" + infinitive). */
function verbsOf(text: string): { verb: boolean; finite: boolean } {
  const terms = (nlp(text).json({ terms: { normal: true } }) as { terms: TaggedTerm[] }[]).flatMap((s) => s.terms);
  let verb = false;
  let finite = false;
  terms.forEach((term, i) => {
    const tags = new Set(term.tags);
    if (!tags.has('Verb')) return;
    verb = true;
    if (tags.has('Gerund')) return;
    if (tags.has('Infinitive') && terms[i - 1]?.normal === 'to') return;
    if (['PastTense', 'PresentTense', 'Modal', 'Copula', 'Auxiliary'].some((t) => tags.has(t))) finite = true;
  });
  return { verb, finite };
}

/**
 * How much of its sentence a statement keeps: the sentence of its chunk it shares most words with,
 * and the share of that sentence's words (bracketed asides left out) the statement holds.
 */
function sentenceShare(statement: string, chunk: Chunk): number {
  const own = new Set(words(statement));
  let best = { shared: -1, share: 0 };
  for (const range of splitSentences(chunk.text)) {
    const sentence = words(chunk.text.slice(range.start, range.end).replace(/\([^()]*\)/g, ' '));
    if (sentence.length === 0) continue;
    const shared = sentence.filter((w) => own.has(w)).length;
    if (shared > best.shared) best = { shared, share: shared / sentence.length };
  }
  return best.share;
}

async function extract(chunks: Chunk[]): Promise<{ interactions: Interaction[]; msPerChunk: number }> {
  const options = {
    extractor: new OfflineInteractionExtractor(),
    targets: ALL_ENTITIES,
    variants: ['M1'] as const,
    concurrency: 1,
  };
  // No warm-up of its own: markup has just run compromise in this process, and a warm-up on the same
  // chunks would leave their sentences in the extractor's memory, which the timed pass would then find.
  const started = performance.now();
  const report = await extractFromChunks(chunks, options);
  return { interactions: report.interactions, msPerChunk: (performance.now() - started) / Math.max(1, chunks.length) };
}

function figuresOf(
  articles: readonly Article[],
  chunks: readonly Chunk[],
  interactions: readonly Interaction[],
  timing: { extractorMsPerChunk: number; markupMsPerArticle: number },
): DatasetFigures {
  const byId = new Map(chunks.map((c) => [c.id, c]));
  const step = Math.max(1, Math.ceil(interactions.length / VERB_CHECKS));
  let checked = 0;
  let withVerb = 0;
  let withFinite = 0;
  let whole = 0;
  let kept = 0;
  let totalWords = 0;
  interactions.forEach((interaction, i) => {
    totalWords += words(interaction.text).length;
    const share = sentenceShare(interaction.text, byId.get(interaction.chunk_ids[0]!)!);
    kept += share;
    if (share >= 0.999) whole += 1;
    if (i % step !== 0) return;
    checked += 1;
    const { verb, finite } = verbsOf(interaction.text);
    if (verb) withVerb += 1;
    if (finite) withFinite += 1;
  });
  const n = Math.max(1, interactions.length);
  return {
    articles: articles.length,
    unique_chunks: chunks.length,
    interactions: interactions.length,
    interactions_per_chunk: round(interactions.length / Math.max(1, chunks.length), 2),
    interactions_per_article: round(interactions.length / Math.max(1, articles.length), 1),
    documents_per_article: round((chunks.length + interactions.length) / Math.max(1, articles.length), 1),
    with_verb: round(withVerb / Math.max(1, checked)),
    with_finite_verb: round(withFinite / Math.max(1, checked)),
    verb_checked: checked,
    whole_sentences: round(whole / n),
    sentence_words_kept: round(kept / n),
    mean_words: round(totalWords / n, 1),
    extractor_ms_per_chunk: round(timing.extractorMsPerChunk, 2),
    markup_chunk_dedupe_ms_per_article: round(timing.markupMsPerArticle, 1),
  };
}

function printExamples(name: string, interactions: readonly Interaction[], count: number): void {
  if (count <= 0 || interactions.length === 0) return;
  console.log(`\n${name}: ${count} statements, evenly spaced`);
  const step = Math.max(1, Math.floor(interactions.length / count));
  for (let i = 0; i < interactions.length && i / step < count; i += step) {
    const it = interactions[i]!;
    console.log(`  [${it.subject_name} → ${it.object_name ?? '—'}] ${it.text}`);
  }
}

async function prepare(articles: Article[]) {
  const started = performance.now();
  const { chunks } = markChunkDedupe(articles);
  const markupMsPerArticle = (performance.now() - started) / Math.max(1, articles.length);
  const { interactions, msPerChunk } = await extract(chunks);
  return { chunks, interactions, timing: { extractorMsPerChunk: msPerChunk, markupMsPerArticle } };
}

async function sampleFigures(limit: number, examples: number): Promise<DatasetFigures | undefined> {
  if (!existsSync(SAMPLE_FILE)) {
    console.log(`the bundled sample ${SAMPLE_FILE} is missing; skipped`);
    return undefined;
  }
  const now = Date.now();
  const articles: Article[] = [];
  for await (const line of readJsonlArticles(SAMPLE_FILE)) {
    if (articles.length >= limit) break;
    if (line.input === undefined) continue;
    try {
      articles.push(normalizeArticle(line.input, now));
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
    }
  }
  articles.sort((a, b) => a.published_at - b.published_at);
  const { chunks, interactions, timing } = await prepare(articles);
  printExamples('sample', interactions, examples);
  return figuresOf(articles, chunks, interactions, timing);
}

function readJsonl<T>(path: string): T[] {
  const raw = path.endsWith('.gz') ? gunzipSync(readFileSync(path)).toString('utf8') : readFileSync(path, 'utf8');
  return raw
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(suffix))
    .sort()
    .map((name) => join(dir, name));
}

/** End of the question's day, UTC (dates come as YYYY/MM/DD or YYYY-MM-DD). */
const questionTime = (date: string): number => Date.parse(`${date.replace(/\//g, '-')}T23:59:59.999Z`);

/** `count` questions spread evenly over the question dates. */
function spreadOverTime(all: readonly Question[], count: number): Question[] {
  const byDate = [...all].sort(
    (a, b) => a.question_date.localeCompare(b.question_date) || a.question_id.localeCompare(b.question_id),
  );
  if (count >= byDate.length) return byDate;
  return Array.from({ length: count }, (_, i) => byDate[Math.floor((i * byDate.length) / count)]!);
}

async function realtimeQaFigures(base: string, wantedArticles: number, examples: number): Promise<DatasetFigures> {
  const answerable = new Set(
    JSON.parse(readFileSync(join(base, 'derived', 'answerable_question_ids.json'), 'utf8')) as string[],
  );
  const questions = new Map<string, Question>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'qa', year), '_qa.jsonl')) {
      for (const q of readJsonl<Question>(file)) {
        if (answerable.has(q.question_id) && !questions.has(q.question_id)) questions.set(q.question_id, q);
      }
    }
  }
  const docsOf = new Map<string, Map<string, SearchDoc>>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'docs', year), '.jsonl.gz')) {
      for (const line of readJsonl<{ question_id: string; search_result: SearchDoc[] }>(file)) {
        if (!questions.has(line.question_id)) continue;
        const docs = docsOf.get(line.question_id) ?? new Map<string, SearchDoc>();
        for (const doc of line.search_result) docs.set(canonicalUrl(doc.url), doc);
        docsOf.set(line.question_id, docs);
      }
    }
  }
  const candidates = [...questions.values()].filter((q) => docsOf.has(q.question_id));
  // The fewest questions, spread over the dates, whose documents make up the articles asked for.
  let chosen: Question[] = [];
  const docs = new Map<string, SearchDoc>();
  for (let count = 1; count <= candidates.length; count++) {
    chosen = spreadOverTime(candidates, count);
    docs.clear();
    for (const q of chosen) for (const [url, doc] of docsOf.get(q.question_id)!) docs.set(url, doc);
    if (docs.size >= wantedArticles) break;
  }

  const now = Date.now();
  const articleOfUrl = new Map<string, Article>();
  for (const [url, doc] of docs) {
    const input: ArticleInput = {
      url: doc.url,
      title: doc.title ?? '',
      text: doc.text ?? '',
      ...(doc.publish_date ? { published_at: doc.publish_date.replace(/\//g, '-') } : {}),
      source: new URL(doc.url).hostname.replace(/^www\./, ''),
    };
    try {
      articleOfUrl.set(url, normalizeArticle(input, now));
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
    }
  }
  const articles = [...new Map([...articleOfUrl.values()].map((a) => [a.id, a])).values()].sort(
    (a, b) => a.published_at - b.published_at || a.id.localeCompare(b.id),
  );
  const { chunks, interactions, timing } = await prepare(articles);
  printExamples('RealTime QA', interactions, examples);
  const figures = figuresOf(articles, chunks, interactions, timing);

  // Texts by the articles they derive from (a deduplicated chunk cites every copy of its text).
  const textsByArticle = (items: { texts: string; articleIds: string[] }[]) => {
    const map = new Map<string, string[]>();
    for (const item of items) {
      for (const id of item.articleIds) map.set(id, [...(map.get(id) ?? []), item.texts]);
    }
    return map;
  };
  const interactionTexts = textsByArticle(
    interactions.map((i) => ({ texts: normaliseText(i.text), articleIds: i.article_ids })),
  );
  const chunkTexts = textsByArticle(
    chunks.map((c) => ({ texts: normaliseText(c.text), articleIds: c.provenance.map((p) => p.article_id) })),
  );
  let asked = 0;
  let inInteractions = 0;
  let inChunks = 0;
  for (const question of chosen) {
    const tq = questionTime(question.question_date);
    const own = [...docsOf.get(question.question_id)!.keys()]
      .map((url) => articleOfUrl.get(url))
      .filter((a): a is Article => a !== undefined && a.published_at <= tq)
      .map((a) => a.id);
    const choice = normaliseText(question.choices[Number(question.answer[0])] ?? '');
    if (own.length === 0 || choice === '') continue;
    asked += 1;
    const found = (texts: Map<string, string[]>) =>
      own.some((id) => (texts.get(id) ?? []).some((t) => t.includes(choice)));
    if (found(interactionTexts)) inInteractions += 1;
    if (found(chunkTexts)) inChunks += 1;
  }
  figures.answer_coverage = {
    questions: asked,
    interactions: round(inInteractions / Math.max(1, asked)),
    chunks: round(inChunks / Math.max(1, asked)),
  };
  return figures;
}

function printTable(model: string, results: Record<string, DatasetFigures>): void {
  const names = Object.keys(results);
  const rows: [string, (f: DatasetFigures) => string][] = [
    ['articles', (f) => String(f.articles)],
    ['unique chunks', (f) => String(f.unique_chunks)],
    ['interactions', (f) => String(f.interactions)],
    ['interactions per chunk', (f) => f.interactions_per_chunk.toFixed(2)],
    ['interactions per article', (f) => f.interactions_per_article.toFixed(1)],
    ['documents per article (chunks + interactions)', (f) => f.documents_per_article.toFixed(1)],
    ['with a verb', (f) => `${(100 * f.with_verb).toFixed(1)}%`],
    ['with a finite verb', (f) => `${(100 * f.with_finite_verb).toFixed(1)}%`],
    ['whole sentences', (f) => `${(100 * f.whole_sentences).toFixed(1)}%`],
    ["share of the sentence's words kept", (f) => `${(100 * f.sentence_words_kept).toFixed(1)}%`],
    ['mean length (words)', (f) => f.mean_words.toFixed(1)],
    ['extractor ms per chunk', (f) => f.extractor_ms_per_chunk.toFixed(2)],
    ['markup+chunk+dedupe ms per article', (f) => f.markup_chunk_dedupe_ms_per_article.toFixed(1)],
    ['answer coverage: questions', (f) => (f.answer_coverage ? String(f.answer_coverage.questions) : '—')],
    [
      'answer coverage: interactions',
      (f) => (f.answer_coverage ? `${(100 * f.answer_coverage.interactions).toFixed(1)}%` : '—'),
    ],
    [
      'answer coverage: chunks (ceiling)',
      (f) => (f.answer_coverage ? `${(100 * f.answer_coverage.chunks).toFixed(1)}%` : '—'),
    ],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  console.log(`\nstatements by ${model}`);
  console.log(`${''.padEnd(width)}  ${names.map((n) => n.padStart(14)).join('')}`);
  for (const [label, cell] of rows) {
    console.log(`${label.padEnd(width)}  ${names.map((n) => cell(results[n]!).padStart(14)).join('')}`);
  }
}

async function main(): Promise<void> {
  const wantedArticles = Number(args.articles);
  const sampleLimit = args['sample-limit'] === undefined ? Infinity : Number(args['sample-limit']);
  const examples = Number(args.examples);
  if (!(wantedArticles >= 0) || !(sampleLimit >= 0) || !(examples >= 0)) {
    console.error('--articles, --sample-limit and --examples take numbers ≥ 0');
    process.exit(2);
  }
  const model = new OfflineInteractionExtractor().model;
  const results: Record<string, DatasetFigures> = {};
  const sample = await sampleFigures(sampleLimit, examples);
  if (sample) results.sample = sample;
  const base = devDataPath(REALTIMEQA);
  if (base === undefined) console.log(missingDevDataMessage(REALTIMEQA));
  else if (wantedArticles > 0) results.realtimeqa = await realtimeQaFigures(base, wantedArticles, examples);
  const output = { model, datasets: results };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/statements.json', import.meta.url), `${JSON.stringify(output, null, 2)}\n`);
  printTable(model, results);
}

await main();

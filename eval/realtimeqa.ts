/**
 * `npm run eval -- realtimeqa [--questions N] [--k 5] [--configs a,b] [--stores s,t] [--baseline c/s]
 * [--compare b/s:a/s,…] [--no-cache] [--extractive-answers] [--per-question FILE]`: temporal
 * retrieval and answer quality on RealTime QA 2022–2023 (read at run time from the development
 * data, never copied; skips with a message when absent). Every question by default; `--questions N`
 * takes N spread evenly over the question dates.
 *
 * The documents retrieved for the evaluated questions (and the 2022 gold articles) go through the
 * product's own intake normalisation, markup, chunking, dedupe and extraction (the LLM of
 * `NEON_LLM_*` if set, else the offline extractor), then are embedded with the configured embedder
 * (the local bge-small-en-v1.5-q by default, one inference per core: `withEveryCore`) and indexed
 * into a fresh pair of datastores on real Elasticsearch. Vectors are cached on disk by model, purpose and text, and the prepared chunks by
 * articles and code version (`<NEON_CACHE_DIR>/vectors`, `…/eval-prepared-chunks`; `--no-cache`
 * for neither), so a rerun embeds and marks up only what changed.
 *
 * Every question is then asked as of its question date (the end of that day, UTC) under each
 * configuration of `eval/retrieval-configurations.ts` (`--configs`) on each store (`--stores`), once,
 * at depth max(10, k), and answered with the product's `answerQuestion` (extractive; the LLM's answer
 * when `NEON_LLM_*` is set, unless `--extractive-answers`). Scored (`eval/answer-scores.ts`):
 *
 * - `gold_recall@k`: a top-k item comes from a gold evidence article (2022 gold questions);
 * - `recall@1`, `answer_recall@k`: the first / a top-k item's text (or, for an interaction, the
 *   source passage returned with it) contains the correct choice (answerable questions, as listed in
 *   `derived/answerable_question_ids.json`); `statement_recall@k`: the same in the items' own text
 *   only (an interaction's statement without its passage; for chunks it equals answer_recall@k);
 * - `answer_recall@k_not_quiz`: answer_recall@k not counting items that ask the question themselves
 *   (the weekly news quiz a question comes from is in the corpus, dated before the question, with
 *   all its choices: retrieving it finds the question, not the evidence);
 * - `mrr@10`: the reciprocal rank of the first item containing the correct choice in the top 10, 0
 *   if none (answerable questions);
 * - `answer_in_answer`: the composed answer contains the correct choice (answerable questions);
 *   `answer_in_first_line`: its first line does (the extractive answer's lead);
 * - `leakage`: the share of retrieved items published after the question date (must be 0);
 * - `mc_accuracy`: the choice mentioned most often in the top-k texts is the correct one (all questions;
 *   a tie is no answer). `mc_accuracy_<reranker>`: the same with the other answer rerankings of
 *   `eval/rerank-answers.ts`.
 *
 * Each figure comes with its n and 95% interval (Wilson; bootstrap for `mrr@10`), and each
 * configuration is compared with the baseline (`--baseline`, default the product's default
 * `tempralm/interactions`) or the pairs of `--compare`, question by question: the difference with a
 * paired bootstrap 95% interval and, for the 0/1 figures, McNemar's exact p.
 *
 * Writes `eval/results/realtimeqa.json` as `{"strategies": {"<configuration>/<store>": {"gold_recall@5",
 * "recall@1", "answer_recall@5", "mrr@10", "answer_in_answer", "leakage", "mc_accuracy", …, "questions",
 * "n": {…}, "ci95": {…}}}, "comparisons": {…}, "seconds": {…}}` and prints a table.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { chatModelFromEnv } from '../streams/llm/openai-chat-model.js';
import { ANSWER_RERANKERS } from './rerank-answers.js';
import { STORES, type Store } from '../processors/query/search-request.js';
import { answerQuestion } from '../streams/retrieval/answer-question.js';
import { DatastoreUnavailable, RetrievalTimeout } from '../streams/datastore/datastore.js';
import { scoreQuestion, summarise, figureValues, MRR_DEPTH, type QuestionScore } from './answer-scores.js';
import { CachedEmbedder } from './cached-embedder.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { pairedComparison } from '../devkit/interval-statistics.js';
import { loadRealtimeQa, questionTime } from './realtimeqa-data.js';
import { setUpRealtimeQaIndex } from './realtimeqa-setup.js';
import { fixedStore, requestFor, selectConfigurations } from './retrieval-configurations.js';

const DATASET = 'realtimeqa';
/** Questions asked at once: enough to overlap the Elasticsearch round trips, few enough for 2 cores. */
const QUESTIONS_AT_ONCE = 4;

const { values: args } = parseArgs({
  options: {
    questions: { type: 'string' },
    k: { type: 'string', default: '5' },
    configs: { type: 'string' },
    stores: { type: 'string' },
    baseline: { type: 'string', default: 'tempralm/interactions' },
    compare: { type: 'string' },
    'no-cache': { type: 'boolean', default: false },
    'extractive-answers': { type: 'boolean', default: false },
    'interaction-text': { type: 'string', default: 'plain' },
    'per-question': { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

const K = Number(args.k);
if (args['interaction-text'] !== 'plain' && args['interaction-text'] !== 'dated') {
  fail(`--interaction-text must be plain or dated (got "${args['interaction-text']}")`);
}
if (!Number.isInteger(K) || K < 1 || K > 100) fail(`--k must be an integer from 1 to 100 (got "${args.k}")`);
const DEPTH = Math.max(MRR_DEPTH, K);
const limit = args.questions === undefined ? undefined : Number(args.questions);
if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
  fail(`--questions must be a positive integer (got "${args.questions}")`);
}
const chosen = selectConfigurations(args.configs);
const configurations = chosen.ok
  ? chosen.selected
  : fail(`--configs: unknown ${chosen.unknown.join(', ') || '(none given)'}`);
const wantedStores = args.stores === undefined ? [...STORES] : args.stores.split(',').map((s) => s.trim());
const badStores = wantedStores.filter((s) => !(STORES as readonly string[]).includes(s));
if (badStores.length > 0) fail(`--stores: unknown ${badStores.join(', ')} (known: ${STORES.join(', ')})`);
const comparePairs = (args.compare ?? '')
  .split(',')
  .filter((p) => p.trim() !== '')
  .map((pair) => {
    const [b, a] = pair.split(':').map((s) => s.trim());
    if (!a || !b) fail(`--compare takes pairs "b/store:a/store" (got "${pair}")`);
    return { a, b };
  });

async function mapAtMost<T, R>(
  items: readonly T[],
  atOnce: number,
  run: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await run(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, worker));
  return results;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** A question whose retrieval kept failing: counted apart, in no figure. */
const failedScore: QuestionScore = {
  failed: true,
  retrieved: 0,
  leaked: 0,
  mcCorrect: Object.fromEntries(ANSWER_RERANKERS.map((r) => [r, false])) as QuestionScore['mcCorrect'],
};

/**
 * A retrieval that times out or finds the datastore away is tried again (a loaded machine can hold
 * one search past its 5 s); after three tries the question is counted as failed rather than ending
 * an hour-long run. Other errors are bugs and end it.
 */
async function answerWithRetries<T>(run: () => Promise<T>): Promise<T | undefined> {
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof RetrievalTimeout || error instanceof DatastoreUnavailable)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
  return undefined;
}

/** What the per-question file shows of a retrieved item: enough to see why a question missed. */
interface RetrievedSummary {
  /** The item's id (a chunk's names its article: `<article id>:v<version>:<index>`). */
  id: string;
  published_at: string;
  score: number;
  /** The item's first 160 characters, whitespace collapsed. */
  text: string;
}

const PREVIEW_CHARACTERS = 160;

function summaryOf(item: { id: string; published_at: string; score: number; text: string }): RetrievedSummary {
  return {
    id: item.id,
    published_at: item.published_at.slice(0, 10),
    score: Number(item.score.toPrecision(4)),
    text: item.text.replace(/\s+/g, ' ').trim().slice(0, PREVIEW_CHARACTERS),
  };
}

/**
 * One line per question of a configuration (`--per-question FILE`, appended): its id, its scores and
 * the start of each retrieved item, so that runs of different code on the same questions can be
 * compared question by question and a miss read without rerunning it.
 */
function writePerQuestion(
  file: string,
  key: string,
  questions: readonly { question_id: string }[],
  perQuestion: readonly QuestionScore[],
  retrieved: readonly (readonly RetrievedSummary[] | undefined)[],
): void {
  const lines = perQuestion.map((score, i) =>
    JSON.stringify({
      configuration: key,
      id: questions[i]!.question_id,
      failed: score.failed === true,
      answer_rank: score.answerRank ?? null,
      statement_rank: score.textRank ?? null,
      not_quiz_rank: score.notQuizRank ?? null,
      answer_in_answer: score.answerInAnswer ?? null,
      answer_in_first_line: score.answerInFirstLine ?? null,
      lead_context: score.leadContext === true,
      gold_rank: score.goldRank ?? null,
      leaked: score.leaked,
      retrieved: retrieved[i] ?? [],
    }),
  );
  appendFileSync(file, `${lines.join('\n')}\n`);
}

async function main(): Promise<void> {
  const base = devDataPath(DATASET);
  if (base === undefined) {
    console.log(missingDevDataMessage(DATASET));
    return;
  }
  const runStarted = performance.now();
  const set = loadRealtimeQa(base, limit);
  const chat = chatModelFromEnv(process.env);
  const answerChat = args['extractive-answers'] ? undefined : chat;
  const index = await setUpRealtimeQaIndex(set, {
    ...(chat ? { extractionChat: chat } : {}),
    cache: !args['no-cache'],
    dateInText: args['interaction-text'] === 'dated',
    stores: [
      ...new Set([
        ...(wantedStores as Store[]),
        ...configurations.flatMap(([, c]) => {
          const fixed = fixedStore(c);
          return fixed ? [fixed] : [];
        }),
      ]),
    ],
  });
  const scores = new Map<string, QuestionScore[]>();
  const askSeconds: Record<string, number> = {};
  const fallbacks: Record<string, number> = {};
  const failures: Record<string, number> = {};
  let output: Record<string, unknown>;
  try {
    const asked = set.evaluated.map((question) => ({ question, tq: questionTime(question.question_date) }));
    const askStarted = performance.now();
    for (const [name, configuration] of configurations) {
      const fixed = fixedStore(configuration);
      const stores = (fixed ? [fixed] : (wantedStores as Store[])).filter((s) => index.stores.includes(s));
      for (const store of stores) {
        const key = `${name}/${store}`;
        const started = performance.now();
        let fellBack = 0;
        let failed = 0;
        const retrieved = new Array<RetrievedSummary[] | undefined>(asked.length);
        scores.set(
          key,
          await mapAtMost(asked, QUESTIONS_AT_ONCE, async ({ question, tq }, at) => {
            const request = requestFor(configuration, { q: question.question_sentence, tq }, DEPTH, store);
            const result = await answerWithRetries(() => answerQuestion(index.retriever, request, answerChat));
            if (result === undefined) {
              failed += 1;
              return failedScore;
            }
            if (result.fallback !== undefined) fellBack += 1;
            retrieved[at] = result.items.map(summaryOf);
            return scoreQuestion({
              question,
              tq,
              items: result.items.map((item) => ({
                text: item.text,
                passage: item.passage,
                published_at: item.published_at,
                score: item.score,
                urls: item.chunk_ids.flatMap((id) => index.urlsOfChunk.get(id) ?? []),
              })),
              answer: result.answer,
              leadContext: result.lead?.context !== undefined,
              k: K,
              gold: set.gold.get(question.question_id),
              answerable: set.answerable.has(question.question_id),
            });
          }),
        );
        if (args['per-question'] !== undefined)
          writePerQuestion(args['per-question'], key, set.evaluated, scores.get(key)!, retrieved);
        askSeconds[key] = Math.round((performance.now() - started) / 100) / 10;
        if (fellBack > 0) fallbacks[key] = fellBack;
        if (failed > 0) failures[key] = failed;
        console.error(`  ${key}: ${askSeconds[key]} s`);
      }
    }
    const askTotal = Math.round((performance.now() - askStarted) / 1000);

    const strategies: Record<string, Record<string, unknown>> = {};
    for (const [key, perQuestion] of scores) {
      const figures = summarise(perQuestion, K);
      strategies[key] = {
        ...Object.fromEntries(Object.entries(figures).map(([name, f]) => [name, round(f.value)])),
        questions: perQuestion.length,
        gold_questions: figures[`gold_recall@${K}`]!.n,
        answerable_questions: figures[`answer_recall@${K}`]!.n,
        leaked_items: perQuestion.reduce((sum, s) => sum + s.leaked, 0),
        n: Object.fromEntries(Object.entries(figures).map(([name, f]) => [name, f.n])),
        ci95: Object.fromEntries(
          Object.entries(figures).map(([name, f]) => [name, [round(f.ci95.low), round(f.ci95.high)]]),
        ),
      };
    }

    const compared = comparePairs.length > 0 ? comparePairs : defaultPairs([...scores.keys()], args.baseline);
    const comparisons: Record<string, Record<string, unknown>> = {};
    const COMPARED = [
      `answer_recall@${K}`,
      `answer_recall@${K}_not_quiz`,
      'recall@1',
      `mrr@${MRR_DEPTH}`,
      'answer_in_answer',
      'answer_in_first_line',
      `gold_recall@${K}`,
      'mc_accuracy',
    ];
    for (const { a, b } of compared) {
      const scoresA = scores.get(a);
      const scoresB = scores.get(b);
      if (!scoresA || !scoresB) {
        console.error(`comparison ${b} vs ${a} skipped: ${!scoresA ? a : b} was not run`);
        continue;
      }
      const valuesA = figureValues(scoresA, K);
      const valuesB = figureValues(scoresB, K);
      comparisons[`${b} vs ${a}`] = Object.fromEntries(
        COMPARED.map((figure) => {
          const pairs = valuesA[figure]!.flatMap((x, i) => {
            const y = valuesB[figure]![i];
            return x === undefined || y === undefined ? [] : [[x, y] as const];
          });
          const c = pairedComparison(
            pairs.map(([x]) => x),
            pairs.map(([, y]) => y),
          );
          return [
            figure,
            {
              difference: round(c.difference),
              ci95: [round(c.interval.low), round(c.interval.high)],
              n: c.n,
              ...(c.mcnemarP === undefined
                ? {}
                : { only_a: c.onlyA, only_b: c.onlyB, mcnemar_p: Number(c.mcnemarP.toPrecision(3)) }),
            },
          ];
        }),
      );
    }

    const cached = index.embedder instanceof CachedEmbedder ? index.embedder : undefined;
    output = {
      dataset: `${DATASET} (${set.evaluated.length} of ${set.all} questions)`,
      embedder: index.facts.embedder,
      extraction: index.facts.extraction,
      answers: answerChat ? answerChat.model : 'extractive',
      ...(Object.keys(fallbacks).length > 0 ? { answers_fell_back_to_extractive: fallbacks } : {}),
      ...(Object.keys(failures).length > 0 ? { questions_failed_after_retries: failures } : {}),
      articles: index.facts.articles,
      refused_by_intake: index.facts.refused,
      unique_chunks: index.facts.chunks,
      interactions: index.facts.interactions,
      k: K,
      retrieval_depth: DEPTH,
      seconds: {
        ...index.facts.seconds,
        ask_and_score: askTotal,
        per_configuration: askSeconds,
        total: Math.round((performance.now() - runStarted) / 1000),
      },
      cache: {
        prepared_chunks: index.facts.prepared_from_cache ? 'hit' : args['no-cache'] ? 'off' : 'miss',
        vectors: cached
          ? { dir: index.facts.vector_cache?.dir, texts_read: cached.stats.hits, texts_embedded: cached.stats.misses }
          : 'off',
      },
      strategies,
      comparisons,
    };
  } finally {
    await index.close();
    await chat?.close();
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/realtimeqa.json', import.meta.url), `${JSON.stringify(output, null, 2)}\n`);
  printTables(output);
}

/** Every run configuration against the baseline (the first run one if the baseline was not run). */
function defaultPairs(keys: readonly string[], baseline: string): { a: string; b: string }[] {
  const reference = keys.includes(baseline) ? baseline : keys[0];
  if (reference === undefined) return [];
  return keys.filter((key) => key !== reference).map((b) => ({ a: reference, b }));
}

function printTables(output: Record<string, unknown>): void {
  const strategies = output.strategies as Record<string, Record<string, unknown>>;
  const first = Object.values(strategies)[0];
  const n = (first?.n ?? {}) as Record<string, number>;
  const cell = (r: Record<string, unknown>, figure: string): string => {
    const [low, high] = (r.ci95 as Record<string, [number, number]>)[figure]!;
    return `${(r[figure] as number).toFixed(3)} (${low.toFixed(2)}–${high.toFixed(2)})`;
  };
  const main = [
    `gold_recall@${K}`,
    'recall@1',
    `answer_recall@${K}`,
    `statement_recall@${K}`,
    `mrr@${MRR_DEPTH}`,
    'answer_in_answer',
    'answer_in_first_line',
    'mc_accuracy',
  ];
  console.log(`${output.dataset as string}; k = ${K}, retrieved ${DEPTH}; answers: ${output.answers as string}`);
  console.log(
    `n: gold ${n[`gold_recall@${K}`] ?? 0}, answerable ${n[`answer_recall@${K}`] ?? 0}, all ${n.mc_accuracy ?? 0}; ` +
      'each figure with its 95% interval',
  );
  console.log('');
  const width = Math.max(22, ...Object.keys(strategies).map((s) => s.length + 1));
  console.log(
    `${'configuration/store'.padEnd(width)}${main.map((m) => m.padStart(22)).join('')}${'leaked'.padStart(8)}`,
  );
  for (const [name, r] of Object.entries(strategies)) {
    console.log(
      `${name.padEnd(width)}${main.map((m) => cell(r, m).padStart(22)).join('')}${String(r.leaked_items).padStart(8)}`,
    );
  }
  console.log('');
  const rerankers = ANSWER_RERANKERS.filter((r) => r !== 'most_common');
  console.log(
    `${'multiple choice'.padEnd(width)}${['most_common', ...rerankers].map((r) => r.replace('temporal_grouping', 'group').padStart(14)).join('')}`,
  );
  for (const [name, r] of Object.entries(strategies)) {
    console.log(
      `${name.padEnd(width)}${['mc_accuracy', ...rerankers.map((x) => `mc_accuracy_${x}`)]
        .map((f) => (r[f] as number).toFixed(3).padStart(14))
        .join('')}`,
    );
  }
  console.log('');
  const notQuiz = `answer_recall@${K}_not_quiz`;
  console.log(`${'without quiz pages'.padEnd(width)}${notQuiz.padStart(20)}`);
  for (const [name, r] of Object.entries(strategies)) {
    console.log(`${name.padEnd(width)}${cell(r, notQuiz).padStart(20)}`);
  }
  const leaking = Object.entries(strategies).filter(([, r]) => (r.leaked_items as number) > 0);
  if (leaking.length > 0) {
    console.log(
      `\nLEAKAGE: items published after the question date were retrieved by ${leaking.map(([name]) => name).join(', ')}`,
    );
  }
  const comparisons = output.comparisons as Record<string, Record<string, Record<string, unknown>>>;
  if (Object.keys(comparisons).length > 0) {
    console.log('');
    const shown = [`answer_recall@${K}`, `mrr@${MRR_DEPTH}`, 'answer_in_answer', `gold_recall@${K}`];
    console.log(`${'paired: B vs A, B − A'.padEnd(2 * width + 4)}${shown.map((m) => m.padStart(30)).join('')}`);
    for (const [pair, figures] of Object.entries(comparisons)) {
      const text = shown.map((figure) => {
        const c = figures[figure]!;
        const [low, high] = c.ci95 as [number, number];
        const p = c.mcnemar_p === undefined ? '' : ` p=${(c.mcnemar_p as number).toPrecision(2)}`;
        return `${(c.difference as number) >= 0 ? '+' : ''}${(c.difference as number).toFixed(3)} (${low.toFixed(2)}…${high.toFixed(2)})${p}`.padStart(
          30,
        );
      });
      console.log(`${pair.padEnd(2 * width + 4)}${text.join('')}`);
    }
  }
  const seconds = output.seconds as Record<string, unknown>;
  console.log('');
  console.log(
    `wall time (s): prepare (intake, markup, chunk, dedupe, extract) ${String(seconds.prepare)}, ` +
      `embed+index ${String(seconds.embed_and_index)}, ask+score ${String(seconds.ask_and_score)}, total ${String(seconds.total)}; ` +
      `cache: ${JSON.stringify(output.cache)}`,
  );
}

await main();

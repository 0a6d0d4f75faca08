/**
 * `npm run eval -- realtimeqa [--questions N] [--k 5]`: temporal retrieval quality on RealTime QA
 * 2022–2023 (read at run time from the development data, never copied; skips with a message when
 * absent). Every question by default; `--questions N` takes N spread evenly over the question dates.
 *
 * The documents retrieved for the evaluated questions (and the 2022 gold articles) go through the
 * product's own intake normalisation, markup, chunking, dedupe and extraction, then are embedded with
 * the configured embedder (the local all-MiniLM-L6-v2 by default) and indexed into a fresh pair of
 * datastores on real Elasticsearch. Every question is then asked as of its question date (the end of
 * that day, UTC) with each strategy and store, and scored:
 *
 * - `gold_recall@k`: a top-k item comes from a gold evidence article (2022 gold questions);
 * - `answer_recall@k`: a top-k item's text contains the correct choice (answerable questions, as
 *   listed in `derived/answerable_question_ids.json`);
 * - `leakage`: the share of retrieved items published after the question date (must be 0);
 * - `mc_accuracy`: the choice mentioned most often in the top-k texts is the correct one (all questions;
 *   a tie is no answer). `mc_accuracy_<reranker>`: the same with the other answer rerankings of
 *   `processors/query/rerank-answers.ts` (retrieval, hybrid, most recent, temporal grouping by week
 *   and by month).
 *
 * Retrievals: `temporal`, `generic`, `tempralm`, `generic+around` (META's around constraint on the
 * question's date, ±7 days, as of that date) and `generic+multihop` (a second hop along the entity
 * graph); each over `interactions`, `chunks` and `both`.
 *
 * Writes `eval/results/realtimeqa.json` as
 * `{"strategies": {"<strategy>/<store>": {"gold_recall@5", "answer_recall@5", "leakage", "mc_accuracy", "questions"}}}`.
 */
import { readFileSync, readdirSync, mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Embedder } from '../processors/embed/embedder.js';
import { chunkDocument, interactionDocument, interactionEmbeddingText } from '../processors/index-documents.js';
import { IntakeRejection } from '../processors/intake/article-input.js';
import { canonicalUrl } from '../processors/intake/canonical-url.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import { EntityLinker } from '../processors/query/reformulate-query.js';
import type { SearchRequest, Store, Strategy, TimeConstraint } from '../processors/query/search-request.js';
import {
  ANSWER_RERANKERS,
  findAnswerMentions,
  rerankAnswers,
  type AnswerReranker,
} from '../processors/query/rerank-answers.js';
import { datastoreNames, monthlyIndex } from '../schemas/elasticsearch/datastore-templates.js';
import type { Article } from '../schemas/records.generated.js';
import { extractFromChunks } from '../processors/extract/extraction-plan.js';
import { ALL_ENTITIES } from '../processors/extract/extraction-targets.js';
import { LlmInteractionExtractor, OfflineInteractionExtractor } from '../processors/extract/interaction-extractor.js';
import { chatModelFromEnv } from '../processors/extract/openai-chat-model.js';
import { ensureDatastores, monthlyIndices } from '../streams/datastores.js';
import { createElasticsearchClient } from '../streams/elasticsearch-client.js';
import { configuredEmbedder } from '../bin/commands/cluster-services.js';
import { Retriever, type RetrievedItem } from '../service/retrieve.js';
import { ElasticsearchDatastore } from '../streams/elasticsearch-datastore.js';
import { acquireTestInfrastructure } from '../test/harness/acquire-infrastructure.js';
import { devDataPath, missingDevDataMessage } from './dev-data.js';
import { markChunkDedupe } from './process-articles.js';

const DATASET = 'realtimeqa';
const { values: args } = parseArgs({
  options: {
    questions: { type: 'string' },
    k: { type: 'string', default: '5' },
  },
});
const K = Number(args.k);

/**
 * What is compared: NEON's temporal and generic retrieval, TempRALM, META's `around` constraint
 * (the question's week: RealTime QA asks about the news of the week before its date) and
 * EventRAG-style multi-hop along the entity graph, each on top of generic similarity — every one as
 * of the question date.
 */
const RETRIEVALS: { name: string; strategy: Strategy; constraint: TimeConstraint; hops: number }[] = [
  { name: 'temporal', strategy: 'temporal', constraint: 'none', hops: 1 },
  { name: 'generic', strategy: 'generic', constraint: 'none', hops: 1 },
  { name: 'tempralm', strategy: 'tempralm', constraint: 'none', hops: 1 },
  { name: 'generic+around', strategy: 'generic', constraint: 'around', hops: 1 },
  { name: 'generic+multihop', strategy: 'generic', constraint: 'none', hops: 2 },
];

interface Question {
  question_id: string;
  question_date: string;
  question_sentence: string;
  choices: string[];
  answer: string[];
}

interface SearchDoc {
  url: string;
  title?: string | null;
  text?: string | null;
  publish_date?: string | null;
}

/**
 * `count` questions spread evenly over the question dates (all of them when `count` is larger), so a
 * subset covers 2022 and 2023 alike instead of the first weeks only.
 */
function spreadOverTime(all: Question[], count: number): Question[] {
  const byDate = [...all].sort(
    (a, b) => a.question_date.localeCompare(b.question_date) || a.question_id.localeCompare(b.question_id),
  );
  if (count >= byDate.length) return byDate;
  return Array.from({ length: count }, (_, i) => byDate[Math.floor((i * byDate.length) / count)]!);
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
function questionTime(date: string): number {
  return Date.parse(`${date.replace(/\//g, '-')}T23:59:59.999Z`);
}

function normaliseText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[“”"‘’']/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

async function main(): Promise<void> {
  const base = devDataPath(DATASET);
  if (base === undefined) {
    console.log(missingDevDataMessage(DATASET));
    return;
  }
  // Questions: dedupe by id across the cumulative files; "none of the above" variants left out.
  const questions = new Map<string, Question>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'qa', year), '_qa.jsonl')) {
      for (const q of readJsonl<Question>(file)) if (!questions.has(q.question_id)) questions.set(q.question_id, q);
    }
  }
  const limit = args.questions === undefined ? questions.size : Number(args.questions);
  if (!Number.isInteger(limit) || limit < 1) {
    console.error(`--questions must be a positive integer (got "${args.questions}")`);
    process.exit(2);
  }
  const evaluated = spreadOverTime([...questions.values()], limit);
  const wanted = new Set(evaluated.map((q) => q.question_id));
  const answerable = new Set(
    JSON.parse(readFileSync(join(base, 'derived', 'answerable_question_ids.json'), 'utf8')) as string[],
  );

  // The documents retrieved for those questions, and the gold articles of 2022.
  const docs = new Map<string, SearchDoc>();
  const gold = new Map<string, Set<string>>();
  for (const year of ['2022', '2023']) {
    for (const file of filesUnder(join(base, 'docs', year), '.jsonl.gz')) {
      for (const line of readJsonl<{ question_id: string; search_result: SearchDoc[] }>(file)) {
        if (!wanted.has(line.question_id)) continue;
        for (const doc of line.search_result) docs.set(canonicalUrl(doc.url), doc);
      }
    }
  }
  for (const file of filesUnder(join(base, 'gold', '2022'), '.jsonl')) {
    for (const line of readJsonl<{ question_id: string; search_result?: SearchDoc[] } & SearchDoc>(file)) {
      if (!wanted.has(line.question_id)) continue;
      const articles = line.search_result ?? [line];
      for (const doc of articles) {
        if (!doc.url) continue;
        const url = canonicalUrl(doc.url);
        docs.set(url, doc);
        gold.set(line.question_id, new Set([...(gold.get(line.question_id) ?? []), url]));
      }
    }
  }

  const started = performance.now();
  const now = Date.now();
  const articles: Article[] = [];
  const refused = new Map<string, number>();
  for (const doc of docs.values()) {
    try {
      articles.push(
        normalizeArticle(
          {
            url: doc.url,
            title: doc.title ?? '',
            text: doc.text ?? '',
            ...(doc.publish_date ? { published_at: doc.publish_date.replace(/\//g, '-') } : {}),
            source: new URL(doc.url).hostname.replace(/^www\./, ''),
          },
          now,
        ),
      );
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      refused.set(error.reason, (refused.get(error.reason) ?? 0) + 1);
    }
  }
  articles.sort((a, b) => a.published_at - b.published_at);
  const { registry, chunks } = markChunkDedupe(articles);
  // The interactions datastore: the configured LLM (NEON_LLM_*) if any, else the offline extractor;
  // every entity is a target, as the evaluation asks about entities no spike may have flagged.
  const chat = chatModelFromEnv(process.env);
  const extraction = await extractFromChunks(chunks, {
    extractor: chat ? new LlmInteractionExtractor(chat) : new OfflineInteractionExtractor(),
    targets: ALL_ENTITIES,
    variants: ['M1', 'M2'],
  });
  await chat?.close();
  const interactions = extraction.interactions;
  const prepared = (performance.now() - started) / 1000;
  console.error(
    `${evaluated.length} questions: ${articles.length} articles (${docs.size - articles.length} refused), ` +
      `${chunks.length} unique chunks, ${interactions.length} interactions in ${prepared.toFixed(0)} s; embedding…`,
  );

  const infra = await acquireTestInfrastructure(process.env, (line) => console.error(line));
  const baseEs = createElasticsearchClient({ url: infra.elasticsearchUrl });
  const es =
    Object.keys(infra.elasticsearchHeaders).length === 0
      ? baseEs
      : baseEs.child({ headers: infra.elasticsearchHeaders });
  const embedder: Embedder = await configuredEmbedder();
  const prefix = `eval-rtqa-${Date.now().toString(36)}`;
  const results: Record<string, Record<string, number>> = {};
  try {
    await ensureDatastores(es, { model: embedder.model, dimensions: embedder.dimensions }, { prefix });
    const index = async (
      kind: 'chunks' | 'interactions',
      items: { id: string; t: number; text: string; doc: (v: Float32Array) => Record<string, unknown> }[],
    ) => {
      const names = datastoreNames(kind, prefix);
      for (let i = 0; i < items.length; i += 256) {
        const batch = items.slice(i, i + 256);
        const vectors = await embedder.embed(batch.map((item) => item.text));
        const operations = batch.flatMap((item, j) => [
          { index: { _index: monthlyIndex(names, item.t), _id: item.id } },
          item.doc(vectors[j]!),
        ]);
        const response = await es.bulk({ operations });
        if (response.errors) throw new Error(`bulk indexing into ${kind} failed`);
        if ((i / 256) % 20 === 0) console.error(`  ${kind}: ${Math.min(items.length, i + 256)} / ${items.length}`);
      }
      await es.indices.refresh({ index: `${names.indexPrefix}*` });
    };
    const embedStarted = performance.now();
    await index(
      'chunks',
      chunks.map((c) => ({ id: c.id, t: c.t, text: c.text, doc: (v) => chunkDocument(c, v, embedder.model, now) })),
    );
    await index(
      'interactions',
      interactions.map((i) => ({
        id: i.id,
        t: i.t,
        text: interactionEmbeddingText(i),
        doc: (v) => interactionDocument(i, v, embedder.model, now),
      })),
    );
    const embedSeconds = (performance.now() - embedStarted) / 1000;
    const linker = new EntityLinker(
      [...registry.entities()].map((e) => ({ id: e.id, name: e.name, aliases: e.aliases, mentions: e.mentions })),
    );
    const retriever = new Retriever({ datastore: new ElasticsearchDatastore({ es, prefix }), embedder, linker });
    const urlOfChunk = new Map(chunks.map((c) => [c.id, c.provenance.map((p) => canonicalUrl(p.url))]));
    const stores: Store[] = interactions.length > 0 ? ['interactions', 'chunks', 'both'] : ['chunks'];
    for (const { name, strategy, constraint, hops } of RETRIEVALS) {
      for (const store of stores) {
        let goldHits = 0;
        let goldAsked = 0;
        let answerHits = 0;
        let answerAsked = 0;
        const mcCorrect = new Map<AnswerReranker, number>(ANSWER_RERANKERS.map((r) => [r, 0]));
        let retrieved = 0;
        let leaked = 0;
        for (const question of evaluated) {
          const tq = questionTime(question.question_date);
          const request: SearchRequest = {
            q: question.question_sentence,
            tq,
            k: K,
            strategy,
            store,
            constraint,
            constraintAt: tq,
            windowDays: 7,
            alpha: 1,
            includeFuture: false,
            hops,
          };
          const items: RetrievedItem[] = (await retriever.search(request)).items;
          retrieved += items.length;
          leaked += items.filter((item) => Date.parse(item.published_at) > tq).length;
          const goldUrls = gold.get(question.question_id);
          if (goldUrls) {
            goldAsked += 1;
            const urls = items.flatMap((item) => item.chunk_ids.flatMap((id) => urlOfChunk.get(id) ?? []));
            if (urls.some((url) => goldUrls.has(url))) goldHits += 1;
          }
          const texts = items.map((item) => normaliseText(item.text));
          const correct = Number(question.answer[0]);
          const choice = normaliseText(question.choices[correct] ?? '');
          if (answerable.has(question.question_id)) {
            answerAsked += 1;
            if (choice !== '' && texts.some((t) => t.includes(choice))) answerHits += 1;
          }
          const mentions = findAnswerMentions(
            question.choices,
            items.map((item) => ({ text: item.text, score: item.score, publishedAt: Date.parse(item.published_at) })),
            normaliseText,
          );
          for (const reranker of ANSWER_RERANKERS) {
            if (rerankAnswers(reranker, question.choices.length, mentions) === correct) {
              mcCorrect.set(reranker, mcCorrect.get(reranker)! + 1);
            }
          }
        }
        const ratio = (a: number, b: number): number => (b === 0 ? 0 : Math.round((a / b) * 1000) / 1000);
        results[`${name}/${store}`] = {
          [`gold_recall@${K}`]: ratio(goldHits, goldAsked),
          [`answer_recall@${K}`]: ratio(answerHits, answerAsked),
          leakage: ratio(leaked, retrieved),
          mc_accuracy: ratio(mcCorrect.get('most_common')!, evaluated.length),
          questions: evaluated.length,
          gold_questions: goldAsked,
          answerable_questions: answerAsked,
          ...Object.fromEntries(
            ANSWER_RERANKERS.filter((r) => r !== 'most_common').map((r) => [
              `mc_accuracy_${r}`,
              ratio(mcCorrect.get(r)!, evaluated.length),
            ]),
          ),
        };
      }
    }
    const output = {
      dataset: `${DATASET} (${evaluated.length} of ${questions.size} questions)`,
      embedder: embedder.model,
      extraction: interactions[0]?.model ?? 'none',
      articles: articles.length,
      refused_by_intake: Object.fromEntries(refused),
      unique_chunks: chunks.length,
      interactions: interactions.length,
      seconds: { prepare: Math.round(prepared), embed_and_index: Math.round(embedSeconds) },
      strategies: results,
    };
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(new URL('./results/realtimeqa.json', import.meta.url), `${JSON.stringify(output, null, 2)}\n`);
    console.log(JSON.stringify(output, null, 2));
    console.log('');
    const rerankers = ANSWER_RERANKERS.filter((r) => r !== 'most_common');
    console.log(
      `strategy/store               gold@${K}  answer@${K}  leakage  mc_acc  ` +
        rerankers.map((r) => r.replace('temporal_grouping', 'group').padStart(12)).join(' '),
    );
    for (const [name, r] of Object.entries(results)) {
      console.log(
        `${name.padEnd(27)} ${String(r[`gold_recall@${K}`]).padStart(7)} ${String(r[`answer_recall@${K}`]).padStart(9)} ` +
          `${String(r.leakage).padStart(8)} ${String(r.mc_accuracy).padStart(7)}  ` +
          rerankers.map((x) => String(r[`mc_accuracy_${x}`]).padStart(12)).join(' '),
      );
    }
  } finally {
    for (const kind of ['chunks', 'interactions'] as const) {
      for (const index of await monthlyIndices(es, kind, prefix)) await es.indices.delete({ index });
      await es.indices.deleteIndexTemplate({ name: datastoreNames(kind, prefix).template }, { ignore: [404] });
    }
    await embedder.close();
    await es.close();
    await infra.release();
  }
}

await main();

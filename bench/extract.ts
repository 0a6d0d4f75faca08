/**
 * `npm run bench -- extract [--articles N] [--concurrency 8]`: what NEON extraction costs on a
 * replay of real news — Wikipedia Current Events 2025 Q1 (development data, read at run time, never
 * copied) through intake, markup, chunking and dedupe — per variant (M1, M2) and per target policy:
 *
 * - `spiking`: the targets are the entities the spike detector finds spiking at each chunk's time
 *   (the product's default with an LLM: configured subjects ∪ spiking; none configured here);
 * - `all`: every entity of every chunk (no gating).
 *
 * The LLM is the fake OpenAI-compatible server answering the NEON prompts with clauses of the
 * snippets, reached through the real client over HTTP; it counts calls and tokens (≈ characters / 4,
 * OpenAI's rule of thumb). Reported: calls and tokens per 1,000 articles, tuples per targeted chunk,
 * and the share of articles (and chunks) skipped because no target was involved — the cost gating
 * saves. Skips (exit 0) without the data.
 */
import { parseArgs } from 'node:util';
import { Registry } from 'prom-client';
import { extractFromChunks } from '../processors/extract/extraction-plan.js';
import { ALL_ENTITIES, type ExtractionTargets } from '../processors/extract/extraction-targets.js';
import { LlmInteractionExtractor } from '../processors/extract/interaction-extractor.js';
import { llmConfig } from '../processors/extract/llm-config.js';
import { OpenAiChatModel } from '../streams/llm/openai-chat-model.js';
import { SpikeDetector } from '../processors/spikes/detect-spikes.js';
import { SpikeTargets } from '../processors/spikes/spike-targets.js';
import { IntakeRejection } from '../processors/intake/article-input.js';
import {
  currentEventArticleInput,
  loadWikipediaCurrentEvents,
} from '../streams/archives/load-wikipedia-current-events.js';
import { normalizeArticle } from '../processors/intake/normalize-article.js';
import type { Article, InteractionVariant } from '../schemas/records.generated.js';
import { CURRENT_EVENTS_DATASET, CURRENT_EVENTS_NOW } from '../devkit/current-events-mentions.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import { markChunkDedupe } from '../devkit/process-articles.js';
import { fakeExtractionReply } from '../devkit/fake-extraction-llm.js';
import { startFakeOpenAiServer } from '../devkit/fake-openai-server.js';
import { machineFacts, writeBenchResults } from './results.js';
import { join } from 'node:path';

const { values: args } = parseArgs({
  options: { articles: { type: 'string' }, concurrency: { type: 'string', default: '8' } },
});

const base = devDataPath(CURRENT_EVENTS_DATASET);
if (base === undefined) {
  console.log(missingDevDataMessage(CURRENT_EVENTS_DATASET));
  process.exit(0);
}

const articles: Article[] = [];
for (const item of loadWikipediaCurrentEvents(join(base, 'daily_markdown'))) {
  try {
    articles.push(normalizeArticle(currentEventArticleInput(item), CURRENT_EVENTS_NOW));
  } catch (error) {
    if (!(error instanceof IntakeRejection)) throw error;
  }
}
articles.sort((a, b) => a.published_at - b.published_at);
const used = args.articles === undefined ? articles : articles.slice(0, Number(args.articles));
const { chunks, mentions } = markChunkDedupe(used);

// Spiking entities in event time: the detector over the mentions, its alerts into the targets.
const detector = new SpikeDetector({ now: () => CURRENT_EVENTS_NOW });
const spiking = new SpikeTargets();
for (const mention of mentions) for (const alert of detector.offer(mention, 0).alerts) spiking.apply(alert);

const server = await startFakeOpenAiServer({ chat: fakeExtractionReply });
const concurrency = Number(args.concurrency);
const perThousand = (n: number) => Math.round((n * 1000) / used.length);

interface Row {
  targets: string;
  variant: InteractionVariant;
  calls: number;
  calls_per_1k_articles: number;
  prompt_tokens_per_1k_articles: number;
  completion_tokens_per_1k_articles: number;
  interactions: number;
  tuples_per_targeted_chunk: number;
  targeted_chunks: number;
  skipped_chunks_share: number;
  skipped_articles_share: number;
  rejected: Record<string, number>;
  invalid_replies: number;
  seconds: number;
}

const rows: Row[] = [];
for (const [label, targets] of [
  ['spiking', spiking],
  ['all', ALL_ENTITIES],
] as [string, ExtractionTargets][]) {
  for (const variant of ['M1', 'M2'] as InteractionVariant[]) {
    server.reset();
    // A fresh client each round: its response cache must not carry answers from the last one.
    const chat = new OpenAiChatModel(
      llmConfig({ baseUrl: server.url, model: 'fake-extraction', timeoutMs: 30_000, concurrency }),
      { registry: new Registry() },
    );
    const started = performance.now();
    const report = await extractFromChunks(chunks, {
      extractor: new LlmInteractionExtractor(chat),
      targets,
      variants: [variant],
      concurrency,
    });
    const seconds = (performance.now() - started) / 1000;
    await chat.close();
    const targetedChunks = chunks.length - report.skippedNoTarget;
    const targetedArticles = new Set(
      chunks.filter((c) => c.entities.some((e) => targets.isTarget(e.id, c.t))).map((c) => c.article_id),
    );
    const totals = server.totals;
    rows.push({
      targets: label,
      variant,
      calls: totals.chatCalls,
      calls_per_1k_articles: perThousand(totals.chatCalls),
      prompt_tokens_per_1k_articles: perThousand(totals.promptTokens),
      completion_tokens_per_1k_articles: perThousand(totals.completionTokens),
      interactions: report.interactions.length,
      tuples_per_targeted_chunk: Number((report.interactions.length / Math.max(1, targetedChunks)).toFixed(2)),
      targeted_chunks: targetedChunks,
      skipped_chunks_share: Number((report.skippedNoTarget / chunks.length).toFixed(3)),
      skipped_articles_share: Number((1 - targetedArticles.size / used.length).toFixed(3)),
      rejected: report.rejected,
      invalid_replies: report.invalid,
      seconds: Number(seconds.toFixed(1)),
    });
    console.error(`${label} ${variant}: ${totals.chatCalls} calls in ${seconds.toFixed(1)} s`);
  }
}
await server.close();

const figures = {
  data: `${CURRENT_EVENTS_DATASET}: ${used.length} articles, ${chunks.length} unique chunks, ${mentions.length} mentions`,
  llm: 'fake OpenAI-compatible server (clauses of the snippets), real openai client over HTTP',
  machine: machineFacts(),
  rows,
};
console.table(
  rows.map((r) => ({
    targets: r.targets,
    variant: r.variant,
    'calls/1k art': r.calls_per_1k_articles,
    'prompt tok/1k art': r.prompt_tokens_per_1k_articles,
    'completion tok/1k art': r.completion_tokens_per_1k_articles,
    'tuples/targeted chunk': r.tuples_per_targeted_chunk,
    'chunks skipped': r.skipped_chunks_share,
    'articles skipped': r.skipped_articles_share,
  })),
);
console.log(`written ${writeBenchResults('extract', figures)}`);

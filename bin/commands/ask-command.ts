import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import {
  DEFAULT_FUSION,
  DEFAULT_PER_ARTICLE,
  DEFAULT_STORE,
  DEFAULT_STRATEGY,
  parseSearchRequest,
} from '../../processors/query/search-request.js';
import { FUSION_MODES } from '../../processors/query/fuse-rankings.js';
import { spellDate } from '../../processors/query/reformulate-query.js';
import { chatModelFromEnv } from '../../streams/llm/openai-chat-model.js';
import { answerQuestion, type AnswerResult } from '../../streams/retrieval/answer-question.js';
import type { SearchRequest } from '../../processors/query/search-request.js';
import { callService, findService } from './service-client.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { followRegistryLinker } from '../../streams/views/registry-linker.js';
import { clusterElasticsearch, configuredEmbedder, indexPrefix } from './cluster-services.js';
import { clusterTransport } from './cluster-transport.js';
import { printable } from './terminal-text.js';

interface AskFlags {
  date?: string;
  strategy: string;
  store: string;
  fusion: string;
  perArticle: string;
  k: string;
  windowDays: string;
  hops: string;
  constraint: string;
  constraintDate?: string;
  includeFuture?: boolean;
  timeWords: boolean;
  answerSentences: boolean;
  link: boolean;
  api?: string;
  json?: boolean;
}

/** How the second hop was planned, for the summary line. */
function secondHop(result: AnswerResult): string {
  const planned = result.decomposition;
  if (!planned) return '';
  if (planned.by === 'offline') return ' with a second hop (planned offline)';
  const fallback = planned.fallbacks?.length ? `; offline instead: ${planned.fallbacks.join('; ')}` : '';
  return ` with a second hop (planned by ${planned.by}${fallback})`;
}

function printAnswer(result: AnswerResult, request: SearchRequest, flags: AskFlags): void {
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  const out = (line = ''): void => void process.stdout.write(`${printable(line)}\n`);
  out(result.answer);
  out();
  const time = result.time;
  if (time && (time.expressions.length > 0 || time.recency || time.event)) {
    out(`time: ${time.explanation}${time.applied ? '' : ' (not applied: the request set its own time scope)'}`);
    out();
  }
  for (const c of result.citations) out(`[${c.n}] ${c.published_at.slice(0, 10)}  ${c.url ?? `(${c.kind} ${c.id})`}`);
  out();
  out(
    `${result.items.length} items by ${request.strategy}${secondHop(result)} ` +
      `from ${request.store} (${request.fusion ?? DEFAULT_FUSION} fusion) as of ` +
      `${spellDate(request.tq)}; q′ = "${result.reformulated}"` +
      (result.model ? `; answer by ${result.model}` : result.fallback ? `; extractive (LLM: ${result.fallback})` : ''),
  );
}

/**
 * `neon ask "q" --date D` — answers a question as of a date: through a running neon-stream's API
 * when one is found, otherwise from the datastores directly (ES_URL, or the local node): the extractive answer with citations, and the retrieved items. `--json` prints the
 * whole result (`answer`, `citations`, `items` with `id`, `kind`, `text`, `published_at`, `url`,
 * `score`, and the timings).
 */
export function registerAskCommand(program: Command): void {
  program
    .command('ask')
    .description('answer a question as of a date, with citations, from the indexed news')
    .argument('<question>', 'the question, e.g. "Doja Cat news"')
    .option('--date <date>', 'query time t_q: YYYY-MM-DD (end of that day, UTC) or ISO 8601; default now')
    .option('--strategy <strategy>', 'tempralm | temporal | generic', DEFAULT_STRATEGY)
    .option('--store <store>', 'interactions | chunks | both', DEFAULT_STORE)
    .option('--fusion <fusion>', `${FUSION_MODES.join(' | ')}: how lexical and dense relevance combine`, DEFAULT_FUSION)
    .option('--per-article <n>', 'at most n items from one article (0: no cap)', String(DEFAULT_PER_ARTICLE))
    .option('-k <k>', 'items to retrieve (1–100)', '10')
    .option('--window-days <r>', 'temporal widening ±r days, and the half-width of --constraint around', '7')
    .option('--constraint <c>', 'none | before | after | around (relative to --constraint-date)', 'none')
    .option('--constraint-date <date>', 'anchor of --constraint; default the query time')
    .option('--hops <n>', '2: also follow the entities the first results connect the question to (multi-hop)', '1')
    .option('--include-future', 'also retrieve what was published after the query time')
    .option(
      '--no-time-words',
      'do not read the question\'s own time words ("last week", "the latest") as its time scope',
    )
    .option('--no-answer-sentences', 'fuse the dense and lexical rankings alone, without the answer-sentence one')
    .option('--no-link', 'do not read the entity registry from Kafka to link the question')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--json', 'print the result as JSON')
    .action(async (question: string, flags: AskFlags) => {
      const parsed = parseSearchRequest(
        {
          q: question,
          ...(flags.date ? { date: flags.date } : {}),
          k: flags.k,
          strategy: flags.strategy,
          store: flags.store,
          fusion: flags.fusion,
          per_article: flags.perArticle,
          window_days: flags.windowDays,
          constraint: flags.constraint,
          hops: flags.hops,
          ...(flags.constraintDate ? { constraint_date: flags.constraintDate } : {}),
          ...(flags.includeFuture ? { include_future: true } : {}),
          time_words: flags.timeWords,
          answer_sentences: flags.answerSentences,
        },
        Date.now(),
      );
      if (!parsed.ok) throw new UsageError(parsed.problems.join('\n'));
      const service = findService(flags.api);
      if (service) {
        const r = parsed.request;
        const query = new URLSearchParams({
          q: r.q,
          date: new Date(r.tq).toISOString(),
          k: String(r.k),
          strategy: r.strategy,
          store: r.store,
          fusion: r.fusion ?? DEFAULT_FUSION,
          per_article: String(r.perArticle ?? DEFAULT_PER_ARTICLE),
          window_days: String(r.windowDays),
          constraint: r.constraint,
          // Only a date the user gave: an explicit one replaces the question's own time words.
          ...(flags.constraintDate ? { constraint_date: new Date(r.constraintAt).toISOString() } : {}),
          include_future: String(r.includeFuture),
          hops: String(r.hops ?? 1),
          time_words: String(flags.timeWords),
          answer_sentences: String(flags.answerSentences),
        });
        printAnswer(await callService<AnswerResult>(service, `/v1/ask?${query.toString()}`), parsed.request, flags);
        return;
      }
      const { es } = clusterElasticsearch();
      const embedder = await configuredEmbedder();
      // With NEON_LLM_* set, an answer written by the LLM from the retrieved items; otherwise extractive.
      const chat = chatModelFromEnv(process.env);
      let linker;
      let stopLinker = async (): Promise<void> => undefined;
      if (flags.link) {
        const { transport } = await clusterTransport('neon-ask');
        const followed = await followRegistryLinker(transport);
        linker = followed.linker;
        stopLinker = async () => {
          await followed.tail.stop();
          await transport.close();
        };
      }
      try {
        const retriever = new Retriever({
          datastore: new ElasticsearchDatastore({ es, prefix: indexPrefix() }),
          embedder,
          ...(linker ? { linker } : {}),
          ...(chat ? { planner: chat } : {}),
        });
        const result = await answerQuestion(retriever, parsed.request, chat);
        printAnswer(result, parsed.request, flags);
      } finally {
        await stopLinker();
        await chat?.close();
        await embedder.close();
        await es.close();
      }
    });
}

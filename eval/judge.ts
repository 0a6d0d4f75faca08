/**
 * `npm run eval -- judge [--config tempralm] [--store interactions] [--questions 50] [--k 10]
 * [--no-cache] [--offline-extraction] [--extractive-answers]`: NEON's LLM judge (`eval/llm-judge.ts`)
 * on the answers one retrieval configuration gives to RealTime QA questions (spread over the dates),
 * built as `npm run eval -- realtimeqa` builds its datastores.
 *
 * The judge is the chat endpoint configured as for the product (`NEON_LLM_*`, through the product's
 * client: retries, response cache, token budget); it also writes the answers unless
 * `--extractive-answers`, and extracts the interactions unless `--offline-extraction`. Without an
 * endpoint it says which variables it needs and exits with status 2 before doing anything.
 *
 * Writes `eval/results/judge.json`: per attribute (helpfulness, relevance, faithfulness) the mean
 * rating with its 95% bootstrap interval, the distribution of ratings, and the replies refused as
 * out of range (with their values), malformed, or failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { llmConfigFromEnv } from '../processors/extract/llm-config.js';
import { ConfigError } from '../schemas/local-infra-config.js';
import { JUDGE_NEEDS_ENDPOINT } from './llm-judge.js';

const { values: args } = parseArgs({
  options: {
    config: { type: 'string', default: 'tempralm' },
    store: { type: 'string', default: 'interactions' },
    questions: { type: 'string', default: '50' },
    k: { type: 'string', default: '10' },
    'no-cache': { type: 'boolean', default: false },
    'offline-extraction': { type: 'boolean', default: false },
    'extractive-answers': { type: 'boolean', default: false },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

// First of all, before anything is loaded or built: is there a judge?
try {
  if (llmConfigFromEnv(process.env).kind === 'none') fail(`eval judge: ${JUDGE_NEEDS_ENDPOINT}`);
} catch (error) {
  if (error instanceof ConfigError) fail(`eval judge: ${error.message}`);
  throw error;
}

const QUESTIONS_AT_ONCE = 4;

async function main(): Promise<void> {
  const [
    { chatModelFromEnv },
    { STORES },
    { answerQuestion },
    { devDataPath, missingDevDataMessage },
    { ATTRIBUTES, judgeAnswer, summariseAttribute },
    { loadRealtimeQa, questionTime },
    { setUpRealtimeQaIndex },
    { CONFIGURATIONS, fixedStore, requestFor },
  ] = await Promise.all([
    import('../streams/llm/openai-chat-model.js'),
    import('../processors/query/search-request.js'),
    import('../streams/retrieval/answer-question.js'),
    import('../devkit/dev-data.js'),
    import('./llm-judge.js'),
    import('./realtimeqa-data.js'),
    import('./realtimeqa-setup.js'),
    import('./retrieval-configurations.js'),
  ]);
  const count = Number(args.questions);
  if (!Number.isInteger(count) || count < 1) fail(`--questions must be a positive integer (got "${args.questions}")`);
  const k = Number(args.k);
  if (!Number.isInteger(k) || k < 1 || k > 100) fail(`--k must be an integer from 1 to 100 (got "${args.k}")`);
  const configuration = CONFIGURATIONS[args.config];
  if (configuration === undefined) {
    fail(`--config: unknown "${args.config}" (known: ${Object.keys(CONFIGURATIONS).join(', ')})`);
  }
  const store = fixedStore(configuration) ?? STORES.find((s) => s === args.store);
  if (store === undefined) fail(`--store: unknown "${args.store}" (known: ${STORES.join(', ')})`);

  const base = devDataPath('realtimeqa');
  if (base === undefined) {
    console.log(missingDevDataMessage('realtimeqa'));
    return;
  }
  const chat = chatModelFromEnv(process.env)!;
  const started = performance.now();
  const set = loadRealtimeQa(base, count);
  const index = await setUpRealtimeQaIndex(set, {
    ...(args['offline-extraction'] ? {} : { extractionChat: chat }),
    cache: !args['no-cache'],
  });
  let output: Record<string, unknown>;
  try {
    if (!index.stores.includes(store)) throw new Error(`the ${store} store is empty (no interactions were extracted)`);
    const judgeStarted = performance.now();
    let next = 0;
    const judged: Awaited<ReturnType<typeof judgeAnswer>>[] = [];
    let fellBack = 0;
    const worker = async () => {
      while (next < set.evaluated.length) {
        const question = set.evaluated[next++]!;
        const tq = questionTime(question.question_date);
        const request = requestFor(configuration, { q: question.question_sentence, tq }, k, store);
        const result = await answerQuestion(index.retriever, request, args['extractive-answers'] ? undefined : chat);
        if (result.fallback !== undefined) fellBack += 1;
        judged.push(
          await judgeAnswer(chat, {
            question: question.question_sentence,
            tq,
            response: result.answer,
            passages: result.items.slice(0, 10),
          }),
        );
        if (judged.length % 25 === 0) console.error(`  judged ${judged.length} / ${set.evaluated.length}`);
      }
    };
    await Promise.all(Array.from({ length: QUESTIONS_AT_ONCE }, worker));
    const attributes = Object.fromEntries(
      ATTRIBUTES.map((attribute) => {
        const summary = summariseAttribute(judged.map((j) => j[attribute]));
        const round = (x: number) => Math.round(x * 1000) / 1000;
        return [
          attribute,
          { ...summary, mean: round(summary.mean), ci95: [round(summary.ci95.low), round(summary.ci95.high)] },
        ];
      }),
    );
    output = {
      dataset: `realtimeqa (${set.evaluated.length} of ${set.all} questions)`,
      configuration: `${args.config}/${store}`,
      k,
      judge: chat.model,
      answers: args['extractive-answers'] ? 'extractive' : chat.model,
      ...(fellBack > 0 ? { answers_fell_back_to_extractive: fellBack } : {}),
      extraction: index.facts.extraction,
      embedder: index.facts.embedder,
      questions: judged.length,
      calls: judged.length * ATTRIBUTES.length,
      attributes,
      seconds: {
        ...index.facts.seconds,
        answer_and_judge: Math.round((performance.now() - judgeStarted) / 1000),
        total: Math.round((performance.now() - started) / 1000),
      },
    };
  } finally {
    await index.close();
    await chat.close();
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/judge.json', import.meta.url), `${JSON.stringify(output, null, 2)}\n`);
  console.log(
    `${output.dataset as string}, ${output.configuration as string}; judge ${output.judge as string}, answers ${output.answers as string}`,
  );
  console.log(
    `${'attribute'.padEnd(14)}${'mean (95% CI)'.padStart(22)}${'n'.padStart(6)}${'0 / 1 / 2'.padStart(16)}${'out of range'.padStart(14)}${'malformed'.padStart(11)}${'failed'.padStart(8)}`,
  );
  for (const [attribute, s] of Object.entries(output.attributes as Record<string, Record<string, unknown>>)) {
    const [low, high] = s.ci95 as [number, number];
    const d = s.distribution as Record<string, number>;
    console.log(
      `${attribute.padEnd(14)}${`${(s.mean as number).toFixed(2)} (${low.toFixed(2)}–${high.toFixed(2)})`.padStart(22)}` +
        `${String(s.n).padStart(6)}${`${d['0']} / ${d['1']} / ${d['2']}`.padStart(16)}${String(s.out_of_range).padStart(14)}` +
        `${String(s.malformed).padStart(11)}${String(s.failed).padStart(8)}`,
    );
  }
}

await main();

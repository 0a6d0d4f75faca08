import { describe, expect, inject, it } from 'vitest';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import { loadRealtimeQaDocs } from '../../streams/archives/load-realtimeqa.js';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import type { Article, Chunk, Mention } from '../../schemas/records.generated.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { DLQ_HEADERS } from '../../streams/runtime/dead-letter-writer.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { startArticlePipeline, type ArticlePipeline } from '../harness/article-pipeline.js';
import type { PipelineTopics } from '../../streams/pipeline/pipeline-topics.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { devDataPath, missingDevDataMessage } from '../../devkit/dev-data.js';
import { NEWS_STORIES } from '../fixtures/news-stories.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { committedToEnd, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readRawTopic, readTopicRecords, type TopicEntry } from '../harness/topic-contents.js';
import { logLevel } from 'kafkajs';

const NOW = Date.UTC(2025, 3, 1);
const live = useLiveClients();

interface Run {
  transport: Transport;
  topics: PipelineTopics;
  groupPrefix: string;
}

async function freshRun(label: string): Promise<Run> {
  const transport = createKafkaTransport(
    createKafkaClient({ clientId: `pipeline-${label}`, brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
  );
  const topics: PipelineTopics = {
    articles: freshTopic(`${label}.articles`),
    marked: freshTopic(`${label}.marked`),
    chunks: freshTopic(`${label}.chunks`),
    uniqueChunks: freshTopic(`${label}.unique`),
    mentions: freshTopic(`${label}.mentions`),
    registry: freshTopic(`${label}.registry`),
    spikes: freshTopic(`${label}.spikes`),
    spikeState: freshTopic(`${label}.spike-state`),
    deadLetters: freshTopic(`${label}.dlq`),
  };
  const names = Object.values(topics) as string[];
  await transport.ensureTopics(
    names.map((topic) => ({
      topic,
      partitions: 3,
      ...(topic === topics.registry ? { configs: { 'cleanup.policy': 'compact' } } : {}),
    })),
  );
  live.cleanup.topics.push(...names);
  return { transport, topics, groupPrefix: freshTopic(`${label}.group`) };
}

async function publishAll(run: Run, inputs: readonly ArticleInput[]): Promise<Article[]> {
  const publisher = new TransportArticlePublisher(run.transport.producer(), {
    articlesTopic: run.topics.articles,
    deadLetterTopic: run.topics.deadLetters,
  });
  const published: Article[] = [];
  for (const input of inputs) {
    try {
      const article = normalizeArticle(input, NOW);
      await publisher.publish(article);
      published.push(article);
    } catch (error) {
      if (!(error instanceof IntakeRejection)) throw error;
      await publisher.reject(Buffer.from(JSON.stringify(input)), error, 'test');
    }
  }
  return published;
}

async function drained(run: Run, timeoutMs = 60_000): Promise<void> {
  const stages: [string, string][] = [
    ['markup', run.topics.articles],
    ['chunk', run.topics.marked],
    ['dedupe', run.topics.chunks],
  ];
  // Twice in a row: a stage can commit its input just before its output reaches the next stage.
  let settledOnce = false;
  await waitUntil(
    async () => {
      for (const [stage, topic] of stages) {
        if (!(await committedToEnd(live.admin, `${run.groupPrefix}.${stage}`, topic))) {
          settledOnce = false;
          return false;
        }
      }
      if (settledOnce) return true;
      settledOnce = true;
      return false;
    },
    timeoutMs,
    'every stage committed to the end of its input',
  );
}

function latestById(entries: TopicEntry<Chunk>[]): Map<string, Chunk> {
  const latest = new Map<string, Chunk>();
  for (const entry of entries) {
    const known = latest.get(entry.value.id);
    if (!known || entry.value.provenance.length >= known.provenance.length) latest.set(entry.value.id, entry.value);
  }
  return latest;
}

async function startPipeline(run: Run): Promise<ArticlePipeline> {
  return startArticlePipeline(run.transport, { topics: run.topics, groupPrefix: run.groupPrefix });
}

describe('article pipeline on real Kafka: intake → markup → chunk → dedupe', () => {
  it('marks, chunks and deduplicates written stories, merges provenance, dead-letters poison, and stays replay-safe across a restart', async () => {
    const run = await freshRun('stories');
    const articles = await publishAll(run, [
      ...NEWS_STORIES,
      { url: 'https://empty.example/a', title: 'Nothing here', text: '  ', published_at: '2025-03-05T10:00:00Z' },
    ]);
    expect(articles).toHaveLength(NEWS_STORIES.length);
    // Bytes with no schema header, straight onto the articles topic: no reader can decode them.
    await run.transport.producer().send(run.topics.articles, [{ key: 'poison', value: Buffer.from('not avro') }]);

    let pipeline = await startPipeline(run);
    try {
      await drained(run);
    } finally {
      await pipeline.stop();
    }
    const registrySize = pipeline.markup.registry.size;

    // news.marked: every article once, keyed by its id, with escaped <e> markup.
    const marked = await readTopicRecords(run.transport, run.topics.marked, 'MarkedArticle');
    expect(marked.map((m) => m.key).sort()).toEqual(articles.map((a) => a.id).sort());
    for (const { value } of marked) {
      expect(value.mentions.length).toBeGreaterThan(2);
      for (const m of value.mentions) expect(value.article.text.slice(m.start, m.end)).toBe(m.surface);
      expect(value.marked_text).toContain('<e>');
    }
    const harbourMarked = marked.find((m) => m.value.article.title === 'Gothenburg opens harbour bridge')!.value;
    const surfaces = new Set(harbourMarked.mentions.map((m) => m.surface));
    expect(surfaces).toContain('Maria Lindqvist');
    expect(surfaces).toContain('Gothenburg');
    const lindqvistIds = new Set(
      harbourMarked.mentions.filter((m) => m.surface.includes('Lindqvist')).map((m) => m.entity_id),
    );
    expect(lindqvistIds.size, '"Maria Lindqvist" and "Lindqvist" are one entity').toBe(1);

    // news.chunks: every article cut into windows with deterministic ids.
    const chunks = await readTopicRecords(run.transport, run.topics.chunks, 'Chunk');
    const chunkIds = new Set(chunks.map((c) => c.value.id));
    expect(chunkIds.size).toBe(chunks.length);
    for (const article of articles) expect(chunks.some((c) => c.value.article_id === article.id)).toBe(true);

    // news.chunks.unique: of each pair of copies (the syndicated harbour story, the re-filed storm
    // story) one article's chunks survive — whichever the stage saw first, since the copies sit on
    // different partitions — and the other's source and date are merged into their provenance.
    const unique = latestById(await readTopicRecords(run.transport, run.topics.uniqueChunks, 'Chunk'));
    const byUrl = new Map(articles.map((a) => [a.canonical_url, a]));
    const pairs = [
      [
        byUrl.get('https://gbg-tribune.example/2025/03/03/harbour-bridge-opens')!,
        byUrl.get('https://nordic-wire.example/syndicated/gothenburg-bridge')!,
      ],
      [
        byUrl.get('https://weather-desk.example/storm-odile-biarritz')!,
        byUrl.get('https://coast-news.example/2025/03/07/odile-update')!,
      ],
    ] as const;
    const uniqueArticles = new Set([...unique.values()].map((c) => c.article_id));
    const chunksOf = (articleId: string): string[] =>
      chunks
        .filter((c) => c.value.article_id === articleId)
        .map((c) => c.value.id)
        .sort();
    const survivors: string[] = [];
    for (const [a, b] of pairs) {
      const kept = [a, b].filter((x) => uniqueArticles.has(x.id));
      expect(kept, `one of ${a.source} / ${b.source} survives`).toHaveLength(1);
      const survivor = kept[0]!;
      const merged = survivor === a ? b : a;
      survivors.push(survivor.id);
      const survivorChunks = [...unique.values()].filter((c) => c.article_id === survivor.id);
      expect(survivorChunks.map((c) => c.id).sort()).toEqual(chunksOf(survivor.id));
      expect(survivorChunks.some((c) => c.provenance.some((p) => p.article_id === merged.id))).toBe(true);
    }
    const singles = articles.filter((x) => !pairs.flat().includes(x));
    expect([...uniqueArticles].sort()).toEqual([...singles.map((x) => x.id), ...survivors].sort());
    for (const single of singles) {
      expect(
        [...unique.values()]
          .filter((c) => c.article_id === single.id)
          .map((c) => c.id)
          .sort(),
      ).toEqual(chunksOf(single.id));
    }
    for (const chunk of unique.values()) expect(chunk.provenance[0]!.article_id).toBe(chunk.article_id);

    // entity.mentions: one per entity per unique chunk, keyed by entity id.
    const mentions = await readTopicRecords(run.transport, run.topics.mentions, 'Mention');
    const expectedPairs = [...unique.values()].flatMap((c) => c.entity_ids.map((e) => `${c.id}/${e}`)).sort();
    const mentionPairs = (list: TopicEntry<Mention>[]): string[] =>
      [...new Set(list.map((m) => `${m.value.chunk_id}/${m.value.entity_id}`))].sort();
    expect(mentionPairs(mentions)).toEqual(expectedPairs);
    for (const m of mentions) expect(m.key).toBe(m.value.entity_id);
    expect(mentions).toHaveLength(expectedPairs.length);

    // entity.registry: the entities with their aliases.
    const registry = await readTopicRecords(run.transport, run.topics.registry, 'RegistryEntity');
    const lindqvist = registry.find((r) => r.value.name === 'Maria Lindqvist');
    expect(lindqvist?.value.aliases).toContain('Lindqvist');

    // neon.dlq: the poison from markup, the empty article from intake, each with its reason.
    const deadLetters = await readRawTopic(run.transport, run.topics.deadLetters);
    expect(deadLetters.map((d) => d.headers[DLQ_HEADERS.errorCode]).sort()).toEqual(['no_text', 'unknown_schema']);
    expect(deadLetters.find((d) => d.headers[DLQ_HEADERS.errorCode] === 'unknown_schema')!.value?.toString()).toBe(
      'not avro',
    );

    // Restart and replay everything: the registry and the dedupe window come back from their
    // topics, nothing is a duplicate of itself, and no mention is added for a new chunk.
    pipeline = await startPipeline(run);
    try {
      expect(pipeline.markup.registry.size).toBe(registrySize);
      await publishAll(run, NEWS_STORIES);
      await drained(run);
    } finally {
      await pipeline.stop();
    }
    const uniqueAfter = latestById(await readTopicRecords(run.transport, run.topics.uniqueChunks, 'Chunk'));
    expect([...uniqueAfter.keys()].sort()).toEqual([...unique.keys()].sort());
    for (const [id, chunk] of uniqueAfter) {
      expect(chunk.provenance.map((p) => p.article_id).sort()).toEqual(
        unique
          .get(id)!
          .provenance.map((p) => p.article_id)
          .sort(),
      );
    }
    const mentionsAfter = await readTopicRecords(run.transport, run.topics.mentions, 'Mention');
    expect(mentionPairs(mentionsAfter)).toEqual(expectedPairs);
    await run.transport.close();
  });

  const realtimeQa = devDataPath('realtimeqa');
  it.skipIf(!realtimeQa)(
    `replays real RealTime QA articles and every accepted article reaches every topic${realtimeQa ? '' : ` (${missingDevDataMessage('realtimeqa')})`}`,
    async () => {
      const run = await freshRun('realtimeqa');
      const inputs: ArticleInput[] = [];
      const load = loadRealtimeQaDocs(realtimeQa!);
      if (!load.ok) throw new Error(load.error);
      for await (const doc of load.items) {
        if (doc.input) inputs.push(doc.input);
        if (inputs.length >= 150) break;
      }
      const articles = await publishAll(run, inputs);
      const pipeline = await startPipeline(run);
      try {
        await drained(run, 200_000);
      } finally {
        await pipeline.stop();
      }
      const marked = await readTopicRecords(run.transport, run.topics.marked, 'MarkedArticle');
      expect(new Set(marked.map((m) => m.key))).toEqual(new Set(articles.map((a) => a.id)));
      const chunks = await readTopicRecords(run.transport, run.topics.chunks, 'Chunk');
      const unique = latestById(await readTopicRecords(run.transport, run.topics.uniqueChunks, 'Chunk'));
      const chunkIds = new Set(chunks.map((c) => c.value.id));
      for (const id of unique.keys()) expect(chunkIds.has(id)).toBe(true);
      const merged = [...unique.values()].filter((c) => c.provenance.length > 1).length;
      const deadLetters = await readRawTopic(run.transport, run.topics.deadLetters);
      process.stdout.write(
        `[realtimeqa replay] inputs ${inputs.length}, accepted ${articles.length}, rejected ${inputs.length - articles.length} ` +
          `(dead letters ${deadLetters.length}), chunks ${chunks.length}, unique ${unique.size}, ` +
          `unique with merged provenance ${merged}, registry entities ${pipeline.markup.registry.size}\n`,
      );
      expect(deadLetters).toHaveLength(inputs.length - articles.length);
      expect(unique.size).toBeLessThanOrEqual(chunkIds.size);
      expect(unique.size).toBeGreaterThan(0);
      await run.transport.close();
    },
    240_000,
  );
});

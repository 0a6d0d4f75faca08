/**
 * Where an article's freshness goes: for each article of the freshness phase, when the last record
 * it caused landed on each topic of the searchable path (the broker's append time of the record, as
 * the producer stamped it), against when it was published. Read after the phase from the topics
 * themselves, so the pipeline is not instrumented and runs as it does in production.
 */
import type { RecordName, RecordTypes } from '../schemas/records.generated.js';
import { decodeRecord } from '../schemas/avro-codec.js';
import { readTopicOnce } from '../streams/runtime/topic-tail.js';
import type { Transport } from '../streams/runtime/transport.js';
import { topicOf, type Names, type TopicKey } from './pipeline-cluster.js';

/** The hops, in path order: the topic, its record type, and the articles a record belongs to. */
const HOPS = [
  {
    hop: 'marked',
    topic: 'marked',
    record: 'MarkedArticle',
    articles: (r: RecordTypes['MarkedArticle']) => [r.article.id],
  },
  { hop: 'chunked', topic: 'chunks', record: 'Chunk', articles: (r: RecordTypes['Chunk']) => [r.article_id] },
  {
    hop: 'deduplicated',
    topic: 'uniqueChunks',
    record: 'Chunk',
    articles: (r: RecordTypes['Chunk']) => r.provenance.map((p) => p.article_id),
  },
  {
    hop: 'extracted',
    topic: 'interactions',
    record: 'Interaction',
    articles: (r: RecordTypes['Interaction']) => r.article_ids,
  },
] as const satisfies readonly { hop: string; topic: TopicKey; record: RecordName; articles: (r: never) => string[] }[];

export type HopName = (typeof HOPS)[number]['hop'];

/** Per hop, ms after publishing until the article's last record there (p50 / p95 over the articles that have one). */
export type HopLatencies = Record<HopName, { articles: number; p50_ms: number; p95_ms: number }>;

/** One article's ms after publishing until its last record on each hop (absent: none there). */
export type ArticleHops = Partial<Record<HopName, number>>;

/** Latest record time (epoch ms) per watched article on one topic. */
async function lastRecordTimes(
  transport: Transport,
  topic: string,
  read: (bytes: Buffer | null, headers: Record<string, unknown>) => string[],
  watched: ReadonlySet<string>,
): Promise<Map<string, number>> {
  const latest = new Map<string, number>();
  await readTopicOnce(
    transport,
    topic,
    (record) => {
      let articles: string[];
      try {
        articles = read(record.value, record.headers);
      } catch {
        return; // a record the stage would dead-letter: it makes nothing searchable
      }
      const at = Number(record.timestamp);
      for (const id of articles) {
        if (watched.has(id) && at > (latest.get(id) ?? -Infinity)) latest.set(id, at);
      }
    },
    { purpose: 'bench-pipeline-hops' },
  );
  return latest;
}

export async function measureHops(
  transport: Transport,
  names: Names,
  publishedAtEpoch: ReadonlyMap<string, number>,
  percentile: (sorted: readonly number[], p: number) => number,
): Promise<{ hops: HopLatencies; byArticle: Map<string, ArticleHops> }> {
  const watched = new Set(publishedAtEpoch.keys());
  const result = {} as HopLatencies;
  const byArticle = new Map<string, ArticleHops>();
  for (const { hop, topic, record, articles } of HOPS) {
    const read = (bytes: Buffer | null, headers: Record<string, unknown>): string[] =>
      (articles as (r: unknown) => string[])(
        decodeRecord(record, bytes, headers as Parameters<typeof decodeRecord>[2]),
      );
    const latest = await lastRecordTimes(transport, topicOf(names, topic), read, watched);
    const delays: number[] = [];
    for (const [id, at] of latest) {
      const delay = at - publishedAtEpoch.get(id)!;
      delays.push(delay);
      byArticle.set(id, { ...byArticle.get(id), [hop]: delay });
    }
    delays.sort((a, b) => a - b);
    result[hop] = {
      articles: delays.length,
      p50_ms: Math.round(percentile(delays, 50)),
      p95_ms: Math.round(percentile(delays, 95)),
    };
  }
  return { hops: result, byArticle };
}

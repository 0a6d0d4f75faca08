import { expect } from 'vitest';
import { RecordCodecError } from '../../schemas/avro-codec.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';

/** A fixed "now" for the codec's plausibility check, a little after every fixture timestamp. */
export const NOW = Date.UTC(2023, 8, 1, 12, 0, 0);

const publishedAt = Date.UTC(2023, 7, 31, 9, 15, 0);

const text =
  "Karl Lagerfeld's last collection was shown in Paris on Tuesday. " +
  "Chanel said Karl's designs would live on in every new season.";

function span(surface: string, from = 0): { start: number; end: number } {
  const start = text.indexOf(surface, from);
  if (start < 0) throw new Error(`fixture text has no ${surface}`);
  return { start, end: start + surface.length };
}

const firstSentence = span("Karl Lagerfeld's last collection was shown in Paris on Tuesday.");
const secondSentence = span("Chanel said Karl's designs would live on in every new season.");

const article: RecordTypes['Article'] = {
  id: 'art-7f3c9a1e5b2d4c60',
  url: 'https://www.example-news.com/fashion/2023/08/31/lagerfeld-final-collection?utm_source=rss',
  canonical_url: 'https://www.example-news.com/fashion/2023/08/31/lagerfeld-final-collection',
  source: 'www.example-news.com',
  title: "Lagerfeld's final collection shown in Paris",
  text,
  published_at: publishedAt,
  fetched_at: publishedAt + 4 * 60_000,
  language: 'en',
  version: 2,
};

const markedArticle: RecordTypes['MarkedArticle'] = {
  article,
  sentences: [
    { ...firstSentence, entity_ids: ['ent-karl-lagerfeld', 'ent-paris'] },
    { ...secondSentence, entity_ids: ['ent-chanel', 'ent-karl-lagerfeld'] },
  ],
  mentions: [
    {
      surface: 'Karl Lagerfeld',
      entity_id: 'ent-karl-lagerfeld',
      entity_type: 'PERSON',
      sentence_index: 0,
      ...span('Karl Lagerfeld'),
    },
    { surface: 'Paris', entity_id: 'ent-paris', entity_type: 'LOCATION', sentence_index: 0, ...span('Paris') },
    {
      surface: 'Chanel',
      entity_id: 'ent-chanel',
      entity_type: 'ORGANIZATION',
      sentence_index: 1,
      ...span('Chanel'),
    },
    {
      surface: 'Karl',
      entity_id: 'ent-karl-lagerfeld',
      entity_type: 'PERSON',
      sentence_index: 1,
      ...span('Karl', secondSentence.start),
    },
  ],
  dates: [
    {
      text: 'Tuesday',
      ...span('Tuesday'),
      sentence_index: 0,
      refers_to: Date.UTC(2023, 7, 29),
      granularity: 'DAY',
    },
  ],
  marked_text:
    "<e>Karl Lagerfeld</e>'s last collection was shown in <e>Paris</e> on Tuesday. " +
    "<e>Chanel</e> said <e>Karl</e>'s designs would live on in every new season.",
};

const chunk: RecordTypes['Chunk'] = {
  id: 'art-7f3c9a1e5b2d4c60:0',
  article_id: article.id,
  index: 0,
  text,
  title: article.title,
  marked_text: markedArticle.marked_text,
  entity_ids: ['ent-karl-lagerfeld', 'ent-paris', 'ent-chanel'],
  entities: [
    { id: 'ent-karl-lagerfeld', name: 'Karl Lagerfeld', type: 'PERSON' },
    { id: 'ent-paris', name: 'Paris', type: 'LOCATION' },
    { id: 'ent-chanel', name: 'Chanel', type: 'ORGANIZATION' },
  ],
  t: publishedAt,
  provenance: [
    { article_id: article.id, url: article.canonical_url, source: article.source, published_at: publishedAt },
    {
      article_id: 'art-0b91d2e7c4a85f13',
      url: 'http://syndication.example.org/wire/lagerfeld-collection',
      source: 'syndication.example.org',
      published_at: publishedAt + 30 * 60_000,
    },
  ],
};

const mention: RecordTypes['Mention'] = {
  entity_id: 'ent-karl-lagerfeld',
  name: 'Karl Lagerfeld',
  entity_type: 'PERSON',
  t: publishedAt,
  chunk_id: chunk.id,
  article_id: article.id,
  url: article.canonical_url,
};

const spikeAlert: RecordTypes['SpikeAlert'] = {
  id: 'spike-ent-karl-lagerfeld-DAY-20230831',
  entity_id: 'ent-karl-lagerfeld',
  entity_name: 'Karl Lagerfeld',
  granularity: 'DAY',
  window_start: Date.UTC(2023, 7, 29),
  window_end: Date.UTC(2023, 8, 1),
  observed: 57,
  baseline_mean: 6.4,
  baseline_std: 3.1,
  threshold: 9.5,
  score: 16.322580645161292,
  article_ids: [article.id, 'art-0b91d2e7c4a85f13'],
  urls: [article.canonical_url, 'http://syndication.example.org/wire/lagerfeld-collection'],
  detected_at: Date.UTC(2023, 7, 31, 10, 0, 0),
  state: 'STARTED',
  entity_type: 'PERSON',
  episode_start: Date.UTC(2023, 7, 31),
  rule: '3-day rolling sum > mean + 1 std of the previous 28',
  baseline_buckets: 28,
  counts: [
    { bucket_start: Date.UTC(2023, 7, 29), count: 4 },
    { bucket_start: Date.UTC(2023, 7, 30), count: 9 },
    { bucket_start: Date.UTC(2023, 7, 31), count: 44 },
  ],
  first_interactions: [
    { id: 'int-M1-ent-karl-lagerfeld-9c2e', t: publishedAt, text: 'Karl Lagerfeld final collection shown in Paris' },
  ],
  method: 'surprise',
  significance: 7.25,
  articles: 31,
};

const entitySpikeState: RecordTypes['EntitySpikeState'] = {
  entity_id: 'ent-karl-lagerfeld',
  entity_name: 'Karl Lagerfeld',
  entity_type: 'PERSON',
  partition: 3,
  latest_event_at: publishedAt,
  observed_since: Date.UTC(2023, 6, 1),
  days: [
    { bucket_start: Date.UTC(2023, 7, 30), count: 9 },
    { bucket_start: Date.UTC(2023, 7, 31), count: 44 },
  ],
  hours: [{ bucket_start: Date.UTC(2023, 7, 31, 9), count: 12 }],
  recent_chunks: [{ chunk_key: '3f9a0c1d2e4b', t: publishedAt, hourly: true, position: 4812 }],
  recent_articles: [{ article_id: article.id, url: article.canonical_url, t: publishedAt }],
  article_days: [
    { bucket_start: Date.UTC(2023, 7, 30), count: 5 },
    { bucket_start: Date.UTC(2023, 7, 31), count: 26 },
  ],
  article_hours: [{ bucket_start: Date.UTC(2023, 7, 31, 9), count: 7 }],
  counted_articles: [{ article_key: '9d0e1f2a3b4c', t: publishedAt, hourly: true, position: 4812 }],
  decided_through: 4812,
};

const interaction: RecordTypes['Interaction'] = {
  id: 'int-M2-ent-karl-lagerfeld-ent-chanel-4e1a',
  t: publishedAt,
  subject_id: 'ent-karl-lagerfeld',
  subject_name: 'Karl Lagerfeld',
  object_id: 'ent-chanel',
  object_name: 'Chanel',
  text: "Chanel said Karl Lagerfeld's designs would live on.",
  title: '',
  variant: 'M2',
  chunk_ids: [chunk.id],
  article_ids: [article.id],
  urls: [article.canonical_url],
  model: 'gpt-4o-mini-2024-07-18',
  extracted_at: Date.UTC(2023, 7, 31, 9, 30, 0),
};

const query: RecordTypes['Query'] = {
  id: 'q-5d2f0c1b',
  q: 'Karl Lagerfeld news',
  t_q: Date.UTC(2023, 7, 31, 18, 0, 0),
  k: 10,
  strategy: 'tempralm',
  time_constraint: 'AROUND',
  constraint_at: null,
  window_days: 3,
  datastore: 'BOTH',
  hops: 2,
  as_of_only: true,
};

const answer: RecordTypes['Answer'] = {
  query_id: query.id,
  answer:
    "Karl Lagerfeld's final collection was shown in Paris on 2023-08-29 [1], and Chanel said his designs live on [2].",
  citations: [
    { n: 1, kind: 'CHUNK', id: chunk.id, url: article.canonical_url, t: publishedAt },
    { n: 2, kind: 'INTERACTION', id: interaction.id, url: null, t: interaction.t },
  ],
  retrieved: [
    { id: chunk.id, kind: 'CHUNK', score: 0.8731, t: publishedAt },
    { id: interaction.id, kind: 'INTERACTION', score: 0.8125, t: interaction.t },
    { id: 'art-0b91d2e7c4a85f13:0', kind: 'CHUNK', score: -0.25, t: publishedAt + 30 * 60_000 },
  ],
  model: null,
  timings_ms: { link: 1.2, reformulate: 0.4, retrieve: 38.75, rerank: 5.5, answer: 2 },
  answered_at: Date.UTC(2023, 7, 31, 18, 0, 1),
};

const registryEntity: RecordTypes['RegistryEntity'] = {
  id: 'ent-karl-lagerfeld',
  name: 'Karl Lagerfeld',
  type: 'PERSON',
  aliases: ['Karl Lagerfeld', 'Lagerfeld', 'Karl'],
  first_seen_at: publishedAt - 40 * 86_400_000,
  last_seen_at: publishedAt,
  mentions: 12,
  fusion: null,
};

/** One realistic value of every record, all valid as of NOW. */
export const FIXTURES: { readonly [N in RecordName]: RecordTypes[N] } = {
  Answer: answer,
  Article: article,
  Chunk: chunk,
  EntitySpikeState: entitySpikeState,
  Interaction: interaction,
  MarkedArticle: markedArticle,
  Mention: mention,
  Query: query,
  RegistryEntity: registryEntity,
  SpikeAlert: spikeAlert,
};

/** A deep copy to mutate in a test without touching the shared fixture. */
export function fixture<N extends RecordName>(name: N): RecordTypes[N] {
  return structuredClone(FIXTURES[name]);
}

/** Runs `run`, expects it to throw a RecordCodecError, and returns that error for further checks. */
export function codecError(run: () => unknown): RecordCodecError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RecordCodecError);
    return error as RecordCodecError;
  }
  throw new Error('expected a RecordCodecError');
}

import type { Client } from '@elastic/elasticsearch';
import type { Registry } from 'prom-client';
import type { Article } from '../../schemas/records.generated.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { decodeRecord } from '../../schemas/avro-codec.js';
import { readTopicOnce } from '../../streams/runtime/topic-tail.js';
import { freshIndex, freshTopic } from '../../devkit/fresh-names.js';
import type { ScenarioNames } from './fault-scenario.js';

/**
 * S12's replay: the product's whole chain run again over the topics of a finished run, from their
 * start, under fresh consumer groups and into fresh indices — what an operator does to rebuild the
 * datastores, or to reprocess after a change — and the documents read back in full so the rebuilt
 * indices can be held to the first run's: the same ids with the same contents.
 *
 * The stages write to the run's own topics, so every stage downstream of one that replays sees its
 * input twice: the first run's records, then the replaying stage's copies. Two stages keep state
 * in a topic that is the changelog of their own decisions and is read whole on start, whatever the
 * group: markup (its entity registry) and spikes (their counts and alerts). A fresh group would start
 * from the first run's final registry and counts — later aliases applied to earlier articles, say —
 * so the replay gives them fresh state topics, as an operator rebuilding from scratch does. Dedupe
 * rebuilds its window from its own group's decisions only (dedupe-stage.ts), so it runs on the
 * run's own topics, as it would in production.
 */

/**
 * The articles with a wire service's copy of every `every`-th one, filed `lag` articles later the
 * same day under its own id, URL and source: syndication, which dedupe merges into the original
 * (the bundled sample itself repeats almost nothing).
 */
export function withSyndicatedCopies(articles: readonly Article[], every: number, lag: number): Article[] {
  const out: Article[] = [];
  const pending: { due: number; copy: Article }[] = [];
  articles.forEach((article, i) => {
    out.push(article);
    if (i % every === 0) {
      const path = encodeURIComponent(article.id);
      pending.push({
        due: i + lag,
        copy: {
          ...article,
          id: `wire-${article.id}`,
          url: `https://wire.example.org/${path}`,
          canonical_url: `https://wire.example.org/${path}`,
          source: 'wire.example.org',
        },
      });
    }
    while (pending[0] !== undefined && pending[0].due <= i && pending[0].copy.published_at === article.published_at) {
      out.push(pending.shift()!.copy);
    }
    // A copy whose day has passed goes out now: a wire never files the day before.
    while (pending[0] !== undefined && pending[0].copy.published_at < article.published_at)
      out.push(pending.shift()!.copy);
  });
  out.push(...pending.map((p) => p.copy));
  return out;
}

/** Sink writes the stages retried (a failed write tried again), by stage: `stage sink ×n`. */
export async function retriedWrites(registry: Registry): Promise<string> {
  const metric = await registry.getSingleMetric('neon_stage_retries_total')?.get();
  const lines = (metric?.values ?? [])
    .filter((v) => v.value > 0)
    .map((v) => `${Object.values(v.labels).join(' ')} ×${v.value}`);
  return lines.join(', ') || 'none';
}

/**
 * The names of a replay of `run`: its topics, except fresh ones for the state markup and spikes
 * keep of their own decisions (see the header), fresh consumer groups and a fresh index prefix.
 */
export function replayNames(run: ScenarioNames, label: string): ScenarioNames {
  return {
    label,
    topics: {
      ...run.topics,
      registry: freshTopic(`${label}.registry`),
      spikeState: freshTopic(`${label}.spike-state`),
      spikes: freshTopic(`${label}.spikes`),
    },
    groupPrefix: freshTopic(`${label}.group`),
    indexPrefix: freshIndex(label),
  };
}

/** The topics a replay creates: its fresh state topics (compacted as the product's are). */
export async function createReplayStateTopics(transport: Transport, names: ScenarioNames): Promise<string[]> {
  const { registry, spikeState, spikes } = names.topics;
  await transport.ensureTopics([
    { topic: registry, partitions: 1, configs: { 'cleanup.policy': 'compact' } },
    { topic: spikeState, partitions: 1, configs: { 'cleanup.policy': 'compact' } },
    { topic: spikes, partitions: 1 },
  ]);
  return [registry, spikeState, spikes];
}

/** Fields the clock writes (when a record was extracted or indexed): no two runs can share them. */
const CLOCK_FIELDS = ['indexed_at', 'extracted_at'] as const;

export type FullDocuments = Map<string, Record<string, unknown>>;

/** Every document of an index pattern by id, whole but for its vector and the clock's fields. */
export async function readFullDocuments(es: Client, pattern: string): Promise<FullDocuments> {
  await es.indices.refresh({ index: pattern, allow_no_indices: true, ignore_unavailable: true });
  const page = await es.search<Record<string, unknown>>({
    index: pattern,
    size: 10_000,
    track_total_hits: true,
    allow_no_indices: true,
    ignore_unavailable: true,
    _source: { excludes: ['embedding', ...CLOCK_FIELDS] },
  });
  const total = typeof page.hits.total === 'number' ? page.hits.total : (page.hits.total?.value ?? 0);
  if (total > page.hits.hits.length) throw new Error(`${pattern}: ${total} documents, more than one page`);
  return new Map(page.hits.hits.map((hit) => [hit._id!, hit._source!]));
}

/** Ids only in one, and ids whose documents differ (with the first difference's field). */
export function compareDocuments(
  expected: FullDocuments,
  actual: FullDocuments,
): { missing: string[]; unexpected: string[]; different: string[] } {
  const missing = [...expected.keys()].filter((id) => !actual.has(id)).sort();
  const unexpected = [...actual.keys()].filter((id) => !expected.has(id)).sort();
  const different: string[] = [];
  for (const [id, want] of expected) {
    const got = actual.get(id);
    if (got === undefined) continue;
    const fields = [...new Set([...Object.keys(want), ...Object.keys(got)])].sort();
    const field = fields.find((f) => JSON.stringify(want[f]) !== JSON.stringify(got[f]));
    if (field !== undefined) {
      different.push(`${id}.${field}: ${JSON.stringify(want[field])} ≠ ${JSON.stringify(got[field])}`);
    }
  }
  return { missing, unexpected, different: different.sort() };
}

/**
 * Each version of these chunks on the unique-chunk topic, in topic order: `offset [articles]`. What
 * to look at when a survivor's sources differ (which write came last).
 */
export async function chunkVersions(
  transport: Transport,
  topic: string,
  ids: ReadonlySet<string>,
): Promise<Map<string, string[]>> {
  const versions = new Map<string, string[]>();
  await readTopicOnce(
    transport,
    topic,
    (record) => {
      try {
        const chunk = decodeRecord('Chunk', record.value, record.headers);
        if (!ids.has(chunk.id)) return;
        const articles = chunk.provenance.map((p) => p.article_id).join(',');
        versions.set(chunk.id, [...(versions.get(chunk.id) ?? []), `${record.offset} [${articles}]`]);
      } catch {
        // poison: not a chunk
      }
    },
    { purpose: 'test-read' },
  );
  return versions;
}

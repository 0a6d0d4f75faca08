import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import type { EntityDirectory } from '../../processors/query/entity-directory.js';
import { Retriever, type RetrievedItem } from '../../streams/retrieval/retrieve.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { followRegistryLinker } from '../../streams/views/registry-linker.js';
import { writeFusionDecision, type FusionDecision } from '../../streams/views/registry-fusion-decision.js';
import { TOPICS } from '../../streams/pipeline/topics.js';
import { clusterElasticsearch, indexPrefix } from './cluster-services.js';
import { clusterTransport } from './cluster-transport.js';
import { formatTable } from './format-table.js';
import { callService, findService, ServiceError, type ServiceTarget } from './service-client.js';
import { printable } from './terminal-text.js';
import { EventGraphReader } from '../../streams/retrieval/read-events.js';
import { eventJson, type EventJson } from '../../service/event-routes.js';

interface EntityJson {
  id: string;
  name: string;
  type: string;
  aliases: string[];
  mentions: number;
  first_seen: string | null;
  last_seen: string | null;
}

interface TimelineJson {
  entity_id: string;
  date: string;
  items: RetrievedItem[];
}

interface StoryJson {
  entity_id: string;
  name: string | null;
  date: string;
  events: (EventJson & { before: string | null; after: string | null })[];
  complete: boolean;
}

interface MentionsJson {
  entity_id: string;
  name: string | null;
  granularity: 'day' | 'hour';
  buckets: { start: string; count: number }[];
}

const DAY_MS = 86_400_000;
const out = (text: string): void => void process.stdout.write(`${printable(text)}\n`);

function asOf(date: string | undefined): number {
  if (date === undefined) return Date.now();
  const t = Date.parse(date.length === 10 ? `${date}T23:59:59.999Z` : date);
  if (!Number.isFinite(t)) throw new UsageError(`--date must be YYYY-MM-DD or ISO 8601, got "${date}"`);
  return t;
}

function positive(text: string, flag: string, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${flag} must be an integer from 1 to ${max}`);
  return n;
}

/** Straight from Kafka (the registry) and Elasticsearch (timelines, counts), for when no service runs. */
async function withCluster<T>(
  run: (parts: { directory: EntityDirectory; retriever: Retriever }) => Promise<T>,
): Promise<T> {
  const { transport } = await clusterTransport('neon-entities');
  const { es } = clusterElasticsearch();
  const followed = await followRegistryLinker(transport);
  try {
    const datastore = new ElasticsearchDatastore({ es, prefix: indexPrefix() });
    return await run({ directory: followed.directory, retriever: new Retriever({ datastore }) });
  } finally {
    await followed.tail.stop();
    await transport.close();
    await es.close();
  }
}

async function lookUp(service: ServiceTarget | undefined, id: string): Promise<EntityJson | undefined> {
  if (service) {
    return callService<EntityJson>(service, `/v1/entities/${encodeURIComponent(id)}`).catch((error: unknown) => {
      if (error instanceof ServiceError && error.status === 404) return undefined;
      throw error;
    });
  }
  return withCluster(async ({ directory }) => {
    const e = directory.get(id);
    return e
      ? {
          id: e.id,
          name: e.name,
          type: e.type,
          aliases: [...e.aliases],
          mentions: e.mentions,
          first_seen: e.first_seen_at === null ? null : new Date(e.first_seen_at).toISOString(),
          last_seen: e.last_seen_at === null ? null : new Date(e.last_seen_at).toISOString(),
        }
      : undefined;
  });
}

/**
 * `neon entities` — the entity registry: search it, show one entity's timeline of interactions and
 * its mention counts over time. From a running neon-stream's API, or straight from Kafka and
 * Elasticsearch.
 */
export function registerEntitiesCommand(program: Command): void {
  const entities = program
    .command('entities')
    .description('look up entities: search the registry, an entity’s timeline and mention counts');

  entities
    .command('search', { isDefault: true })
    .description('entities whose name or an alias contains the text, most mentioned first')
    .argument('[text]', 'part of a name; empty: the most mentioned entities')
    .option('--type <type>', 'PERSON | ORGANIZATION | LOCATION | EVENT | OTHER')
    .option('--limit <n>', 'at most n entities (1–200)', '20')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--json', 'JSON output')
    .action(async (text: string | undefined, flags: { type?: string; limit: string; api?: string; json?: boolean }) => {
      const limit = positive(flags.limit, '--limit', 200);
      const type = flags.type?.toUpperCase();
      if (type !== undefined && !['PERSON', 'ORGANIZATION', 'LOCATION', 'EVENT', 'OTHER'].includes(type)) {
        throw new UsageError('--type must be PERSON, ORGANIZATION, LOCATION, EVENT or OTHER');
      }
      const service = findService(flags.api);
      let found: EntityJson[];
      if (service) {
        const query = new URLSearchParams({
          limit: String(limit),
          ...(text ? { q: text } : {}),
          ...(type ? { type } : {}),
        });
        found = (await callService<{ entities: EntityJson[] }>(service, `/v1/entities?${query.toString()}`)).entities;
      } else {
        found = await withCluster(async ({ directory }) =>
          directory.search(text, limit, type).map((e) => ({
            id: e.id,
            name: e.name,
            type: e.type,
            aliases: [...e.aliases],
            mentions: e.mentions,
            first_seen: e.first_seen_at === null ? null : new Date(e.first_seen_at).toISOString(),
            last_seen: e.last_seen_at === null ? null : new Date(e.last_seen_at).toISOString(),
          })),
        );
      }
      if (flags.json) return out(JSON.stringify({ entities: found }, null, 2));
      if (found.length === 0) return out(text ? `no entity matches "${text}"` : 'no entities yet');
      out(
        formatTable(
          ['id', 'name', 'type', 'mentions', 'last seen'],
          found.map((e) => [e.id, e.name, e.type, String(e.mentions), e.last_seen?.slice(0, 10) ?? '']),
        ),
      );
    });

  entities
    .command('timeline')
    .description('an entity’s interactions as of a date, newest first, with their sources')
    .argument('<id>', 'entity id, e.g. e-donald-trump (see `neon entities search`)')
    .option('--date <date>', 'as of this date (YYYY-MM-DD or ISO 8601); default now')
    .option('--limit <n>', 'at most n interactions (1–100)', '20')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--json', 'JSON output')
    .action(async (id: string, flags: { date?: string; limit: string; api?: string; json?: boolean }) => {
      const limit = positive(flags.limit, '--limit', 100);
      const tq = asOf(flags.date);
      const service = findService(flags.api);
      let timeline: TimelineJson;
      if (service) {
        const query = new URLSearchParams({ limit: String(limit), date: new Date(tq).toISOString() });
        timeline = await callService<TimelineJson>(
          service,
          `/v1/entities/${encodeURIComponent(id)}/timeline?${query.toString()}`,
        );
      } else {
        timeline = await withCluster(async ({ retriever }) => ({
          entity_id: id,
          date: new Date(tq).toISOString(),
          items: (await retriever.timeline(id, tq, limit)).items,
        }));
      }
      if (flags.json) return out(JSON.stringify(timeline, null, 2));
      const entity = await lookUp(service, id);
      out(`${entity?.name ?? id} as of ${timeline.date.slice(0, 10)}: ${timeline.items.length} interactions`);
      for (const item of timeline.items) {
        out(`${item.published_at.slice(0, 10)}  ${item.text}${item.url ? `  <${item.url}>` : ''}`);
      }
    });

  entities
    .command('story')
    .description('an entity’s events as of a date, earliest first, each with the sources that reported it')
    .argument('<id>', 'entity id, e.g. e-donald-trump (see `neon entities search`)')
    .option('--date <date>', 'as of this date (YYYY-MM-DD or ISO 8601); default now')
    .option('--limit <n>', 'the latest n events (1–200)', '20')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--json', 'JSON output')
    .action(async (id: string, flags: { date?: string; limit: string; api?: string; json?: boolean }) => {
      const limit = positive(flags.limit, '--limit', 200);
      const tq = asOf(flags.date);
      const service = findService(flags.api);
      let story: StoryJson;
      if (service) {
        const query = new URLSearchParams({ limit: String(limit), date: new Date(tq).toISOString() });
        story = await callService<StoryJson>(
          service,
          `/v1/entities/${encodeURIComponent(id)}/events?${query.toString()}`,
        );
      } else {
        story = await withCluster(async ({ retriever, directory }) => {
          const read = await new EventGraphReader(retriever).story(id, tq, {
            limit,
            isPlace: (entity) => directory.get(entity)?.type === 'LOCATION',
          });
          return {
            entity_id: id,
            name: directory.get(id)?.name ?? null,
            date: new Date(tq).toISOString(),
            events: read.events.map((e) => ({ ...eventJson(e), before: e.before, after: e.after })),
            complete: read.complete,
          };
        });
      }
      if (flags.json) return out(JSON.stringify(story, null, 2));
      const older = story.complete ? '' : ' (older events left out)';
      out(`${story.name ?? id} as of ${story.date.slice(0, 10)}: ${story.events.length} events${older}`);
      for (const event of story.events) {
        const others = event.who.filter((p) => p.id !== id).map((p) => p.name);
        const hosts = [...new Set(event.sources.map((url) => URL.parse(url)?.host ?? url))];
        out(`${event.when.slice(0, 10)}  ${event.what}`);
        out(
          `            ${[
            others.length > 0 ? `with ${others.join(', ')}` : '',
            `${hosts.length} source${hosts.length === 1 ? '' : 's'}: ${hosts.join(', ')}`,
            event.id,
          ]
            .filter((part) => part !== '')
            .join(' · ')}`,
        );
      }
    });

  entities
    .command('mentions')
    .description('how many unique chunks mentioned an entity, per day (or hour)')
    .argument('<id>', 'entity id')
    .option('--from <date>', 'start (default 90 days before --to, 7 for hours)')
    .option('--to <date>', 'end (default now)')
    .option('--hourly', 'count per hour instead of per day')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--json', 'JSON output')
    .action(
      async (id: string, flags: { from?: string; to?: string; hourly?: boolean; api?: string; json?: boolean }) => {
        const granularity = flags.hourly ? 'hour' : 'day';
        const to = asOf(flags.to);
        const from =
          flags.from === undefined
            ? to - (granularity === 'day' ? 90 : 7) * DAY_MS
            : Date.parse(flags.from.length === 10 ? `${flags.from}T00:00:00Z` : flags.from);
        if (!Number.isFinite(from) || from > to) throw new UsageError('--from must be a date before --to');
        const service = findService(flags.api);
        let mentions: MentionsJson;
        if (service) {
          const query = new URLSearchParams({
            granularity,
            from: new Date(from).toISOString(),
            to: new Date(to).toISOString(),
          });
          mentions = await callService<MentionsJson>(
            service,
            `/v1/entities/${encodeURIComponent(id)}/mentions?${query.toString()}`,
          );
        } else {
          mentions = await withCluster(async ({ retriever, directory }) => ({
            entity_id: id,
            name: directory.get(id)?.name ?? null,
            granularity,
            buckets: (await retriever.mentions(id, from, to, granularity)).map((b) => ({
              start: new Date(b.start).toISOString(),
              count: b.count,
            })),
          }));
        }
        if (flags.json) return out(JSON.stringify(mentions, null, 2));
        const peak = Math.max(1, ...mentions.buckets.map((b) => b.count));
        out(`${mentions.name ?? id}: unique chunks per ${granularity}`);
        for (const b of mentions.buckets) {
          const label = granularity === 'day' ? b.start.slice(0, 10) : b.start.slice(0, 13).replace('T', ' ');
          out(`${label}  ${String(b.count).padStart(4)} ${'█'.repeat(Math.max(1, Math.round((b.count / peak) * 40)))}`);
        }
        if (mentions.buckets.length === 0) out('no mentions in that period');
      },
    );

  const decide = async (decision: FusionDecision): Promise<void> => {
    const { transport } = await clusterTransport('neon-entities', process.env, [TOPICS.registry]);
    try {
      const entity = await writeFusionDecision(transport, decision);
      const into = entity.fusion && !entity.fusion.revoked ? ` → ${entity.fusion.into}` : ' stands on its own';
      out(`${entity.id} (${entity.name})${into}; written to ${TOPICS.registry}`);
    } catch (error) {
      if (error instanceof RangeError) throw new UsageError(error.message);
      throw error;
    } finally {
      await transport.close();
    }
  };

  entities
    .command('unfuse')
    .description('undo the fusion of an entity into another (on Kafka): it stands on its own again, for good')
    .argument('<id>', 'id of the fused entity')
    .action((id: string) => decide({ kind: 'unfuse', id }));

  entities
    .command('fuse')
    .description('fuse an entity into another by hand (on Kafka); undone with `entities unfuse`')
    .argument('<id>', 'id of the entity to fuse')
    .argument('<into>', 'id of the entity it is')
    .action((id: string, into: string) => decide({ kind: 'fuse', id, into }));
}

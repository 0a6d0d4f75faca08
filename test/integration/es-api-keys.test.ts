import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Embedder } from '../../processors/embed/embedder.js';
import { chunkDocument, interactionDocument } from '../../processors/index/index-documents.js';
import { parseSearchRequest } from '../../processors/query/search-request.js';
import { Secret } from '../../schemas/connection-config.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import type { Chunk, Interaction } from '../../schemas/records.generated.js';
import { EmbeddingModelMismatch } from '../../streams/datastore/datastore.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';
import { DatastoreMismatchError } from '../../streams/elasticsearch/datastores.js';
import { createElasticsearchClient } from '../../streams/elasticsearch/elasticsearch-client.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import { neonOnce } from '../../devkit/cli-process.js';
import { startSecuredElasticsearch, type SecuredElasticsearch } from '../harness/secured-elasticsearch.js';

/**
 * `neon es-api-keys` against a real Elasticsearch with security on (a node of its own, beside the
 * suite's): the keys it makes for Kubernetes work for what their service does, through the product's
 * own client and datastore code, and for nothing else.
 */
const MODEL = 'fixed-test-vectors';
const JAN = Date.UTC(2025, 0, 15, 12);
const FEB = Date.UTC(2025, 1, 10, 12);
const CHUNKS = datastoreNames('chunks');
const INTERACTIONS = datastoreNames('interactions');
/** An index that is not a datastore, with something in it that neither key may see. */
const PRIVATE_INDEX = 'private-notes';

interface ServiceKey {
  id: string;
  apiKey: string;
}
interface CreatedKeys {
  indexer: ServiceKey;
  query: ServiceKey;
}

let node: SecuredElasticsearch;
let admin: Client;
let scratch: string;
const clients: Client[] = [];
/** What afterAll undoes, latest first: only what beforeAll got as far as making. */
const cleanups: (() => Promise<unknown>)[] = [];

const CALLER_SETTINGS = ['ES_URL', 'ES_API_KEY', 'ES_USERNAME', 'ES_PASSWORD', 'ES_CA_FILE', 'NEON_INDEX_PREFIX'];

/** The CLI's environment: the secured node with the given credentials, none of the caller's. */
function cliEnv(credentials: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !CALLER_SETTINGS.includes(name));
  return { ...Object.fromEntries(inherited), ES_URL: node.url, ...credentials };
}

function adminEnv(password = node.adminPassword): NodeJS.ProcessEnv {
  return cliEnv({ ES_USERNAME: node.adminUser, ES_PASSWORD: password });
}

/** A client as a Deployment builds it from `ES_API_KEY`. */
function clientWithKey(key: ServiceKey): Client {
  const client = createElasticsearchClient({ url: node.url, apiKey: new Secret(key.apiKey) }, { maxRetries: 0 });
  clients.push(client);
  return client;
}

function datastoreWithKey(key: ServiceKey): ElasticsearchDatastore {
  return new ElasticsearchDatastore({ es: clientWithKey(key), prefix: 'neon', location: node.url });
}

let manifests = 0;
/** Runs `neon es-api-keys --secrets-manifest` as the Job does and reads the Secrets it wrote. */
async function createKeys(): Promise<CreatedKeys> {
  manifests += 1;
  const file = join(scratch, `secrets-${manifests}.yaml`);
  const run = await neonOnce(['es-api-keys', '--secrets-manifest', file, '--namespace', 'neon'], adminEnv());
  expect(run.code, run.output).toBe(0);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  const secrets = parseAllDocuments(await readFile(file, 'utf8'))
    .map((doc) => doc.toJS() as unknown)
    .filter((doc) => doc !== null) as {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace: string; annotations: Record<string, string> };
    type: string;
    stringData: { api_key: string };
  }[];
  expect(secrets.map((s) => [s.kind, s.metadata.name, s.metadata.namespace, s.type])).toEqual([
    ['Secret', 'neon-es-indexer', 'neon', 'Opaque'],
    ['Secret', 'neon-es-query', 'neon', 'Opaque'],
  ]);
  const [indexer, query] = secrets.map((s) => ({
    id: s.metadata.annotations['neon-stream.io/api-key-id']!,
    apiKey: s.stringData.api_key,
  }));
  // The key never appears in what the command printed; the annotation names the key it is.
  expect(run.output).not.toContain(indexer!.apiKey);
  for (const [key, name] of [
    [indexer!, 'neon-es-indexer'],
    [query!, 'neon-es-query'],
  ] as const) {
    const who = await clientWithKey(key).security.authenticate();
    expect(who.api_key).toMatchObject({ id: key.id, name });
  }
  return { indexer: indexer!, query: query! };
}

function chunk(id: string, t: number): Chunk {
  return {
    id: `chunk-${id}`,
    article_id: `art-${id}`,
    index: 0,
    text: `The chunk ${id} about the harbour strike.`,
    title: '',
    marked_text: `The chunk ${id} about the <e>harbour strike</e>.`,
    entity_ids: ['e-harbour-strike'],
    entities: [{ id: 'e-harbour-strike', name: 'harbour strike', type: 'EVENT' }],
    t,
    provenance: [
      { article_id: `art-${id}`, url: `https://news.example/${id}`, source: 'news.example', published_at: t },
    ],
  };
}

function interaction(id: string, t: number): Interaction {
  return {
    id,
    t,
    subject_id: 'e-dock-union',
    subject_name: 'Dock Union',
    object_id: 'e-port-authority',
    object_name: 'Port Authority',
    text: `Dock Union met the Port Authority (${id}).`,
    title: '',
    variant: 'M2',
    chunk_ids: [`chunk-${id}`],
    article_ids: [`art-${id}`],
    urls: [],
    model: 'test',
    extracted_at: t,
  };
}

const vector = (cos: number): Float32Array => Float32Array.from([cos, Math.sqrt(1 - cos * cos), 0, 0]);

/** Questions embed to [1, 0, 0, 0], with the datastores' model. */
const queryEmbedder: Embedder = {
  model: MODEL,
  dimensions: 4,
  embed: (texts) => Promise.resolve(texts.map(() => Float32Array.from([1, 0, 0, 0]))),
  close: () => Promise.resolve(),
};

/** The HTTP status of a refused call, or 'succeeded'. */
async function statusOf(call: Promise<unknown>): Promise<number | 'succeeded'> {
  try {
    await call;
    return 'succeeded';
  } catch (error) {
    const status = (error as { meta?: { statusCode?: number } }).meta?.statusCode;
    if (typeof status === 'number') return status;
    throw error;
  }
}

beforeAll(async () => {
  node = await startSecuredElasticsearch((line) => void process.stderr.write(`[secured-es] ${line}\n`));
  cleanups.push(() => node.stop());
  admin = createElasticsearchClient({
    url: node.url,
    username: node.adminUser,
    password: new Secret(node.adminPassword),
  });
  cleanups.push(() => admin.close());
  scratch = await mkdtemp(join(tmpdir(), 'neon-es-api-keys-'));
  cleanups.push(() => rm(scratch, { recursive: true, force: true }));
  await admin.index({ index: PRIVATE_INDEX, id: 'n1', document: { note: 'not for the services' }, refresh: true });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('neon es-api-keys on a security-enabled Elasticsearch', () => {
  let first: CreatedKeys;
  let second: CreatedKeys;

  it('writes an indexer and a query key as Kubernetes Secrets', async () => {
    first = await createKeys();
    expect(first.indexer.id).not.toBe(first.query.id);
  });

  it('the indexer key prepares the datastores, writes, counts and drops old months', async () => {
    const datastore = datastoreWithKey(first.indexer);
    await datastore.prepare({ model: MODEL, dimensions: 4 });
    await datastore.prepare({ model: MODEL, dimensions: 4 }); // again, as every indexer replica does
    const writer = datastore.writer({ stage: 'index-chunks', lingerMs: 1, refresh: 'wait_for' });
    const now = Date.now();
    await Promise.all([
      ...[
        ['j1', JAN, 0.9],
        ['j2', JAN + 3_600_000, 0.5],
        ['f1', FEB, 0.8],
      ].map(([id, t, cos]) =>
        writer.write({
          index: monthlyIndex(CHUNKS, t as number),
          id: `chunk-${id}`,
          document: chunkDocument(chunk(id as string, t as number), vector(cos as number), MODEL, now),
        }),
      ),
      writer.write({
        index: monthlyIndex(INTERACTIONS, FEB),
        id: 'i1',
        document: interactionDocument(interaction('i1', FEB), vector(0.7), MODEL, now),
      }),
    ]);
    await writer.close();
    expect(await datastore.count('chunks')).toBe(3);
    expect(await datastore.count('interactions')).toBe(1);
    expect(await datastore.months('chunks')).toEqual(['neon-chunks-2025.01', 'neon-chunks-2025.02']);
    // Switching models is refused for what it is, not for want of a privilege.
    await expect(datastore.prepare({ model: 'another-model', dimensions: 8 })).rejects.toThrow(DatastoreMismatchError);
    // Retention, as the indexers run it (product-runtime swallows its errors: they must not happen).
    expect(await datastore.dropMonthsBefore('chunks', Date.UTC(2025, 1, 1))).toEqual(['neon-chunks-2025.01']);
    expect(await datastore.count('chunks')).toBe(1);
    expect(await datastore.months('chunks')).toEqual(['neon-chunks-2025.02']);
    // Maintenance: a second segment in February, then the month's figures and a merge into one
    // segment. Elasticsearch runs the merge in the background and would report a refusal only in its
    // task, so what shows the privilege suffices is the segment count coming down.
    const another = datastore.writer({ stage: 'index-chunks', lingerMs: 1, refresh: 'wait_for' });
    await another.write({
      index: monthlyIndex(CHUNKS, FEB),
      id: 'chunk-f2',
      document: chunkDocument(chunk('f2', FEB + 60_000), vector(0.1), MODEL, now),
    });
    await another.close();
    const [february] = await datastore.monthStats('chunks');
    expect(february).toMatchObject({ index: 'neon-chunks-2025.02', docs: 2 });
    expect(february!.segments).toBeGreaterThan(1);
    await datastore.compact('neon-chunks-2025.02');
    let segments = february!.segments;
    for (let attempt = 0; attempt < 100 && segments > 1; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      segments = (await datastore.monthStats('chunks'))[0]!.segments;
    }
    expect(segments).toBe(1);
    // Back to what the query key's test expects.
    await datastore.es.delete({ index: 'neon-chunks-2025.02', id: 'chunk-f2', refresh: 'wait_for' });

    // Nothing outside the datastores, not even another index it could create.
    const es = datastore.es;
    expect(await statusOf(es.search({ index: PRIVATE_INDEX }))).toBe(403);
    expect(await statusOf(es.index({ index: 'stray-index', document: { x: 1 } }))).toBe(403);
    expect(await statusOf(es.cluster.health())).toBe(403);
  });

  it('the query key counts, searches and lists, as the query service does', async () => {
    const datastore = datastoreWithKey(first.query);
    expect(await datastore.count('chunks')).toBe(1);
    expect(await datastore.count('interactions')).toBe(1);
    expect(await datastore.embeddingModel('chunks')).toBe(MODEL);
    const nearest = await datastore.nearest({
      kinds: ['chunks', 'interactions'],
      vector: [1, 0, 0, 0],
      k: 5,
      filter: {},
      timeoutMs: 5_000,
    });
    expect(nearest.map((hit) => hit.document.id)).toEqual(['chunk-f1', 'i1']);
    const listed = await datastore.list({ kind: 'chunks', filter: {}, limit: 10, order: 'newest', timeoutMs: 5_000 });
    expect(listed.map((d) => d.id)).toEqual(['chunk-f1']);
    expect(
      await datastore.histogram({ kind: 'interactions', filter: {}, granularity: 'day', timeoutMs: 5_000 }),
    ).toHaveLength(1);
    // The query service's own path: the model check, then retrieval.
    const parsed = parseSearchRequest({ q: 'harbour strike', date: new Date(FEB).toISOString(), store: 'both' }, 0);
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const result = await new Retriever({ datastore, embedder: queryEmbedder }).search(parsed.request);
    expect(result.items.map((item) => item.id).sort()).toEqual(['chunk-f1', 'i1']);
    const otherModel: Embedder = { ...queryEmbedder, model: 'another-model' };
    await expect(new Retriever({ datastore, embedder: otherModel }).search(parsed.request)).rejects.toThrow(
      EmbeddingModelMismatch,
    );
  });

  it('the query key may not write, prepare, delete, or read anything else (403)', async () => {
    const datastore = datastoreWithKey(first.query);
    const es = datastore.es;
    const writer = datastore.writer({ stage: 'query', lingerMs: 1 });
    const refused = await writer
      .write({
        index: monthlyIndex(CHUNKS, FEB),
        id: 'chunk-x',
        document: chunkDocument(chunk('x', FEB), vector(0.1), MODEL, Date.now()),
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    await writer.close();
    expect(refused).toBeInstanceOf(StageError);
    expect((refused as StageError).code).toBe('es_unauthorized');
    expect((refused as StageError).message).toMatch(/security_exception/);
    expect(await statusOf(es.index({ index: CHUNKS.alias, id: 'chunk-x', document: { id: 'chunk-x' } }))).toBe(403);
    expect(await statusOf(datastore.prepare({ model: MODEL, dimensions: 4 }))).toBe(403);
    expect(
      await statusOf(
        es.indices.putIndexTemplate({ name: CHUNKS.template, index_patterns: [`${CHUNKS.indexPrefix}*`] }),
      ),
    ).toBe(403);
    expect(await statusOf(es.indices.delete({ index: 'neon-chunks-2025.02' }))).toBe(403);
    expect(await statusOf(datastore.dropMonthsBefore('chunks', Date.UTC(2026, 0, 1)))).toBe(403);
    expect(await statusOf(datastore.monthStats('chunks'))).toBe(403);
    expect(await statusOf(es.search({ index: PRIVATE_INDEX }))).toBe(403);
    expect(await statusOf(es.count({ index: PRIVATE_INDEX }))).toBe(403);
    expect(await statusOf(es.security.createApiKey({ name: 'escalation' }))).toBe(403);
    // All of it was refused: the datastores are as the indexer left them.
    expect(await datastoreWithKey(first.indexer).count('chunks')).toBe(1);
  });

  it('--invalidate-except retires the keys not in use and keeps those in use working', async () => {
    second = await createKeys();
    // A mistake that would lock out every query pod is refused, and nothing is invalidated.
    const mistaken = await neonOnce(['es-api-keys', '--invalidate-except', second.indexer.id], adminEnv());
    expect(mistaken.code, mistaken.output).toBe(2);
    expect(mistaken.output).toMatch(/neon-es-query/);
    expect(await datastoreWithKey(first.query).count('chunks')).toBe(1);

    const run = await neonOnce(
      ['es-api-keys', '--invalidate-except', `${second.indexer.id},${second.query.id}`],
      adminEnv(),
    );
    expect(run.code, run.output).toBe(0);
    const report = JSON.parse(run.output.trim().split('\n').at(-1)!) as { invalidated: string[]; kept: string[] };
    expect(report.invalidated.sort()).toEqual([first.indexer.id, first.query.id].sort());
    expect(report.kept).toEqual([second.indexer.id, second.query.id]);

    const { api_keys: keys } = await admin.security.getApiKey({ id: first.indexer.id });
    expect(keys[0]?.invalidated).toBe(true);
    expect(await statusOf(datastoreWithKey(first.indexer).count('chunks'))).toBe(401);
    expect(await statusOf(datastoreWithKey(first.query).count('chunks'))).toBe(401);

    const indexer = datastoreWithKey(second.indexer);
    const writer = indexer.writer({ stage: 'index-chunks', lingerMs: 1, refresh: 'wait_for' });
    await writer.write({
      index: monthlyIndex(CHUNKS, FEB),
      id: 'chunk-f2',
      document: chunkDocument(chunk('f2', FEB), vector(0.6), MODEL, Date.now()),
    });
    await writer.close();
    expect(await datastoreWithKey(second.query).count('chunks')).toBe(2);
  });

  it('fails with a clear message and a non-zero exit on wrong or insufficient credentials', async () => {
    const wrong = await neonOnce(['es-api-keys'], adminEnv('not-the-password'));
    expect(wrong.code, wrong.output).toBe(2);
    expect(wrong.output).toContain(`Elasticsearch at ${node.url} rejected the credentials`);
    expect(wrong.output).not.toMatch(/unexpected failure|\n\s+at /);
    expect(wrong.output).not.toContain('not-the-password');

    const unknownKey = await neonOnce(
      ['es-api-keys'],
      cliEnv({ ES_API_KEY: Buffer.from('nope:nope').toString('base64') }),
    );
    expect(unknownKey.code, unknownKey.output).toBe(2);
    expect(unknownKey.output).toContain('rejected the credentials');

    // A service's own key authenticates, but may neither make keys nor retire the others.
    const active = async (): Promise<string[]> =>
      (await admin.security.getApiKey({ name: 'neon-es-*', active_only: true })).api_keys.map((k) => k.id).sort();
    const before = await active();
    expect(before).toEqual([second.indexer.id, second.query.id].sort());
    for (const args of [['es-api-keys'], ['es-api-keys', '--invalidate-except', second.query.id]]) {
      const run = await neonOnce(args, cliEnv({ ES_API_KEY: second.query.apiKey }));
      expect(run.code, run.output).toBe(2);
      expect(run.output).toContain('may not create or invalidate API keys');
      expect(run.output).not.toMatch(/unexpected failure|\n\s+at /);
    }
    expect(await active()).toEqual(before);
  });
});

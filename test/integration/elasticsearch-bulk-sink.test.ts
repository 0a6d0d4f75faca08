import { errors, type Client, type estypes } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../schemas/local-infra-config.js';
import {
  backoffDelay,
  ElasticsearchBulkSink,
  type BulkClient,
  type IndexRequest,
} from '../../streams/elasticsearch/elasticsearch-bulk-sink.js';
import { StageError } from '../../streams/runtime/stage-error.js';
import { testElasticsearch } from '../harness/clients.js';
import { freshIndex } from '../../devkit/fresh-names.js';

/**
 * The bulk sink against a real Elasticsearch node: every write resolves only once its own document
 * is indexed, replays do not duplicate, bad documents fail alone, the queue stays bounded, and only
 * the failed items of a response are resent. A second block drives the paths a healthy node cannot
 * produce on demand (413, 401, dropped connections, answers that do not match) with a scripted client.
 */

interface Action {
  op: string;
  index: string;
  id: string;
}

/** The action lines of a bulk request, in order (the sink sends each as a pre-serialized string). */
function actionsOf(params: estypes.BulkRequest<string>): Action[] {
  const operations = params.operations ?? [];
  const actions: Action[] = [];
  for (let i = 0; i < operations.length; i += 2) {
    const line = operations[i];
    const parsed = (typeof line === 'string' ? JSON.parse(line) : line) as Record<
      string,
      { _index: string; _id: string }
    >;
    const [op, meta] = Object.entries(parsed)[0]!;
    actions.push({ op, index: meta._index, id: meta._id });
  }
  return actions;
}

function stageErrorOf(error: unknown): StageError {
  expect(error).toBeInstanceOf(StageError);
  return error as StageError;
}

/** Settles every promise and returns what each one did, so one rejection does not hide the rest. */
async function outcomes(promises: Promise<void>[]): Promise<(StageError | 'ok')[]> {
  const results = await Promise.allSettled(promises);
  return results.map((r) => (r.status === 'fulfilled' ? 'ok' : stageErrorOf(r.reason)));
}

const noSleep = (): Promise<void> => Promise.resolve();

function doc(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { title: `article ${i}`, n: i, ...extra };
}

describe('ElasticsearchBulkSink on a real node', () => {
  let es: Client;
  const created: string[] = [];

  async function createIndex(label: string, mappings?: estypes.MappingTypeMapping): Promise<string> {
    const index = freshIndex(label);
    created.push(index);
    await es.indices.create({
      index,
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      ...(mappings ? { mappings } : {}),
    });
    return index;
  }

  async function idsIn(index: string): Promise<string[]> {
    await es.indices.refresh({ index });
    const result = await es.search({ index, size: 10_000, _source: false, query: { match_all: {} } });
    return result.hits.hits.map((h) => h._id!).sort();
  }

  async function countIn(index: string): Promise<number> {
    await es.indices.refresh({ index });
    return (await es.count({ index })).count;
  }

  beforeAll(() => {
    es = testElasticsearch();
  });

  afterAll(async () => {
    // One missing index would fail the whole delete (404) and leave the rest behind.
    if (created.length > 0) await es.indices.delete({ index: created, ignore_unavailable: true });
    await es.close();
  });

  it('accepts a real Client as its bulk client', () => {
    const client: BulkClient = es;
    expect(client).toBe(es);
  });

  it('(a) indexes 2,000 concurrent writes exactly once, and a replay leaves the count at 2,000', async () => {
    const index = await createIndex('bulk-a');
    const requests: number[] = [];
    const sink = new ElasticsearchBulkSink({ client: es, metrics: { onRequest: (docs) => requests.push(docs) } });
    const ids = Array.from({ length: 2000 }, (_, i) => `doc-${String(i).padStart(4, '0')}`);

    await Promise.all(ids.map((id, i) => sink.write({ index, id, document: doc(i, { version: 1 }) })));
    expect(await idsIn(index)).toEqual(ids);
    // Batched, not one request per document, and never above the batch bound.
    expect(requests.length).toBeLessThan(40);
    expect(Math.max(...requests)).toBeLessThanOrEqual(500);

    await Promise.all(ids.map((id, i) => sink.write({ index, id, document: doc(i, { version: 2 }) })));
    await sink.close();
    expect(await countIn(index)).toBe(2000);
    expect(await idsIn(index)).toEqual(ids);
    // The replay overwrote every document rather than adding to them.
    expect((await es.count({ index, query: { term: { version: 1 } } })).count).toBe(0);
  });

  it('(a) treats a replayed create as done and keeps the first version', async () => {
    const index = await createIndex('bulk-create');
    const sink = new ElasticsearchBulkSink({ client: es });
    const write = (v: number) =>
      Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          sink.write({ index, id: `c-${i}`, op: 'create', document: doc(i, { version: v }) }),
        ),
      );
    await write(1);
    await write(2);
    await sink.close();
    expect(await countIn(index)).toBe(300);
    const replayed = await es.count({ index, query: { term: { version: 2 } } });
    expect(replayed.count).toBe(0);
  });

  it('(b) rejects documents a strict mapping refuses, and indexes their batch-mates', async () => {
    const index = await createIndex('bulk-strict', {
      dynamic: 'strict',
      properties: { title: { type: 'text' }, n: { type: 'integer' } },
    });
    const requests: number[] = [];
    const sink = new ElasticsearchBulkSink({
      client: es,
      lingerMs: 200,
      metrics: { onRequest: (docs) => requests.push(docs) },
    });
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 60; i++) {
      const bad = i % 5 === 0;
      const unparsable = i === 7;
      const document = bad
        ? doc(i, { unknown_field: 'x'.repeat(2000) })
        : unparsable
          ? { title: 't', n: 'seven' }
          : doc(i);
      writes.push(sink.write({ index, id: `s-${i}`, document }));
    }
    const results = await outcomes(writes);
    await sink.close();
    expect(requests).toEqual([60]);

    for (const [i, result] of results.entries()) {
      if (i % 5 !== 0 && i !== 7) {
        expect(result, `s-${i}`).toBe('ok');
        continue;
      }
      const error = result as StageError;
      expect(error.code).toBe('es_document_rejected');
      expect(error.disposition).toBe('dead_letter');
      expect(error.retriable).toBe(false);
      expect(error.message).toContain(`s-${i}`);
      expect(error.message).toMatch(
        i === 7 ? /document_parsing_exception|mapper_parsing_exception/ : /strict_dynamic_mapping_exception/,
      );
      expect(error.message.length).toBeLessThanOrEqual(500);
    }
    const expected = Array.from({ length: 60 }, (_, i) => i)
      .filter((i) => i % 5 !== 0 && i !== 7)
      .map((i) => `s-${i}`)
      .sort();
    expect(await idsIn(index)).toEqual(expected);
  });

  it('(c) never accepts more than maxQueuedDocs pending writes while Elasticsearch is slow', async () => {
    const index = await createIndex('bulk-bound');
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let maxPending = 0;
    const slowClient: BulkClient = {
      async bulk(params) {
        maxPending = Math.max(maxPending, sink.pendingCount);
        await gate;
        return es.bulk(params);
      },
    };
    const sink = new ElasticsearchBulkSink({
      client: slowClient,
      maxQueuedDocs: 100,
      maxBatchDocs: 10,
      maxConcurrentRequests: 2,
      lingerMs: 5,
    });

    let settled = 0;
    const writes = Array.from({ length: 1000 }, (_, i) =>
      sink.write({ index, id: `q-${i}`, document: doc(i) }).finally(() => (settled += 1)),
    );
    const sampler = setInterval(() => (maxPending = Math.max(maxPending, sink.pendingCount)), 1);
    await new Promise((resolve) => setTimeout(resolve, 200));

    expect(sink.pendingCount).toBe(100);
    expect(sink.blockedWriters).toBe(900);
    expect(sink.inFlightRequests).toBe(2);
    expect(settled).toBe(0);

    openGate();
    await Promise.all(writes);
    clearInterval(sampler);
    await sink.close();
    expect(maxPending).toBe(100);
    expect(sink.pendingCount).toBe(0);
    expect(await countIn(index)).toBe(1000);
  });

  it('(c) holds writers back when batches never fill and lingering is long, until close flushes', async () => {
    const index = await createIndex('bulk-linger');
    const sink = new ElasticsearchBulkSink({ client: es, maxQueuedDocs: 20, maxBatchDocs: 20, lingerMs: 60_000 });
    let settled = 0;
    const writes = Array.from({ length: 50 }, (_, i) =>
      sink.write({ index, id: `l-${i}`, document: doc(i) }).finally(() => (settled += 1)),
    );
    // Two full batches of 20 go at once (however long a busy node takes to answer them)…
    await expect.poll(() => settled, { timeout: 30_000, interval: 20 }).toBe(40);
    // …and the last 10 wait for a batch that never fills.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(40);
    expect(sink.pendingCount).toBe(10);
    expect(sink.blockedWriters).toBe(0);
    await sink.close();
    await Promise.all(writes);
    expect(await countIn(index)).toBe(50);
  });

  it('(d) resends exactly the items answered 429, and they end up indexed', async () => {
    const index = await createIndex('bulk-retry');
    const throttled = new Set(Array.from({ length: 40 }, (_, i) => `r-${i * 5 + 2}`));
    const sent: string[][] = [];
    const delays: number[] = [];
    const retries: number[] = [];
    const proxy: BulkClient = {
      async bulk(params) {
        const actions = actionsOf(params);
        sent.push(actions.map((a) => a.id));
        if (sent.length > 1) return es.bulk(params);
        // First request: the throttled items never reach the node, and their answers say 429.
        const operations = params.operations ?? [];
        const forwarded = operations.filter((_, i) => !throttled.has(actions[Math.floor(i / 2)]!.id));
        const real = await es.bulk({ ...params, operations: forwarded });
        const answers = [...real.items];
        const items = actions.map((a) =>
          throttled.has(a.id)
            ? {
                index: {
                  _index: a.index,
                  _id: a.id,
                  status: 429,
                  error: { type: 'es_rejected_execution_exception', reason: 'rejected execution (simulated)' },
                },
              }
            : answers.shift()!,
        );
        return { ...real, errors: true, items };
      },
    };
    const sink = new ElasticsearchBulkSink({
      client: proxy,
      lingerMs: 100,
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
      metrics: { onRetry: (n) => retries.push(n) },
    });
    const ids = Array.from({ length: 200 }, (_, i) => `r-${i}`);
    await Promise.all(ids.map((id, i) => sink.write({ index, id, document: doc(i) })));
    await sink.close();

    expect(sent).toHaveLength(2);
    expect(sent[0]).toEqual(ids);
    expect(sent[1]!.sort()).toEqual([...throttled].sort());
    expect(retries).toEqual([40]);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(0);
    expect(delays[0]).toBeLessThan(100);
    expect(await idsIn(index)).toEqual([...ids].sort());
  });

  it('(d) gives up after maxRetries with a retriable es_unavailable, without holding back the rest', async () => {
    const index = await createIndex('bulk-give-up');
    let attemptsOfStuck = 0;
    const proxy: BulkClient = {
      async bulk(params) {
        const actions = actionsOf(params);
        const stuck = actions.findIndex((a) => a.id === 'g-3');
        if (stuck < 0) return es.bulk(params);
        attemptsOfStuck += 1;
        const operations = (params.operations ?? []).filter((_, i) => Math.floor(i / 2) !== stuck);
        const real =
          operations.length > 0 ? await es.bulk({ ...params, operations }) : { errors: false, took: 0, items: [] };
        const items = [...real.items];
        items.splice(stuck, 0, {
          index: {
            _index: index,
            _id: 'g-3',
            status: 503,
            error: { type: 'unavailable_shards_exception', reason: 'x' },
          },
        });
        return { ...real, errors: true, items };
      },
    };
    const delays: number[] = [];
    const sink = new ElasticsearchBulkSink({
      client: proxy,
      maxRetries: 3,
      lingerMs: 20,
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
      random: () => 0.999,
    });
    const results = await outcomes(
      Array.from({ length: 10 }, (_, i) => sink.write({ index, id: `g-${i}`, document: doc(i) })),
    );
    await sink.close();

    expect(attemptsOfStuck).toBe(4);
    // Full jitter with random ≈ 1 shows the exponential ceiling: 100, 200, 400 ms.
    expect(delays).toEqual([99, 199, 399]);
    const error = results[3] as StageError;
    expect(error.code).toBe('es_unavailable');
    expect(error.retriable).toBe(true);
    expect(error.message).toMatch(/after 3 retries.*503 unavailable_shards_exception/);
    expect(results.filter((r) => r === 'ok')).toHaveLength(9);
    expect(await countIn(index)).toBe(9);
  });

  it('fails fatally when a required alias does not exist, instead of creating an index', async () => {
    const alias = freshIndex('bulk-missing-alias');
    created.push(alias);
    const sink = new ElasticsearchBulkSink({ client: es, requireAlias: true, lingerMs: 0 });
    const [result] = await outcomes([sink.write({ index: alias, id: 'x', document: doc(1) })]);
    await sink.close();
    const error = result as StageError;
    expect(error.code).toBe('es_unauthorized');
    expect(error.disposition).toBe('fatal');
    expect(error.message).toContain('index_not_found_exception');
    expect(await es.indices.exists({ index: alias })).toBe(false);
  });
});

/** Answers built by hand, for the paths a healthy node will not take on demand. */
function responseError(statusCode: number, type: string): errors.ResponseError {
  return new errors.ResponseError({
    body: { error: { type, reason: 'scripted' }, status: statusCode },
    statusCode,
    headers: {},
    warnings: null,
    meta: {
      context: null,
      name: 'test',
      request: { params: { method: 'POST', path: '/_bulk' }, options: {}, id: 1 },
      connection: null,
      attempts: 0,
      aborted: false,
    },
  });
}

function allOk(params: estypes.BulkRequest<string>): estypes.BulkResponse {
  return {
    errors: false,
    took: 1,
    items: actionsOf(params).map((a) => ({ [a.op]: { _index: a.index, _id: a.id, status: 201 } })),
  };
}

function requestsOf(n: number, prefix = 'x'): IndexRequest[] {
  return Array.from({ length: n }, (_, i) => ({ index: 'scripted', id: `${prefix}-${i}`, document: { n: i } }));
}

describe('ElasticsearchBulkSink against a scripted client', () => {
  it('halves a batch on 413 and dead-letters a single document that is still too large', async () => {
    const sizes: number[] = [];
    const client: BulkClient = {
      bulk: async (params) => {
        const actions = actionsOf(params);
        sizes.push(actions.length);
        if (actions.length > 2 || actions.some((a) => a.id === 'x-5')) throw responseError(413, 'too_large');
        return allOk(params);
      },
    };
    const sink = new ElasticsearchBulkSink({ client, lingerMs: 10, sleep: noSleep });
    const results = await outcomes(requestsOf(8).map((r) => sink.write(r)));
    await sink.close();
    expect(sizes).toEqual([8, 4, 2, 2, 4, 2, 1, 1, 2]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(7);
    const error = results[5] as StageError;
    expect(error.code).toBe('es_document_rejected');
    expect(error.message).toContain('too large');
  });

  it('rejects the whole batch as es_unauthorized on 401, without retrying', async () => {
    let calls = 0;
    const client: BulkClient = {
      bulk: async () => {
        calls += 1;
        throw responseError(401, 'security_exception');
      },
    };
    const sink = new ElasticsearchBulkSink({ client, lingerMs: 5, sleep: noSleep });
    const results = await outcomes(requestsOf(3).map((r) => sink.write(r)));
    await sink.close();
    expect(calls).toBe(1);
    for (const r of results) {
      expect((r as StageError).code).toBe('es_unauthorized');
      expect((r as StageError).disposition).toBe('fatal');
    }
  });

  it('retries the whole batch after a dropped connection', async () => {
    let calls = 0;
    const client: BulkClient = {
      bulk: async (params) => {
        calls += 1;
        if (calls === 1) throw new errors.ConnectionError('socket hang up');
        return allOk(params);
      },
    };
    const sink = new ElasticsearchBulkSink({ client, lingerMs: 5, sleep: noSleep });
    expect(await outcomes(requestsOf(5).map((r) => sink.write(r)))).toEqual(Array(5).fill('ok'));
    await sink.close();
    expect(calls).toBe(2);
  });

  it('does not take an answer for another document, or a missing answer, as an acknowledgement', async () => {
    let calls = 0;
    const client: BulkClient = {
      bulk: async (params) => {
        calls += 1;
        const response = allOk(params);
        if (calls === 1) {
          response.items = response.items.slice(0, 2);
          response.items[1] = { index: { _index: 'scripted', _id: 'someone-else', status: 201 } };
        }
        return response;
      },
    };
    const sent: number[] = [];
    const sink = new ElasticsearchBulkSink({
      client,
      lingerMs: 5,
      sleep: noSleep,
      metrics: { onRequest: (docs) => sent.push(docs) },
    });
    expect(await outcomes(requestsOf(4).map((r) => sink.write(r)))).toEqual(Array(4).fill('ok'));
    await sink.close();
    expect(sent).toEqual([4, 3]);
  });

  it('keeps at most maxConcurrentRequests requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const client: BulkClient = {
      bulk: async (params) => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
        return allOk(params);
      },
    };
    const sink = new ElasticsearchBulkSink({ client, maxBatchDocs: 5, maxConcurrentRequests: 3, lingerMs: 1 });
    await Promise.all(requestsOf(200).map((r) => sink.write(r)));
    await sink.close();
    expect(peak).toBe(3);
  });

  it('splits batches by estimated bytes, sending an oversized document alone', async () => {
    const sizes: number[] = [];
    const client: BulkClient = {
      bulk: async (params) => {
        sizes.push(actionsOf(params).length);
        return allOk(params);
      },
    };
    const sink = new ElasticsearchBulkSink({ client, maxBatchBytes: 1000, lingerMs: 5 });
    const small = (i: number): IndexRequest => ({ index: 'i', id: `s${i}`, document: { t: 'x'.repeat(100) } });
    const writes = [
      ...Array.from({ length: 12 }, (_, i) => sink.write(small(i))),
      sink.write({ index: 'i', id: 'big', document: { t: 'x'.repeat(5000) } }),
    ];
    await Promise.all(writes);
    await sink.close();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(13);
    expect(sizes).toContain(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(7);
  });

  it('flushes a partial batch after lingerMs', async () => {
    const client: BulkClient = { bulk: async (params) => allOk(params) };
    const sink = new ElasticsearchBulkSink({ client, lingerMs: 80 });
    const started = performance.now();
    await sink.write({ index: 'i', id: 'one', document: {} });
    const elapsed = performance.now() - started;
    await sink.close();
    expect(elapsed).toBeGreaterThanOrEqual(70);
    expect(elapsed).toBeLessThan(1000);
  });

  it('refuses writes it cannot send safely, each alone', async () => {
    const client: BulkClient = { bulk: async (params) => allOk(params) };
    const sink = new ElasticsearchBulkSink({ client, lingerMs: 5 });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const results = await outcomes([
      sink.write({ index: 'i', id: '', document: {} }),
      sink.write({ index: '', id: 'a', document: {} }),
      sink.write({ index: 'i', id: 'b', document: circular }),
      sink.write({ index: 'i', id: 'c', document: { big: 1n } }),
      sink.write({ index: 'i', id: 'd', document: [] as unknown as Record<string, unknown> }),
      sink.write({ index: 'i', id: 'e', document: { fine: true } }),
    ]);
    await sink.close();
    expect(results.map((r) => (r === 'ok' ? r : r.code))).toEqual([
      'internal',
      'internal',
      'es_document_rejected',
      'es_document_rejected',
      'es_document_rejected',
      'ok',
    ]);
    await expect(sink.write({ index: 'i', id: 'late', document: {} })).rejects.toMatchObject({ code: 'internal' });
  });

  it('passes refresh through', async () => {
    const seen: unknown[] = [];
    const client: BulkClient = {
      bulk: async (params) => {
        seen.push(params.refresh);
        return allOk(params);
      },
    };
    const sink = new ElasticsearchBulkSink({ client, refresh: 'wait_for', lingerMs: 1 });
    await sink.write({ index: 'i', id: 'a', document: {} });
    await sink.close();
    expect(seen).toEqual(['wait_for']);
  });

  it('lists every invalid option at once', () => {
    const client: BulkClient = { bulk: async (params) => allOk(params) };
    const problems = (options: Partial<ConstructorParameters<typeof ElasticsearchBulkSink>[0]>): string[] => {
      try {
        new ElasticsearchBulkSink({ client, ...options });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      return [];
    };
    expect(problems({ maxBatchDocs: 0, lingerMs: -1, maxConcurrentRequests: 1.5 })).toHaveLength(3);
    expect(problems({ maxBatchDocs: 600, maxQueuedDocs: 100, retryBaseMs: 500, retryMaxMs: 100 })).toEqual([
      expect.stringMatching(/^maxBatchDocs: must not exceed maxQueuedDocs/),
      expect.stringMatching(/^retryBaseMs: must not exceed retryMaxMs/),
    ]);
    expect(problems({})).toEqual([]);
  });

  it('closes at once when idle', async () => {
    const client: BulkClient = { bulk: async (params) => allOk(params) };
    await new ElasticsearchBulkSink({ client }).close();
  });
});

describe('backoffDelay', () => {
  it('draws from [0, min(cap, base·2^(n−1)))', () => {
    expect(backoffDelay(1, 100, 10_000, () => 0)).toBe(0);
    expect(backoffDelay(1, 100, 10_000, () => 0.5)).toBe(50);
    expect(backoffDelay(4, 100, 10_000, () => 0.999)).toBe(799);
    expect(backoffDelay(8, 100, 10_000, () => 0.999)).toBe(9990);
    expect(backoffDelay(30, 100, 10_000, () => 0.999)).toBe(9990);
  });
});

/**
 * The product's own API server and dashboard over a real pipeline, for the dashboard's browser
 * tests: every stage in this process on the embedded transport and datastore, as `neon start`
 * runs them (no Kafka, no Elasticsearch), fed with the articles a test supplies. What the page shows
 * is what the pipeline made of them — entities, spikes, the digest, timelines, answers — so the page
 * and the API cannot drift apart.
 *
 *   const live = await startLiveDashboard();
 *   await live.ingest(inputs);          // through intake's normalisation, as a feed would
 *   await live.publishRecords(records); // straight onto news.articles, as any producer could
 *   await live.settle();                // every stage caught up
 *   const { page } = await openPage(browser, `${live.url}/`);
 *
 * Defaults: the hashing embedder (no model to load: what is measured here is the page, not
 * retrieval quality) and the offline extractor; `env` adds or overrides product settings (NEON_*).
 * The API is reached through a small recording proxy on its own port, so a test can see the
 * requests the page made and cut every connection, as a restart or a proxy timeout would, or keep
 * the event stream away for a while (`interruptStreams`). `withApiKeys` serves a second API over
 * the same pipeline that asks for a key, and `failSearches` makes the datastore's searches fail as
 * an unreachable datastore's would, so the API's own error answers can be seen.
 */
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import type { Article } from '../../schemas/records.generated.js';
import { startApiServer, type ApiServer } from '../../service/api-server.js';
import {
  DatastoreUnavailable,
  type LexicalRequest,
  type NearestRequest,
  type ScoredDocument,
} from '../../streams/datastore/datastore.js';
import type { FeedStatus } from '../../streams/stages/intake-sources.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';

export interface LiveDashboardOptions {
  /** API keys the service asks for; none: open (loopback only). */
  apiKeys?: string[];
  /** Product settings beyond the defaults (NEON_EMBEDDER=hashing and the offline extractor). */
  env?: Record<string, string>;
  /**
   * The feed `/v1/status` reports: this name, with the articles `ingest` published and refused as
   * its progress (as a sample replay reports its own). None: no feed in this process.
   */
  feedName?: string;
}

export interface ApiRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The Authorization header as sent, if any. */
  authorization: string | null;
  /** The Last-Event-ID header of a reconnecting event stream, if any. */
  lastEventId: string | null;
}

export interface IngestResult {
  published: Article[];
  /** Inputs intake refused, with its reason code (as a feed's dead letter would carry it). */
  refused: { input: ArticleInput; reason: string }[];
}

/** Where a browser reaches one API server of the live dashboard: through a recording proxy. */
export interface LiveEndpoint {
  /** The page and the API, e.g. http://127.0.0.1:43121 (no trailing slash). */
  readonly url: string;
  /** API calls that went through `url` (the dashboard's own files left out), oldest first. */
  readonly requests: ApiRequest[];
  /** Cuts every open connection through `url` (event streams included). */
  dropConnections(): void;
  /**
   * Cuts every open connection and, until the returned function is called, every new event-stream
   * connection as soon as it is recorded (a network failure, so the browser keeps retrying with
   * Last-Event-ID rather than giving up).
   */
  interruptStreams(): () => void;
}

export interface LiveDashboard extends LiveEndpoint {
  readonly runtime: ProductRuntime;
  /** Normalises each input as intake does (at `now`, default the current time) and publishes what it accepts. */
  ingest(inputs: readonly ArticleInput[], now?: number): Promise<IngestResult>;
  /** Publishes Article records onto `news.articles` as they are: the record codec still checks them. */
  publishRecords(articles: readonly Article[]): Promise<void>;
  /** Resolves once every running stage has nothing left on its inputs, twice in a row. */
  settle(timeoutMs?: number): Promise<void>;
  /**
   * Another API server over the same pipeline (spikes, entities, questions, status), which wants
   * one of `apiKeys`, behind its own recording proxy; closed with the rest.
   */
  withApiKeys(apiKeys: readonly string[]): Promise<LiveEndpoint>;
  /** While true, the datastore's searches (nearest and lexical) fail as an unreachable datastore's do. */
  failSearches(failing: boolean): void;
  close(): Promise<void>;
}

interface RecordingProxy extends LiveEndpoint {
  close(): Promise<void>;
}

const STREAM_PATH = '/v1/spikes/stream';

/** The embedded datastore, whose searches can be made to fail on demand (storage keeps working). */
class FailingSearchDatastore extends EmbeddedDatastore {
  searchesFail = false;

  override nearest(request: NearestRequest): Promise<ScoredDocument[]> {
    return this.searchesFail ? Promise.reject(this.outage()) : super.nearest(request);
  }

  override lexical(request: LexicalRequest): Promise<ScoredDocument[]> {
    return this.searchesFail ? Promise.reject(this.outage()) : super.lexical(request);
  }

  private outage(): DatastoreUnavailable {
    return new DatastoreUnavailable('searches are failing on purpose (test)');
  }
}

/** Forwards every request to `target` as it came (Host included, so the loopback check sees its own name). */
async function startRecordingProxy(target: URL): Promise<RecordingProxy> {
  const requests: ApiRequest[] = [];
  const sockets = new Set<Socket>();
  let streamsRefused = false;
  const forward = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    const [path = '', search = ''] = (incoming.url ?? '/').split('?', 2);
    if (path.startsWith('/v1/')) {
      const lastEventId = incoming.headers['last-event-id'];
      requests.push({
        method: incoming.method ?? 'GET',
        path,
        query: Object.fromEntries(new URLSearchParams(search)),
        authorization: incoming.headers.authorization ?? null,
        lastEventId: typeof lastEventId === 'string' ? lastEventId : null,
      });
    }
    if (streamsRefused && path === STREAM_PATH) {
      incoming.socket.destroy();
      return;
    }
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    outgoing.on('close', () => upstream.destroy());
    incoming.pipe(upstream);
  };
  const server = createServer(forward);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dropConnections = (): void => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    dropConnections,
    interruptStreams: () => {
      streamsRefused = true;
      dropConnections();
      return () => {
        streamsRefused = false;
      };
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startLiveDashboard(options: LiveDashboardOptions = {}): Promise<LiveDashboard> {
  const transport = createEmbeddedTransport();
  const publisher = new TransportArticlePublisher(transport.producer(), { processor: 'intake' });
  const datastore = new FailingSearchDatastore('neon');
  const feed = { published: 0, refused: 0, position: null as number | null };
  const feedName = options.feedName;
  const runtime = await startProductRuntime({
    mode: 'embedded',
    transport,
    datastore,
    config: loadProductConfig({
      NEON_EMBEDDER: 'hashing',
      ...(options.apiKeys ? { NEON_API_KEYS: options.apiKeys.join(',') } : {}),
      ...options.env,
    }),
    api: { port: 0 },
    metricsPort: null,
    ...(feedName === undefined
      ? {}
      : {
          feedStatus: (): FeedStatus => ({
            kind: 'sample',
            name: feedName,
            articles_total: null,
            articles_replayed: feed.published,
            articles_rejected: feed.refused,
            position: feed.position === null ? null : new Date(feed.position).toISOString(),
            done: false,
          }),
        }),
    say: () => undefined,
    log: () => undefined,
  });
  const proxies: RecordingProxy[] = [];
  const servers: ApiServer[] = [];
  let proxy: RecordingProxy;
  try {
    proxy = await startRecordingProxy(new URL(runtime.api!.url));
    proxies.push(proxy);
  } catch (error) {
    await runtime.stop(0);
    throw error;
  }

  const settle = async (timeoutMs = 60_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    let quietRounds = 0;
    for (;;) {
      const stages = await runtime.pipeline.progress();
      const behind = stages.filter((s) => s.running && (s.lag === null || s.lag > 0));
      quietRounds = behind.length === 0 ? quietRounds + 1 : 0;
      if (quietRounds >= 2) return;
      if (Date.now() > deadline) {
        throw new Error(`the pipeline did not catch up: ${behind.map((s) => `${s.stage} ${s.lag}`).join(', ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  const publish = async (article: Article): Promise<void> => {
    await publisher.publish(article);
    feed.published += 1;
    feed.position = Math.max(feed.position ?? article.published_at, article.published_at);
  };

  return {
    url: proxy.url,
    runtime,
    requests: proxy.requests,
    ingest: async (inputs, now = Date.now()) => {
      const result: IngestResult = { published: [], refused: [] };
      for (const input of inputs) {
        let article: Article;
        try {
          article = normalizeArticle(input, now);
        } catch (error) {
          if (!(error instanceof IntakeRejection)) throw error;
          result.refused.push({ input, reason: error.reason });
          feed.refused += 1;
          continue;
        }
        await publish(article);
        result.published.push(article);
      }
      return result;
    },
    publishRecords: async (articles) => {
      for (const article of articles) await publish(article);
    },
    settle,
    dropConnections: () => proxy.dropConnections(),
    interruptStreams: () => proxy.interruptStreams(),
    withApiKeys: async (apiKeys) => {
      // What startProductRuntime gives its own API server, with keys this time.
      const pipeline = runtime.pipeline;
      const server = await startApiServer({
        port: 0,
        apiKeys,
        spikes: pipeline.feed,
        retriever: pipeline.retriever,
        directory: pipeline.directory,
        status: () => runtime.status(),
        extraction: {
          configured: pipeline.extraction.configured,
          spiking: pipeline.feed.targets,
          mode: pipeline.extraction.mode,
        },
      });
      servers.push(server);
      const keyed = await startRecordingProxy(new URL(server.url));
      proxies.push(keyed);
      return keyed;
    },
    failSearches: (failing) => {
      datastore.searchesFail = failing;
    },
    close: async () => {
      for (const each of proxies) await each.close();
      for (const server of servers) await server.close();
      // Embedded, nothing outlives the process: in-flight work is given up, not drained.
      await runtime.stop(0);
    },
  };
}

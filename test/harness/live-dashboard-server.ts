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
 * requests the page made and cut every connection, as a restart or a proxy timeout would.
 */
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { loadProductConfig } from '../../bin/commands/product-config.js';
import { startProductRuntime, type ProductRuntime } from '../../bin/commands/product-runtime.js';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import { normalizeArticle } from '../../processors/intake/normalize-article.js';
import type { Article } from '../../schemas/records.generated.js';
import { TransportArticlePublisher } from '../../streams/stages/intake-publisher.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';

export interface LiveDashboardOptions {
  /** API keys the service asks for; none: open (loopback only). */
  apiKeys?: string[];
  /** Product settings beyond the defaults (NEON_EMBEDDER=hashing and the offline extractor). */
  env?: Record<string, string>;
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

export interface LiveDashboard {
  /** The page and the API, e.g. http://127.0.0.1:43121 (no trailing slash). */
  readonly url: string;
  readonly runtime: ProductRuntime;
  /** API calls that went through `url` (the dashboard's own files left out), oldest first. */
  readonly requests: ApiRequest[];
  /** Normalises each input as intake does (at `now`, default the current time) and publishes what it accepts. */
  ingest(inputs: readonly ArticleInput[], now?: number): Promise<IngestResult>;
  /** Publishes Article records onto `news.articles` as they are: the record codec still checks them. */
  publishRecords(articles: readonly Article[]): Promise<void>;
  /** Resolves once every running stage has nothing left on its inputs, twice in a row. */
  settle(timeoutMs?: number): Promise<void>;
  /** Cuts every open connection through `url` (event streams included). */
  dropConnections(): void;
  close(): Promise<void>;
}

interface RecordingProxy {
  url: string;
  requests: ApiRequest[];
  dropConnections(): void;
  close(): Promise<void>;
}

/** Forwards every request to `target` as it came (Host included, so the loopback check sees its own name). */
async function startRecordingProxy(target: URL): Promise<RecordingProxy> {
  const requests: ApiRequest[] = [];
  const sockets = new Set<Socket>();
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
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
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
  const runtime = await startProductRuntime({
    mode: 'embedded',
    transport,
    datastore: new EmbeddedDatastore('neon'),
    config: loadProductConfig({
      NEON_EMBEDDER: 'hashing',
      ...(options.apiKeys ? { NEON_API_KEYS: options.apiKeys.join(',') } : {}),
      ...options.env,
    }),
    api: { port: 0 },
    metricsPort: null,
    say: () => undefined,
    log: () => undefined,
  });
  let proxy: RecordingProxy;
  try {
    proxy = await startRecordingProxy(new URL(runtime.api!.url));
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
          continue;
        }
        await publisher.publish(article);
        result.published.push(article);
      }
      return result;
    },
    publishRecords: async (articles) => {
      for (const article of articles) await publisher.publish(article);
    },
    settle,
    dropConnections: () => proxy.dropConnections(),
    close: async () => {
      await proxy.close();
      // Embedded, nothing outlives the process: in-flight work is given up, not drained.
      await runtime.stop(0);
    },
  };
}

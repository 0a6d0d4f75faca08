import type { estypes } from '@elastic/elasticsearch';
import { z } from 'zod';
import { ConfigError } from '../../schemas/local-infra-config.js';
import { fullJitterDelay } from '../../processors/retry/backoff.js';
import { classifyBulkItem, classifyBulkResponseError, type BulkWriteOp } from './classify-bulk-item.js';
import type { Sink } from '../runtime/sink.js';
import { asStageError, StageError } from '../runtime/stage-error.js';

/**
 * Writes documents to Elasticsearch with `_bulk`. At-least-once; idempotent on `_id` (the caller
 * always supplies a deterministic id, so a replay or a retry overwrites instead of duplicating).
 *
 * `write` resolves only once Elasticsearch acknowledged that very document — never on an HTTP 200
 * alone, since every bulk item carries its own status (see classify-bulk-item.ts). Memory is
 * bounded: at most `maxQueuedDocs` documents are accepted and unsettled at any time (queued, in a
 * request, or waiting to be retried); `write` waits for room beyond that.
 *
 * Ordering: two writes of the same id are sent in order unless the first one is retried, in which
 * case the retry may land after the second. Callers that write different versions of one id
 * concurrently must wait for the first write before sending the next.
 */

export interface IndexRequest {
  index: string;
  /** Deterministic; never left to Elasticsearch, whose generated ids would duplicate on retry. */
  id: string;
  document: Record<string, unknown>;
  /** `index` (default) overwrites; `create` keeps the first version and treats a replay as done. */
  op?: BulkWriteOp;
}

/** The only call the sink makes; a real `Client` fits, and tests can wrap one. */
export interface BulkClient {
  bulk(params: estypes.BulkRequest<string>): Promise<estypes.BulkResponse>;
}

export interface BulkSinkHooks {
  /** Items scheduled for another attempt (not counting those given up on). */
  onRetry?(items: number): void;
  /** One bulk request answered (successfully or not). */
  onRequest?(docs: number, seconds: number): void;
}

const optionsSchema = z
  .object({
    maxBatchDocs: z.number().int().min(1).max(100_000).default(500),
    /** Estimated NDJSON bytes of a request; a single larger document is still sent, alone. */
    maxBatchBytes: z
      .number()
      .int()
      .min(1)
      .max(100 * 1024 * 1024)
      .default(5 * 1024 * 1024),
    lingerMs: z.number().int().min(0).max(60_000).default(50),
    maxConcurrentRequests: z.number().int().min(1).max(64).default(2),
    maxQueuedDocs: z.number().int().min(1).max(1_000_000).default(5000),
    maxRetries: z.number().int().min(0).max(100).default(8),
    retryBaseMs: z.number().min(0).default(100),
    retryMaxMs: z.number().min(0).default(10_000),
    refresh: z.union([z.boolean(), z.literal('wait_for')]).default(false),
    /**
     * Targets must be existing aliases (the monthly-index setup): a typo then fails as
     * index_not_found (fatal) instead of auto-creating a stray concrete index.
     */
    requireAlias: z.boolean().default(false),
    stage: z.string().min(1).default('index'),
  })
  .superRefine((o, ctx) => {
    if (o.maxBatchDocs > o.maxQueuedDocs)
      ctx.addIssue({
        code: 'custom',
        path: ['maxBatchDocs'],
        message: `must not exceed maxQueuedDocs (${o.maxQueuedDocs}), or a full batch could never form`,
      });
    if (o.retryBaseMs > o.retryMaxMs)
      ctx.addIssue({ code: 'custom', path: ['retryBaseMs'], message: `must not exceed retryMaxMs (${o.retryMaxMs})` });
  });

export type BulkSinkSettings = z.infer<typeof optionsSchema>;

export type ElasticsearchBulkSinkOptions = Partial<z.input<typeof optionsSchema>> & {
  client: BulkClient;
  metrics?: BulkSinkHooks;
  /** Injected in tests so backoff does not cost wall time. */
  sleep?: (ms: number) => Promise<void>;
  /** Injected in tests to make the jitter predictable; must return a number in [0, 1). */
  random?: () => number;
};

/** Full jitter, in whole milliseconds: spreads retries of many writers evenly over the window. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.floor(fullJitterDelay(attempt, { baseMs, capMs: maxMs }, random));
}

const MESSAGE_LIMIT = 500;

function truncate(text: string): string {
  return text.length <= MESSAGE_LIMIT ? text : `${text.slice(0, MESSAGE_LIMIT - 1)}…`;
}

function defaultSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Pending {
  readonly index: string;
  readonly id: string;
  readonly op: BulkWriteOp;
  /** Both NDJSON lines, serialized once at `write` so size is known and a bad document fails alone. */
  readonly action: string;
  readonly source: string;
  readonly bytes: number;
  retries: number;
  lastFailure: string;
  settled: boolean;
  resolve(): void;
  reject(error: StageError): void;
}

function describeItem(item: estypes.BulkResponseItem): string {
  const error = item.error;
  if (error === undefined) return `status ${item.status}`;
  const cause = error.caused_by ? ` (caused by ${error.caused_by.type}: ${error.caused_by.reason ?? ''})` : '';
  return `${item.status} ${error.type}: ${error.reason ?? ''}${cause}`;
}

function describeRequestError(error: unknown): string {
  if (error instanceof Error) {
    const status = (error as { meta?: { statusCode?: unknown } }).meta?.statusCode;
    const firstLine = error.message.split('\n', 1)[0] ?? '';
    return typeof status === 'number' ? `HTTP ${status} ${firstLine}` : `${error.name}: ${firstLine}`;
  }
  return String(error);
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { meta?: { statusCode?: unknown } } | undefined)?.meta?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

export class ElasticsearchBulkSink implements Sink<IndexRequest> {
  readonly name = 'elasticsearch';
  readonly settings: Readonly<BulkSinkSettings>;

  private readonly client: BulkClient;
  private readonly hooks: BulkSinkHooks;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  private readonly queue: Pending[] = [];
  private queuedBytes = 0;
  /** Accepted and not yet settled: queued, in a request, or waiting out a backoff. */
  private pending = 0;
  private waitingRetry = 0;
  private inFlight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private lingerTimer: NodeJS.Timeout | undefined;
  private lingerDue = false;
  private closing = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(options: ElasticsearchBulkSinkOptions) {
    const { client, metrics, sleep, random, ...rest } = options;
    const parsed = optionsSchema.safeParse(rest);
    if (!parsed.success)
      throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`));
    this.settings = parsed.data;
    this.client = client;
    this.hooks = metrics ?? {};
    this.sleep = sleep ?? defaultSleep;
    this.random = random ?? Math.random;
  }

  /** Writes accepted and not yet resolved or rejected; never above `maxQueuedDocs`. */
  get pendingCount(): number {
    return this.pending;
  }

  /** Writes waiting for room in the queue. */
  get blockedWriters(): number {
    return this.slotWaiters.length;
  }

  get inFlightRequests(): number {
    return this.inFlight;
  }

  /** Items between attempts, waiting out their backoff. */
  get retryingCount(): number {
    return this.waitingRetry;
  }

  async write(request: IndexRequest): Promise<void> {
    if (this.closing) throw new StageError('internal', 'write to a closed Elasticsearch sink', this.settings.stage);
    const prepared = this.prepare(request);
    const slot = this.acquireSlot();
    if (slot !== undefined) await slot;
    return new Promise<void>((resolve, reject) => {
      const item: Pending = { ...prepared, retries: 0, lastFailure: '', settled: false, resolve, reject };
      this.queue.push(item);
      this.queuedBytes += item.bytes;
      this.pump();
    });
  }

  /** Sends everything accepted so far, waits until each write is settled; the client stays open for its owner. */
  async close(): Promise<void> {
    this.closing = true;
    this.pump();
    if (!this.isIdle()) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    this.clearLinger();
  }

  private prepare(request: IndexRequest): Pick<Pending, 'index' | 'id' | 'op' | 'action' | 'source' | 'bytes'> {
    const stage = this.settings.stage;
    const op: unknown = request.op ?? 'index';
    // Missing ids or indices are bugs upstream; sending them would let ES invent an id and duplicate on retry.
    if (typeof request.id !== 'string' || request.id.length === 0)
      throw new StageError('internal', 'IndexRequest without an id', stage);
    if (typeof request.index !== 'string' || request.index.length === 0)
      throw new StageError('internal', `IndexRequest ${request.id} without an index`, stage);
    if (op !== 'index' && op !== 'create') throw new StageError('internal', `unsupported bulk op ${String(op)}`, stage);
    const document: unknown = request.document;
    if (typeof document !== 'object' || document === null || Array.isArray(document))
      throw new StageError('es_document_rejected', `document ${request.id} is not a JSON object`, stage);
    let source: string;
    try {
      source = JSON.stringify(document);
    } catch (error) {
      throw new StageError(
        'es_document_rejected',
        truncate(`document ${request.id} cannot be serialized to JSON: ${error instanceof Error ? error.message : ''}`),
        stage,
        { cause: error },
      );
    }
    const action = JSON.stringify({ [op]: { _index: request.index, _id: request.id } });
    const bytes = Buffer.byteLength(action) + Buffer.byteLength(source) + 2;
    return { index: request.index, id: request.id, op, action, source, bytes };
  }

  /** Returns undefined when a slot was taken at once; otherwise a promise resolved once one is handed over. */
  private acquireSlot(): Promise<void> | undefined {
    // Writers already waiting go first, so a steady stream of new writes cannot starve them.
    if (this.pending < this.settings.maxQueuedDocs && this.slotWaiters.length === 0) {
      this.pending += 1;
      return undefined;
    }
    return new Promise<void>((resolve) => this.slotWaiters.push(resolve));
  }

  private releaseSlot(): void {
    const next = this.slotWaiters.shift();
    // The slot passes straight to the next writer, so `pending` never dips and overshoots.
    if (next) next();
    else this.pending -= 1;
  }

  private settle(item: Pending, error?: StageError): void {
    if (item.settled) return;
    item.settled = true;
    if (error) item.reject(error);
    else item.resolve();
    this.releaseSlot();
    this.checkIdle();
  }

  private isIdle(): boolean {
    return this.pending === 0 && this.slotWaiters.length === 0 && this.inFlight === 0;
  }

  private checkIdle(): void {
    if (!this.closing || !this.isIdle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private batchReady(): boolean {
    if (this.queue.length === 0) return false;
    const { maxBatchDocs, maxBatchBytes } = this.settings;
    return this.closing || this.lingerDue || this.queue.length >= maxBatchDocs || this.queuedBytes >= maxBatchBytes;
  }

  private pump(): void {
    while (this.inFlight < this.settings.maxConcurrentRequests && this.batchReady()) {
      const batch = this.takeBatch();
      this.inFlight += 1;
      void this.send(batch)
        .catch((error: unknown) => {
          // Only a bug gets here (send handles every answer of Elasticsearch); fail loudly, not silently.
          const failure = asStageError(error, this.settings.stage);
          for (const item of batch) this.settle(item, failure);
        })
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
          this.checkIdle();
        });
    }
    if (this.queue.length === 0) {
      this.lingerDue = false;
      this.clearLinger();
    } else if (!this.lingerDue && this.lingerTimer === undefined) {
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = undefined;
        this.lingerDue = true;
        this.pump();
      }, this.settings.lingerMs);
    }
  }

  private clearLinger(): void {
    if (this.lingerTimer === undefined) return;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
  }

  private takeBatch(): Pending[] {
    const { maxBatchDocs, maxBatchBytes } = this.settings;
    let count = 0;
    let bytes = 0;
    for (const item of this.queue) {
      if (count === maxBatchDocs) break;
      // The first document always goes, even alone over the limit: Elasticsearch decides (413 → dead letter).
      if (count > 0 && bytes + item.bytes > maxBatchBytes) break;
      count += 1;
      bytes += item.bytes;
    }
    this.queuedBytes -= bytes;
    return this.queue.splice(0, count);
  }

  private async send(batch: Pending[]): Promise<void> {
    const stage = this.settings.stage;
    const operations = batch.flatMap((item) => [item.action, item.source]);
    const started = performance.now();
    let response: estypes.BulkResponse;
    try {
      response = await this.client.bulk({
        operations,
        refresh: this.settings.refresh,
        ...(this.settings.requireAlias ? { require_alias: true } : {}),
      });
    } catch (error) {
      this.report(() => this.hooks.onRequest?.(batch.length, (performance.now() - started) / 1000));
      const reason = describeRequestError(error);
      switch (classifyBulkResponseError(error, batch.length)) {
        case 'retry':
          for (const item of batch) item.lastFailure = reason;
          this.retryLater(batch);
          return;
        case 'split': {
          // Halves share this request slot, so splitting never raises concurrency.
          const half = Math.ceil(batch.length / 2);
          await this.send(batch.slice(0, half));
          await this.send(batch.slice(half));
          return;
        }
        case 'dead_letter':
          for (const item of batch)
            this.settle(
              item,
              new StageError(
                'es_document_rejected',
                truncate(`document ${item.id} in ${item.index} is too large for Elasticsearch (${reason})`),
                stage,
              ),
            );
          return;
        case 'fatal': {
          const status = statusOf(error);
          const failure =
            status === 401 || status === 403
              ? new StageError('es_unauthorized', truncate(`Elasticsearch refused the bulk request: ${reason}`), stage)
              : new StageError('internal', truncate(`bulk request failed for good: ${reason}`), stage, {
                  cause: error,
                });
          for (const item of batch) this.settle(item, failure);
          return;
        }
      }
    }
    this.report(() => this.hooks.onRequest?.(batch.length, (performance.now() - started) / 1000));

    const retry: Pending[] = [];
    for (const [i, item] of batch.entries()) {
      const entry = response.items[i];
      const result = entry?.[item.op];
      // An answer that cannot be tied to this document is not an acknowledgement of it; resending is safe.
      if (result === undefined || (result._id != null && result._id !== item.id)) {
        item.lastFailure = 'bulk response did not answer for this document';
        retry.push(item);
        continue;
      }
      switch (classifyBulkItem(result, item.op)) {
        case 'done':
          this.settle(item);
          break;
        case 'retry':
          item.lastFailure = describeItem(result);
          retry.push(item);
          break;
        case 'dead_letter':
          this.settle(
            item,
            new StageError(
              'es_document_rejected',
              truncate(`Elasticsearch rejected document ${item.id} in ${item.index}: ${describeItem(result)}`),
              stage,
            ),
          );
          break;
        case 'fatal': {
          const known = result.status === 401 || result.status === 403 || result.status === 404;
          this.settle(
            item,
            new StageError(
              known ? 'es_unauthorized' : 'internal',
              truncate(`Elasticsearch cannot take document ${item.id} in ${item.index}: ${describeItem(result)}`),
              stage,
            ),
          );
          break;
        }
      }
    }
    if (retry.length > 0) this.retryLater(retry);
  }

  /** Only the items given here go back; one timer per distinct attempt number, not one per item. */
  private retryLater(items: Pending[]): void {
    const { maxRetries, retryBaseMs, retryMaxMs, stage } = this.settings;
    const byAttempt = new Map<number, Pending[]>();
    let scheduled = 0;
    for (const item of items) {
      if (item.settled) continue;
      item.retries += 1;
      if (item.retries > maxRetries) {
        this.settle(
          item,
          new StageError(
            'es_unavailable',
            truncate(
              `gave up on document ${item.id} in ${item.index} after ${maxRetries} retries; last failure: ${item.lastFailure}`,
            ),
            stage,
          ),
        );
        continue;
      }
      const group = byAttempt.get(item.retries);
      if (group) group.push(item);
      else byAttempt.set(item.retries, [item]);
      scheduled += 1;
    }
    if (scheduled === 0) return;
    this.report(() => this.hooks.onRetry?.(scheduled));
    for (const [attempt, group] of byAttempt) {
      this.waitingRetry += group.length;
      const back = (): void => {
        this.waitingRetry -= group.length;
      };
      void this.sleep(backoffDelay(attempt, retryBaseMs, retryMaxMs, this.random)).then(
        () => {
          back();
          const ready = group.filter((item) => !item.settled);
          // Retried items are older than anything queued since, so they go first and without lingering.
          this.queue.unshift(...ready);
          for (const item of ready) this.queuedBytes += item.bytes;
          this.lingerDue = ready.length > 0 || this.lingerDue;
          this.pump();
        },
        (error: unknown) => {
          back();
          const failure = asStageError(error, stage);
          for (const item of group) this.settle(item, failure);
        },
      );
    }
  }

  /** Metrics must never fail a write. */
  private report(call: () => void): void {
    try {
      call();
    } catch {
      // ignored on purpose
    }
  }
}

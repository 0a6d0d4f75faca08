import { UsageError } from '../../infra/cli-errors.js';
import type { ArticlePublisher } from '../../processors/intake/article-input.js';
import { redactUrl } from '../../schemas/connection-config.js';
import type { Article } from '../../schemas/records.generated.js';
import type { NormalizeOptions } from '../../processors/intake/normalize-article.js';
import { callService, type ServiceTarget } from './service-client.js';

interface EndpointAnswer {
  accepted: { id: string; url: string }[];
  rejected: { index: number; reason: string; message: string }[];
}

/**
 * Sends articles to a running neon-stream's `POST /v1/articles` in batches, for `neon ingest` and
 * `neon replay` when a service runs (the embedded mode has no broker to write to). An article counts
 * as published once the service answered that it accepted it; the service dead-letters what it
 * refuses. What the source's reader declared of its items (a summary's text floor, an archive's
 * earliest date) goes with each request, so the service reads them as this replay would. Inputs
 * refused here are sent as they came when they are JSON, so the service dead-letters them with its
 * own reason; others are only counted.
 */
export class ServiceArticlePublisher implements ArticlePublisher {
  /**
   * `refusedByService`: articles the service refused although they passed here; `deadLettered`:
   * inputs refused here that the service dead-lettered (those that are not JSON cannot be sent).
   */
  readonly counters = { published: 0, refusedByService: 0, refusedHere: 0, deadLettered: 0 };
  private batch: { item: unknown; refused: boolean; settle: (error?: Error) => void }[] = [];
  private flushing: Promise<void> = Promise.resolve();

  private readonly route: string;

  constructor(
    private readonly target: ServiceTarget,
    private readonly batchSize = 200,
    declared: Pick<Partial<NormalizeOptions>, 'minTextChars' | 'earliestPublishTime'> = {},
  ) {
    const query = new URLSearchParams();
    if (declared.minTextChars !== undefined) query.set('min_text_chars', String(declared.minTextChars));
    if (declared.earliestPublishTime !== undefined) {
      query.set('earliest', new Date(declared.earliestPublishTime).toISOString().slice(0, 10));
    }
    this.route = query.size === 0 ? '/v1/articles' : `/v1/articles?${query.toString()}`;
    // A setting the user has not given, not a bug: a usage error naming it, without a stack.
    if (!target.intakeToken) {
      throw new UsageError(
        `no intake token for ${redactUrl(target.url)}: set NEON_INTAKE_TOKEN (one of the service's NEON_INTAKE_TOKENS)`,
      );
    }
  }

  publish(article: Article): Promise<void> {
    return this.enqueue(false, {
      id: article.id,
      url: article.url,
      title: article.title,
      text: article.text,
      published_at: new Date(article.published_at).toISOString(),
      source: article.source,
      language: article.language,
    });
  }

  async reject(original: Buffer): Promise<void> {
    this.counters.refusedHere += 1;
    let item: unknown;
    try {
      item = JSON.parse(original.toString('utf8'));
    } catch {
      return;
    }
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) await this.enqueue(true, item);
  }

  private enqueue(refused: boolean, item: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      this.batch.push({ item, refused, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (this.batch.length >= this.batchSize) void this.flush();
      else setImmediate(() => void this.flush());
    });
  }

  /** Sends what is queued, one request at a time (so the order of a replay is kept). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.batch.splice(0, this.batchSize);
      if (batch.length === 0) return;
      try {
        const answer = await callService<EndpointAnswer>(this.target, this.route, {
          method: 'POST',
          body: { articles: batch.map((b) => b.item) },
          token: this.target.intakeToken!,
          timeoutMs: 120_000,
        });
        this.counters.published += answer.accepted.length;
        for (const { index } of answer.rejected) {
          if (batch[index]?.refused) this.counters.deadLettered += 1;
          else this.counters.refusedByService += 1;
        }
        for (const b of batch) b.settle();
      } catch (error) {
        const failure = error instanceof Error ? error : new Error(String(error));
        for (const b of batch) b.settle(failure);
      }
      if (this.batch.length > 0) await this.flush();
    });
    return this.flushing;
  }
}

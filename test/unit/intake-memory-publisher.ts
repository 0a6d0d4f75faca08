import type { ArticlePublisher, IntakeRejection } from '../../processors/intake/article-input.js';
import type { Article } from '../../schemas/records.generated.js';

export interface DeadLetter {
  original: Buffer;
  rejection: IntakeRejection;
  origin: string;
}

/** Keeps what intake delivered; `failNext` makes the next publish or reject throw, like a broker outage. */
export class MemoryPublisher implements ArticlePublisher {
  readonly published: Article[] = [];
  readonly rejected: DeadLetter[] = [];
  private failures = 0;
  /** Called before each publish resolves (e.g. to look at a clock). */
  onPublish: ((article: Article) => void) | undefined;

  failNext(times = 1): void {
    this.failures += times;
  }

  async publish(article: Article): Promise<void> {
    this.maybeFail();
    this.onPublish?.(article);
    this.published.push(article);
  }

  async reject(original: Buffer, rejection: IntakeRejection, origin: string): Promise<void> {
    this.maybeFail();
    this.rejected.push({ original, rejection, origin });
  }

  reasons(): string[] {
    return this.rejected.map((r) => r.rejection.reason);
  }

  private maybeFail(): void {
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('publisher unavailable');
    }
  }
}

import type { ArticlePublisher, IntakeRejection } from '../../processors/intake/article-input.js';
import type { Article } from '../../schemas/records.generated.js';
import { DEAD_LETTER_TOPIC, DLQ_HEADERS } from '../runtime/dead-letter-writer.js';
import { topicRecord } from '../runtime/record-codec.js';
import { TOPICS } from '../pipeline/topics.js';
import type { TransportProducer } from '../runtime/transport.js';
import type { Counter, Registry } from 'prom-client';
import { counterOf, METRIC_FAMILIES } from '../telemetry/metrics.js';

/** Header naming where a refused intake input came from (feed URL, `http`, a file and line). */
export const DLQ_ORIGIN_HEADER = 'dlq.origin';

export interface IntakeCounters {
  published: number;
  rejected: Partial<Record<IntakeRejection['reason'], number>>;
}

/**
 * Intake's way into the pipeline: accepted articles go to `news.articles` keyed by id (a replayed
 * or re-polled article overwrites downstream instead of duplicating), refused inputs go to the
 * dead-letter topic with their original bytes and the reason code. Both resolve only once the
 * broker acknowledged the write, so a source marks an item done only when it is safe.
 */
export class TransportArticlePublisher implements ArticlePublisher {
  readonly counters: IntakeCounters = { published: 0, rejected: {} };

  private readonly metrics:
    { published: Counter<'stage' | 'sink'>; deadLetters: Counter<'stage' | 'code'> } | undefined;

  constructor(
    private readonly producer: TransportProducer,
    private readonly options: {
      articlesTopic?: string;
      deadLetterTopic?: string;
      processor?: string;
      /** Counts published articles and refusals in the stages' metric families (stage `intake`). */
      registry?: Registry;
    } = {},
  ) {
    const registry = options.registry;
    this.metrics = registry && {
      published: counterOf(registry, METRIC_FAMILIES.stageSent),
      deadLetters: counterOf(registry, METRIC_FAMILIES.deadLetters),
    };
  }

  async publish(article: Article): Promise<void> {
    const topic = this.options.articlesTopic ?? TOPICS.articles;
    const record = topicRecord(topic, 'Article', article.id, article);
    await this.producer.send(topic, [record]);
    this.counters.published += 1;
    this.metrics?.published.inc({ stage: 'intake', sink: 'articles' });
  }

  async reject(original: Buffer, rejection: IntakeRejection, origin: string): Promise<void> {
    const headers: Record<string, string> = {
      [DLQ_HEADERS.stage]: 'intake',
      [DLQ_HEADERS.processor]: this.options.processor ?? 'intake',
      [DLQ_HEADERS.errorCode]: rejection.reason,
      [DLQ_HEADERS.errorMessage]: rejection.message.slice(0, 1000),
      [DLQ_HEADERS.timestamp]: new Date().toISOString(),
      [DLQ_ORIGIN_HEADER]: origin.slice(0, 2000),
    };
    await this.producer.send(this.options.deadLetterTopic ?? DEAD_LETTER_TOPIC, [
      { key: null, value: original, headers },
    ]);
    this.counters.rejected[rejection.reason] = (this.counters.rejected[rejection.reason] ?? 0) + 1;
    // Reasons come from the closed INTAKE_REJECTION_REASONS list: a bounded label.
    this.metrics?.deadLetters.inc({ stage: 'intake', code: rejection.reason });
  }
}

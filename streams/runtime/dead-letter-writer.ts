import type { StageError } from './stage-error.js';
import type { RawRecord, TransportProducer } from './transport.js';
import { TOPICS } from '../pipeline/topics.js';

export const DEAD_LETTER_TOPIC = TOPICS.deadLetters;

/** Kafka-Connect-style headers carried by every dead letter, next to the original headers. */
export const DLQ_HEADERS = {
  topic: 'dlq.topic',
  partition: 'dlq.partition',
  offset: 'dlq.offset',
  stage: 'dlq.stage',
  processor: 'dlq.processor',
  errorCode: 'dlq.error.code',
  errorMessage: 'dlq.error.message',
  timestamp: 'dlq.timestamp',
  /** Which derived output failed, when one input's output (not the input itself) was refused. */
  outputId: 'dlq.output.id',
} as const;

const MAX_MESSAGE_LENGTH = 1000;

/**
 * Writes permanent failures to `neon.dlq` with the original key, bytes and headers. The write is
 * awaited and a failure propagates: the caller must then not acknowledge the input, so its offset is
 * never committed and nothing is lost.
 */
export class DeadLetterWriter {
  constructor(
    private readonly producer: TransportProducer,
    private readonly processor: string,
    private readonly topic = DEAD_LETTER_TOPIC,
  ) {}

  async write(record: RawRecord, error: StageError, outputId?: string): Promise<void> {
    const headers: Record<string, string | Buffer> = {};
    for (const [name, value] of Object.entries(record.headers)) {
      const first = Array.isArray(value) ? value[0] : value;
      if (first !== undefined && !name.startsWith('dlq.')) headers[name] = first;
    }
    headers[DLQ_HEADERS.topic] = record.topic;
    headers[DLQ_HEADERS.partition] = String(record.partition);
    headers[DLQ_HEADERS.offset] = record.offset;
    headers[DLQ_HEADERS.stage] = error.stage;
    headers[DLQ_HEADERS.processor] = this.processor;
    headers[DLQ_HEADERS.errorCode] = error.code;
    headers[DLQ_HEADERS.errorMessage] = error.message.slice(0, MAX_MESSAGE_LENGTH);
    headers[DLQ_HEADERS.timestamp] = new Date().toISOString();
    if (outputId !== undefined) headers[DLQ_HEADERS.outputId] = outputId;
    await this.producer.send(this.topic, [{ key: record.key, value: record.value, headers }]);
  }
}

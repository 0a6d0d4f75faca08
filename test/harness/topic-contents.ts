import { decodeRecord } from '../../schemas/avro-codec.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';
import { readTopicOnce } from '../../streams/runtime/topic-tail.js';
import { headerText, type Transport } from '../../streams/runtime/transport.js';

export interface TopicEntry<T> {
  key: string | null;
  value: T;
  partition: number;
  offset: string;
}

/** Every record a topic holds right now, decoded, in partition order then offset order. */
export async function readTopicRecords<N extends RecordName>(
  transport: Transport,
  topic: string,
  name: N,
): Promise<TopicEntry<RecordTypes[N]>[]> {
  const entries: TopicEntry<RecordTypes[N]>[] = [];
  await readTopicOnce(
    transport,
    topic,
    (record) => {
      entries.push({
        key: record.key?.toString() ?? null,
        value: decodeRecord(name, record.value, record.headers),
        partition: record.partition,
        offset: record.offset,
      });
    },
    { purpose: 'test-read' },
  );
  return entries.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
}

/** Raw records (dead letters) with their headers as text. */
export async function readRawTopic(
  transport: Transport,
  topic: string,
): Promise<{ key: string | null; value: Buffer | null; headers: Record<string, string> }[]> {
  const entries: { key: string | null; value: Buffer | null; headers: Record<string, string> }[] = [];
  await readTopicOnce(
    transport,
    topic,
    (record) =>
      entries.push({ key: record.key?.toString() ?? null, value: record.value, headers: headerText(record.headers) }),
    { purpose: 'test-read' },
  );
  return entries;
}

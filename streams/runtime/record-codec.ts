/**
 * The stages' view of the Avro codec: decoding that fails with a StageError (so poison is
 * dead-lettered with the codec's own code) and encoding straight into a topic record.
 */
import { decodeRecord, encodeRecord, RecordCodecError } from '../../schemas/avro-codec.js';
import type { RecordName, RecordTypes } from '../../schemas/records.generated.js';
import type { TopicRecord } from '../kafka/kafka-sink.js';
import { StageError } from './stage-error.js';
import type { RawRecord } from './transport.js';

export function stageDecoder<N extends RecordName>(name: N): (record: RawRecord) => RecordTypes[N] {
  return (record) => {
    try {
      return decodeRecord(name, record.value, record.headers);
    } catch (error) {
      if (error instanceof RecordCodecError) throw new StageError(error.code, error.message, 'decode');
      throw error;
    }
  };
}

/** An Avro record for `topic`, keyed by `key`, with its writer schema in the header. */
export function topicRecord<N extends RecordName>(
  topic: string,
  name: N,
  key: string,
  value: RecordTypes[N],
): TopicRecord {
  const encoded = encodeRecord(name, value);
  return { topic, key, value: encoded.value, headers: encoded.headers };
}

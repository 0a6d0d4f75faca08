/**
 * What a failed produce call means for the records in it. kafkajs raises the broker's error code as
 * a KafkaJSProtocolError with its `type` and a `retriable` flag (sometimes wrapped once more, the
 * original in `cause`); connection errors and timeouts are retriable KafkaJSErrors.
 *
 * - `too_large`: the broker will never take the batch as sent (MESSAGE_TOO_LARGE,
 *   RECORD_LIST_TOO_LARGE). Sent alone, a record that still fails is refused for good.
 * - `refused`: not retriable and not the record's own fault (authorisation, an unknown topic, a
 *   misconfiguration): an operator must act; retrying is all a stage can do meanwhile.
 * - `transient`: an outage, a leader election, a timeout — or anything unknown: worth retrying.
 */
export type ProducerErrorClass = 'too_large' | 'refused' | 'transient';

const TOO_LARGE_TYPES: ReadonlySet<string> = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);
/** Kafka's codes for the same, for errors that carry a code but no type name. */
const TOO_LARGE_CODES: ReadonlySet<number> = new Set([10, 18]);

interface KafkaErrorShape {
  name?: unknown;
  type?: unknown;
  code?: unknown;
  retriable?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and what it wraps: `cause` chains and the members of an aggregate. */
function* errorChain(error: unknown, depth = 0): Generator<KafkaErrorShape> {
  if (typeof error !== 'object' || error === null || depth > 8) return;
  const shape = error as KafkaErrorShape;
  yield shape;
  if (shape.cause !== undefined) yield* errorChain(shape.cause, depth + 1);
  if (Array.isArray(shape.errors)) for (const inner of shape.errors) yield* errorChain(inner, depth + 1);
}

export function classifyProducerError(error: unknown): ProducerErrorClass {
  const chain = [...errorChain(error)];
  const isProtocol = (e: KafkaErrorShape): boolean => e.name === 'KafkaJSProtocolError';
  if (
    chain.some(
      (e) =>
        (typeof e.type === 'string' && TOO_LARGE_TYPES.has(e.type)) ||
        (isProtocol(e) && typeof e.code === 'number' && TOO_LARGE_CODES.has(e.code)),
    )
  ) {
    return 'too_large';
  }
  const top = chain[0];
  if (top === undefined) return 'transient';
  // A protocol error the broker says will not pass on retry, and nothing in the chain that would.
  if (chain.some((e) => isProtocol(e) && e.retriable === false) && !chain.some((e) => e.retriable === true)) {
    return 'refused';
  }
  return 'transient';
}

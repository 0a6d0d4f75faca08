import type { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import type { TopicRecord } from '../kafka/kafka-sink.js';
import { topicRecord } from '../runtime/record-codec.js';
import type { Sink } from '../runtime/sink.js';

/** What one mention asks to write: its alerts, and the entities whose state to save. */
export interface SpikeWrite {
  alerts: TopicRecord[];
  entityIds: string[];
  forgotten: string[];
}

/** Where the writer sends records: `write` resolves once the record is acknowledged. */
export interface RecordSink {
  write(record: TopicRecord): Promise<void>;
  close(): Promise<void>;
}

export interface SpikeWriter extends Sink<SpikeWrite> {
  /**
   * Alerts the detector has just decided, before their write is asked for: from now until each is
   * acknowledged, its entity's state is not saved (see below).
   */
  decided(alerts: readonly TopicRecord[]): void;
}

/** One alert as written: its topic, key and bytes (the same alert retried is the same record). */
const alertKey = (record: TopicRecord): string =>
  `${record.topic}\u0000${String(record.key)}\u0000${record.value === null ? '' : Buffer.from(record.value).toString('base64')}`;

/**
 * Alerts go out as decided. State goes out as it is **when written**, not as it was when decided:
 * snapshots of one entity can then never overwrite a newer one, whatever order retries finish in.
 * Snapshots are gathered for `lingerMs` and each changed entity is encoded and sent once per round,
 * however many mentions changed it: a busy entity costs one write per round, not one per mention.
 *
 * An entity's snapshot is held back while any alert decided for it is unacknowledged. The alerts
 * and the state go through different producers, and a snapshot counts every mention decided so far:
 * saved ahead of an alert that a crash then loses, it makes the restarted stage take the
 * redelivered mentions as counted (they are recognised by chunk). The detector judges those as they
 * stood at their own event time (it knows the articles' times for the two days a bucket may still
 * change), so it decides the lost alert again; held back, a saved snapshot only ever counts
 * mentions whose alerts entity.spikes already holds, and the restart does not depend on those two
 * days. The alert alone, without its snapshot, is the safe order (the detector learns what was sent
 * from entity.spikes and recounts the redelivered mentions). Alerts are rare next to mentions, so a
 * hold lasts one alert's round trip.
 */
export function spikeWriter(
  detector: Pick<SpikeDetector, 'snapshot'>,
  topics: { spikeState: string },
  alerts: RecordSink,
  state: RecordSink,
  lingerMs = 20,
  maxHoldMs = 60_000,
): SpikeWriter {
  let round = new Map<string, { resolve: () => void; reject: (e: unknown) => void }[]>();
  let timer: NodeJS.Timeout | undefined;
  const inFlight = new Set<Promise<void>>();
  /** Per entity, the alerts decided and not yet acknowledged, with when each was decided. */
  const unacknowledged = new Map<string, Map<string, number>>();
  /**
   * Whether the entity's snapshot waits. A hold ends after \`maxHoldMs\` even without the ack: an
   * alert the runtime dead-letters is never acknowledged, and its entity must not wedge for good.
   */
  const held = (id: string): boolean => {
    const pending = unacknowledged.get(id);
    if (pending === undefined || pending.size === 0) return false;
    return Math.min(...pending.values()) > Date.now() - maxHoldMs;
  };
  const alertWrites = new Set<Promise<void>>();

  const schedule = (): void => {
    timer ??= setTimeout(() => flush(), lingerMs);
  };
  /** `closing`: the last round; a snapshot still held is not written (its mentions are redelivered). */
  const flush = (closing = false): void => {
    timer = undefined;
    const due = round;
    round = new Map();
    for (const [id, waiters] of due) {
      if (held(id)) {
        if (closing) {
          const error = new Error(`spike state of ${id} not saved: an alert decided for it was never acknowledged`);
          waiters.forEach((w) => w.reject(error));
        } else {
          // Its alert first: try again next round.
          round.set(id, [...(round.get(id) ?? []), ...waiters]);
        }
        continue;
      }
      const snapshot = detector.snapshot(id);
      const record: TopicRecord = snapshot
        ? topicRecord(topics.spikeState, 'EntitySpikeState', id, snapshot)
        : // Forgotten since: the tombstone says so.
          { topic: topics.spikeState, key: id, value: null };
      const sending = state.write(record).then(
        () => waiters.forEach((w) => w.resolve()),
        (error: unknown) => waiters.forEach((w) => w.reject(error)),
      );
      inFlight.add(sending);
      void sending.finally(() => inFlight.delete(sending));
    }
    if (round.size > 0 && !closing) schedule();
  };
  const saved = (id: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const waiters = round.get(id) ?? [];
      waiters.push({ resolve, reject });
      round.set(id, waiters);
      schedule();
    });
  const sendAlert = (record: TopicRecord): Promise<void> => {
    const sending = alerts.write(record).then(() => {
      const pending = unacknowledged.get(String(record.key));
      pending?.delete(alertKey(record));
      if (pending?.size === 0) unacknowledged.delete(String(record.key));
    });
    alertWrites.add(sending);
    void sending.then(
      () => alertWrites.delete(sending),
      () => alertWrites.delete(sending),
    );
    return sending;
  };
  return {
    name: 'kafka',
    decided: (records) => {
      for (const record of records) {
        const id = String(record.key);
        const pending = unacknowledged.get(id) ?? new Map<string, number>();
        if (!pending.has(alertKey(record))) pending.set(alertKey(record), Date.now());
        unacknowledged.set(id, pending);
      }
    },
    write: async (item) => {
      await Promise.all([...item.alerts.map(sendAlert), ...[...item.entityIds, ...item.forgotten].map(saved)]);
    },
    close: async () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      // Alerts in flight settle first, so the snapshots held for them can go out after them.
      await Promise.allSettled([...alertWrites]);
      flush(true);
      await Promise.allSettled([...inFlight]);
      await Promise.all([alerts.close(), state.close()]);
    },
  };
}

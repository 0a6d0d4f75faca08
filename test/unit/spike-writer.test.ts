import { afterEach, describe, expect, it, vi } from 'vitest';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import { NEON_DAY_RULE } from '../../processors/spikes/spike-rule.js';
import type { TopicRecord } from '../../streams/kafka/kafka-sink.js';
import { spikeWriter, type RecordSink } from '../../streams/stages/spike-writer.js';
import { mentionOf, TEST_NOW } from './spike-fixtures.js';

/**
 * The spike stage's writer saves an entity's state only once every alert decided for it is
 * acknowledged: a snapshot saved ahead of an alert that a crash loses makes the restarted stage
 * take the redelivered mentions as counted and never send that alert (fault test S1 saw episodes
 * start a day late; test/unit/spike-changelog-ahead.test.ts shows the detector's side).
 */

/** A sink whose writes wait until the test acknowledges (or fails) them; it records what it holds. */
function manualSink() {
  const pending: { record: TopicRecord; ack: () => void; fail: (e: Error) => void }[] = [];
  const acknowledged: TopicRecord[] = [];
  const sink: RecordSink = {
    write: (record) =>
      new Promise<void>((resolve, reject) => {
        pending.push({
          record,
          ack: () => {
            acknowledged.push(record);
            resolve();
          },
          fail: reject,
        });
      }),
    close: () => Promise.resolve(),
  };
  return { sink, pending, acknowledged };
}

function detectorWith(entity: string): SpikeDetector {
  const detector = new SpikeDetector({ day: NEON_DAY_RULE, hour: null, now: () => TEST_NOW });
  detector.offer(mentionOf(entity, 0), 0);
  return detector;
}

const alert = (entity: string, n = 1): TopicRecord => ({
  topic: 'entity.spikes',
  key: entity,
  value: Buffer.from(`alert ${n}`),
});
const topics = { spikeState: 'entity.spike-state' };

afterEach(() => {
  vi.useRealTimers();
});

describe('the spike writer', () => {
  it("holds an entity's snapshot until its alert is acknowledged, then saves it", async () => {
    const alerts = manualSink();
    const state = manualSink();
    const writer = spikeWriter(detectorWith('e-lu'), topics, alerts.sink, state.sink, 5);
    writer.decided([alert('e-lu')]);
    let done = false;
    const writing = writer.write({ alerts: [alert('e-lu')], entityIds: ['e-lu'], forgotten: [] }).then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(state.pending).toHaveLength(0); // ten rounds went by: still held
    alerts.pending[0]!.ack();
    await vi.waitFor(() => expect(state.pending).toHaveLength(1));
    expect(state.pending[0]!.record).toMatchObject({ topic: 'entity.spike-state', key: 'e-lu' });
    expect(done).toBe(false);
    state.pending[0]!.ack();
    await writing;
    expect(alerts.acknowledged).toHaveLength(1);
  });

  it('saves the snapshots of entities without pending alerts in the same round', async () => {
    const alerts = manualSink();
    const state = manualSink();
    const detector = detectorWith('e-lu');
    detector.offer(mentionOf('e-mo', 0), 0);
    const writer = spikeWriter(detector, topics, alerts.sink, state.sink, 5);
    writer.decided([alert('e-lu')]);
    void writer.write({ alerts: [alert('e-lu')], entityIds: ['e-lu'], forgotten: [] });
    void writer.write({ alerts: [], entityIds: ['e-mo'], forgotten: [] });
    await vi.waitFor(() => expect(state.pending.map((p) => p.record.key)).toEqual(['e-mo']));
  });

  it('a held snapshot is not saved at close when its alert failed, and its write is refused', async () => {
    const alerts = manualSink();
    const state = manualSink();
    const writer = spikeWriter(detectorWith('e-lu'), topics, alerts.sink, state.sink, 5);
    writer.decided([alert('e-lu')]);
    const writing = writer.write({ alerts: [alert('e-lu')], entityIds: ['e-lu'], forgotten: [] });
    writing.catch(() => undefined);
    await vi.waitFor(() => expect(alerts.pending).toHaveLength(1));
    alerts.pending[0]!.fail(new Error('broker away'));
    await writer.close();
    expect(state.pending).toHaveLength(0);
    await expect(writing).rejects.toThrow();
  });

  it('ends a hold after maxHoldMs, so an alert that is never acknowledged cannot wedge its entity', async () => {
    vi.useFakeTimers({ now: TEST_NOW });
    const alerts = manualSink();
    const state = manualSink();
    const writer = spikeWriter(detectorWith('e-lu'), topics, alerts.sink, state.sink, 5, 1_000);
    writer.decided([alert('e-lu')]);
    void writer.write({ alerts: [], entityIds: ['e-lu'], forgotten: [] });
    await vi.advanceTimersByTimeAsync(900);
    expect(state.pending).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(state.pending).toHaveLength(1);
  });
});

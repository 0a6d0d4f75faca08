import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SpikeDetector, type DetectorOutput } from '../../processors/spikes/detect-spikes.js';
import { DAY_MS, HOUR_MS, NEON_DAY_RULE, NEON_HOUR_RULE } from '../../processors/spikes/spike-rule.js';
import type { EntitySpikeState, Mention, SpikeAlert } from '../../schemas/records.generated.js';
import { DAY0, mentionOf, mentionsOn, TEST_NOW } from './spike-fixtures.js';

const now = (): number => TEST_NOW;
/** These tests pin the detector's mechanics (episodes, lateness, restarts) with NEON's rule; the count model has its own tests. */
const NEON = { day: NEON_DAY_RULE, hour: NEON_HOUR_RULE };
const dayOnly = (): SpikeDetector => new SpikeDetector({ ...NEON, hour: null, now });

/** Background: one mention a day of `entity` for `days` days, plus a clock-moving filler entity. */
function steady(entity: string, days: number, perDay = 1): Mention[] {
  return Array.from({ length: days }, (_, d) => mentionsOn(entity, d, perDay)).flat();
}

function run(detector: SpikeDetector, mentions: Mention[], partition = 0): DetectorOutput[] {
  return mentions.map((m) => detector.offer(m, partition));
}

const alertsOf = (outputs: DetectorOutput[]): SpikeAlert[] => outputs.flatMap((o) => o.alerts);
const summary = (alerts: SpikeAlert[]) =>
  alerts.map(
    (a) => `${a.entity_id} ${a.granularity} ${a.state} ${new Date(a.window_end - 1).toISOString().slice(0, 10)}`,
  );

describe('SpikeDetector (day rule)', () => {
  it('starts an episode at the mention that crosses the threshold, updates it per closed day and ends it', () => {
    const detector = dayOnly();
    const history = steady('e-ada', 7); // 1 a day: rolling sums of 3 ± 0 → threshold 4
    expect(alertsOf(run(detector, history))).toEqual([]);

    const burst = mentionsOn('e-ada', 7, 4); // day 7: the window becomes 1 + 1 + 4 = 6 > 4
    const outputs = run(detector, burst);
    // The second mention makes the window 1 + 1 + 2 = 4 (not above), the third 5: STARTED there.
    expect(outputs.map((o) => o.alerts.length)).toEqual([0, 0, 1, 0]);
    const started = outputs[2]!.alerts[0]!;
    expect(started).toMatchObject({
      id: 'spike:e-ada:day:2025-01-13',
      entity_id: 'e-ada',
      granularity: 'DAY',
      state: 'STARTED',
      window_start: DAY0 + 5 * DAY_MS,
      window_end: DAY0 + 8 * DAY_MS,
      observed: 5,
      baseline_mean: 3,
      baseline_std: 0,
      threshold: 4,
      score: 2,
      baseline_buckets: 5,
      episode_start: DAY0 + 7 * DAY_MS,
      detected_at: TEST_NOW,
    });
    expect(started.rule).toBe('3-day rolling sum > mean + 1 std of the previous 28 (at least 3)');
    expect(started.counts.at(-1)).toEqual({ bucket_start: DAY0 + 7 * DAY_MS, count: 3 });

    // Quiet days: event time moves on with another entity on the same partition.
    const later = [8, 9, 10, 11].map((d) => mentionOf('e-filler', d, { hour: 6 }));
    const after = alertsOf(run(detector, later)).filter((a) => a.entity_id === 'e-ada');
    // Day 7 closes (after its day of lateness) once day 9 is reached: still above → ONGOING with its
    // final count; day 8's window (1 + 5 + 0) is still above the risen threshold; day 9's is not.
    expect(summary(after)).toEqual([
      'e-ada DAY ONGOING 2025-01-13',
      'e-ada DAY ONGOING 2025-01-14',
      'e-ada DAY ENDED 2025-01-15',
    ]);
    expect(after.every((a) => a.id === started.id)).toBe(true);
    expect(after[0]).toMatchObject({ observed: 6, threshold: 4 });
    expect(after.filter((a) => a.state === 'STARTED')).toEqual([]);
  });

  it('sends one STARTED per episode however many mentions follow, and a new id for a new episode', () => {
    const detector = dayOnly();
    run(detector, steady('e-bo', 10));
    const first = alertsOf(run(detector, mentionsOn('e-bo', 10, 12)));
    expect(first.map((a) => a.state)).toEqual(['STARTED']);
    // Long quiet, then another burst.
    run(
      detector,
      [14, 18, 22, 26, 30, 31, 32].map((d) => mentionOf('e-filler', d, { hour: 1 })),
    );
    run(detector, steady('e-bo', 40).slice(33));
    const second = alertsOf(run(detector, mentionsOn('e-bo', 40, 12)));
    const starts = second.filter((a) => a.state === 'STARTED');
    expect(starts).toHaveLength(1);
    expect(starts[0]!.id).toBe('spike:e-bo:day:2025-02-15');
    expect(starts[0]!.id).not.toBe(first[0]!.id);
  });

  it('counts a chunk once per entity, however often its mention is redelivered', () => {
    const detector = dayOnly();
    const once = mentionOf('e-cy', 0);
    expect(detector.offer(once, 0).outcome).toBe('counted');
    expect(detector.offer({ ...once }, 0).outcome).toBe('duplicate');
    expect(detector.offer({ ...once, entity_id: 'e-dee', name: 'dee' }, 0).outcome).toBe('counted');
    expect(detector.snapshot('e-cy')!.days).toEqual([{ bucket_start: DAY0, count: 1 }]);
  });

  it('counts late mentions within the allowed lateness and refuses older ones', () => {
    const detector = dayOnly();
    detector.offer(mentionOf('e-ed', 3, { hour: 20 }), 0);
    // Day 2 closes at day 3 + 1 day of lateness = day 4 00:00: still open at day 3 20:00.
    expect(detector.offer(mentionOf('e-ed', 2, { hour: 1 }), 0).outcome).toBe('counted');
    // Day 1 closed at day 3 00:00.
    expect(detector.offer(mentionOf('e-ed', 1, { hour: 23 }), 0).outcome).toBe('late');
    // Event time is per partition: partition 1 has not moved.
    expect(detector.offer(mentionOf('e-fa', 1, { hour: 23 }), 1).outcome).toBe('counted');
    expect(detector.snapshot('e-ed')!.days.map((b) => b.count)).toEqual([1, 1]);
  });

  it('refuses a mention stamped in the future', () => {
    const detector = new SpikeDetector({ ...NEON, now: () => DAY0 });
    const output = detector.offer(mentionOf('e-gil', 5), 0);
    expect(output).toEqual({ outcome: 'future', alerts: [], changed: [], forgotten: [] });
  });

  it('lists the articles of the window, newest first, with their URLs', () => {
    const detector = new SpikeDetector({ ...NEON, hour: null, now, maxAlertArticles: 3 });
    run(detector, steady('e-hal', 7));
    const burst = [0, 1, 2, 3].map((i) => mentionOf('e-hal', 7, { hour: 9 + i, article: `burst-${i}` }));
    const alert = alertsOf(run(detector, burst))[0]!;
    expect(alert.article_ids).toEqual(['burst-2', 'burst-1', 'burst-0']);
    expect(alert.urls).toEqual(alert.article_ids.map((id) => `https://news.example/${id}`));
  });

  it('puts the first interactions extracted for the entity into its later alert states', () => {
    const detector = dayOnly();
    run(detector, steady('e-ida', 7));
    const started = alertsOf(run(detector, mentionsOn('e-ida', 7, 4)));
    expect(started[0]!.first_interactions).toEqual([]);
    const t = DAY0 + 7 * DAY_MS + 9 * HOUR_MS;
    detector.noteInteraction('e-ida', { id: 'int-2', t: t + 1, text: 'Ida meets Bo' });
    detector.noteInteraction('e-ida', { id: 'int-1', t, text: 'Ida wins vote' });
    detector.noteInteraction('e-ida', { id: 'int-1', t, text: 'Ida wins vote' });
    detector.noteInteraction('e-unknown', { id: 'int-3', t, text: 'ignored' });
    const updates = alertsOf(run(detector, [mentionOf('e-filler', 9, { hour: 1 })]));
    expect(updates[0]!.first_interactions).toEqual([
      { id: 'int-1', t, text: 'Ida wins vote' },
      { id: 'int-2', t: t + 1, text: 'Ida meets Bo' },
    ]);
  });

  it('forgets an entity that went quiet for good, with a tombstone', () => {
    const detector = new SpikeDetector({ ...NEON, hour: null, now, forgetAfterMs: 10 * DAY_MS });
    detector.offer(mentionOf('e-ivy', 0), 0);
    const outputs = run(
      detector,
      Array.from({ length: 45 }, (_, d) => mentionOf('e-filler', d + 1)),
    );
    expect(outputs.flatMap((o) => o.forgotten)).toEqual(['e-ivy']);
    expect(detector.snapshot('e-ivy')).toBeUndefined();
    expect(detector.snapshot('e-filler')).toBeDefined();
  });
});

describe('SpikeDetector (hour rule)', () => {
  it('alerts within the hour and leaves day-only times out of the hourly counts', () => {
    const detector = new SpikeDetector({ ...NEON, now });
    // A week of one mention every six hours: hourly windows of 0 or 1.
    const background = Array.from({ length: 7 * 4 }, (_, i) =>
      mentionOf('e-jo', Math.floor(i / 4), { hour: (i % 4) * 6 + 1 }),
    );
    expect(alertsOf(run(detector, background))).toEqual([]);
    const burst = Array.from({ length: 8 }, (_, i) => mentionOf('e-jo', 7, { hour: 9, minute: i * 5 }));
    const alerts = alertsOf(run(detector, burst));
    const hourly = alerts.filter((a) => a.granularity === 'HOUR');
    expect(hourly).toHaveLength(1);
    expect(hourly[0]).toMatchObject({
      id: 'spike:e-jo:hour:2025-01-13T09',
      state: 'STARTED',
      window_start: DAY0 + 7 * DAY_MS + 7 * HOUR_MS,
      window_end: DAY0 + 7 * DAY_MS + 10 * HOUR_MS,
    });

    const dated = new SpikeDetector({ ...NEON, now });
    for (const m of Array.from({ length: 10 }, (_, i) => mentionOf('e-kit', 0, { hour: null, article: `d${i}` }))) {
      dated.offer(m, 0);
    }
    expect(dated.snapshot('e-kit')).toMatchObject({ days: [{ bucket_start: DAY0, count: 10 }], hours: [] });
  });
});

describe('SpikeDetector state', () => {
  /** Everything each output asked to write to the changelog, last snapshot per entity. */
  function changelog(outputs: DetectorOutput[], into = new Map<string, EntitySpikeState | null>()) {
    for (const output of outputs) {
      for (const snapshot of output.changed) into.set(snapshot.entity_id, snapshot);
      for (const id of output.forgotten) into.set(id, null);
    }
    return into;
  }

  function restored(log: Map<string, EntitySpikeState | null>, sent: SpikeAlert[] = []): SpikeDetector {
    const detector = dayOnly();
    for (const snapshot of log.values()) if (snapshot) detector.restore(snapshot);
    for (const alert of sent) detector.noteSentAlert(alert);
    return detector;
  }

  const stream = (): Mention[] => [
    ...steady('e-lu', 9),
    ...steady('e-mo', 9, 2),
    ...mentionsOn('e-lu', 9, 6),
    ...[10, 11, 12, 13].flatMap((d) => mentionsOn('e-mo', d, d === 11 ? 9 : 2)),
    ...[14, 15, 16].map((d) => mentionOf('e-filler', d)),
  ];

  it('forgets an entity only after its own alerts are read back, so a late echo cannot reopen an ended episode', () => {
    // e-lu spikes, ends, goes quiet past forgetAfter while the clock moves on, then is mentioned again.
    const mentions = [
      ...steady('e-lu', 9),
      ...mentionsOn('e-lu', 9, 6),
      ...Array.from({ length: 40 }, (_, d) => mentionOf('e-clock', 10 + d)),
      ...mentionsOn('e-lu', 47, 1),
      ...[50, 51, 52].map((d) => mentionOf('e-clock', d)),
    ].sort((a, b) => a.t - b.t);
    const reference = summary(alertsOf(run(dayOnly(), mentions)));
    expect(reference).toContain('e-lu DAY ENDED 2025-01-18');

    // The stage reads its alerts back from entity.spikes, some mentions behind: any lag gives the same alerts.
    for (let lag = 0; lag <= mentions.length; lag++) {
      const detector = new SpikeDetector({ ...NEON, hour: null, now, alertsEchoed: true });
      const inFlight: SpikeAlert[][] = [];
      const sent: SpikeAlert[] = [];
      for (const mention of mentions) {
        const { alerts } = detector.offer(mention, 0);
        sent.push(...alerts);
        inFlight.push(alerts);
        if (inFlight.length > lag) inFlight.shift()!.forEach((a) => detector.noteSentAlert(a));
      }
      expect(summary(sent), `echoes ${lag} mentions behind`).toEqual(reference);
    }
  });

  it('continues from its changelog exactly as if it had never stopped, wherever it stops', () => {
    const mentions = stream().sort((a, b) => a.t - b.t);
    const uninterrupted = summary(alertsOf(run(dayOnly(), mentions)));
    expect(uninterrupted.filter((s) => s.includes('STARTED'))).toEqual([
      'e-lu DAY STARTED 2025-01-15',
      'e-mo DAY STARTED 2025-01-17',
      // Three mentions in three days after none: the filler spikes too, by the rule.
      'e-filler DAY STARTED 2025-01-22',
    ]);
    expect(uninterrupted.filter((s) => s.includes('ENDED'))).toEqual([
      'e-lu DAY ENDED 2025-01-18',
      'e-mo DAY ENDED 2025-01-20',
    ]);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: mentions.length }), (cut) => {
        const first = dayOnly();
        const before = run(first, mentions.slice(0, cut));
        const second = restored(changelog(before), alertsOf(before));
        const after = run(second, mentions.slice(cut));
        expect(summary([...alertsOf(before), ...alertsOf(after)])).toEqual(uninterrupted);
      }),
      { numRuns: 40 },
    );
  });

  it('does not repeat a STARTED that was sent when the snapshot beside it was lost', () => {
    const mentions = stream().sort((a, b) => a.t - b.t);
    const detector = dayOnly();
    const outputs = run(detector, mentions);
    const startedAt = outputs.findIndex((o) => o.alerts.some((a) => a.state === 'STARTED'));
    // The process died after the alert reached entity.spikes, before its snapshot did: the
    // changelog is one step behind, and the input is redelivered.
    const log = changelog(outputs.slice(0, startedAt));
    const sent = outputs[startedAt]!.alerts;
    const again = restored(log, sent).offer(mentions[startedAt]!, 0);
    expect(again.alerts).toEqual([]);
    // Without what entity.spikes says, the redelivery would send it again (same id: idempotent).
    const blind = restored(log).offer(mentions[startedAt]!, 0);
    expect(blind.alerts.map((a) => a.id)).toEqual(sent.map((a) => a.id));
  });

  it('ignores its own older snapshots echoing back while it owns the partition', () => {
    const detector = dayOnly();
    detector.setOwnedPartitions([0]);
    const first = detector.offer(mentionOf('e-ned', 0), 0).changed[0]!;
    detector.offer(mentionOf('e-ned', 0, { hour: 13 }), 0);
    detector.restore(first);
    expect(detector.snapshot('e-ned')!.days).toEqual([{ bucket_start: DAY0, count: 2 }]);
    // Another replica's partition: its snapshots are the truth here.
    detector.setOwnedPartitions([1]);
    detector.restore(first);
    expect(detector.snapshot('e-ned')!.days).toEqual([{ bucket_start: DAY0, count: 1 }]);
  });

  it('keeps state bounded: old buckets, chunks and articles are pruned', () => {
    const detector = dayOnly();
    run(detector, steady('e-oz', 120, 3));
    const snapshot = detector.snapshot('e-oz')!;
    expect(snapshot.days.length).toBeLessThanOrEqual(NEON_DAY_RULE.baselineBuckets + NEON_DAY_RULE.rollingBuckets + 1);
    expect(snapshot.recent_chunks.length).toBeLessThanOrEqual(3 * 3);
    expect(snapshot.recent_articles.length).toBeLessThanOrEqual(3 * 6);
  });
});

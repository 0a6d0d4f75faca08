import { describe, expect, it } from 'vitest';
import { SpikeDetector } from '../../processors/spikes/detect-spikes.js';
import {
  logNegativeBinomialTail,
  NewcomerTail,
  ownOverdispersion,
  surpriseOf,
  type SurpriseParameters,
} from '../../processors/spikes/count-model.js';
import { DAY_MS, DEFAULT_DAY_RULE } from '../../processors/spikes/spike-rule.js';
import type { Mention, SpikeAlert } from '../../schemas/records.generated.js';
import { DAY0, mentionOf, TEST_NOW } from './spike-fixtures.js';

/** P(Y ≥ y) of a negative binomial by summing its probabilities: the reference for the beta route. */
function tailBySum(y: number, mean: number, shape: number): number {
  const p = shape / (shape + mean);
  let pmf = Math.pow(p, shape);
  let below = 0;
  for (let k = 0; k < y; k++) {
    below += pmf;
    pmf *= ((k + shape) / (k + 1)) * (1 - p);
  }
  return 1 - below;
}

describe('count model arithmetic', () => {
  it('gives the negative binomial tail of a direct sum, and far tails a direct sum cannot reach', () => {
    for (const [y, mean, shape] of [
      [3, 0.5, 1],
      [15, 5, 10],
      [15, 5, 1000],
      [2, 0.1, 0.5],
      [40, 3, 4],
    ] as const) {
      expect(Math.exp(logNegativeBinomialTail(y, mean, shape))).toBeCloseTo(tailBySum(y, mean, shape), 9);
    }
    // 1 − (sum of the body) is 0 in doubles here; the log route still ranks it.
    expect(logNegativeBinomialTail(100, 10, 50) / Math.LN10).toBeLessThan(-30);
  });

  it('learns how new names start in the feed, with a default tail beyond what it saw', () => {
    const few = new NewcomerTail();
    expect(few.survival(3)).toBeCloseTo(1 / 9, 6);
    const seen = new NewcomerTail([
      ...Array.from({ length: 900 }, () => ({ count: 1, volume: 50 })),
      ...Array.from({ length: 100 }, () => ({ count: 3, volume: 50 })),
    ]);
    // A tenth of the new names reached 3: a new name with 3 is ordinary in this feed.
    expect(seen.survival(3)).toBeCloseTo((100 + 10 / 9) / 1010, 6);
    expect(seen.survival(20)).toBeLessThan(1e-3);
    expect(seen.meanVolume).toBe(50);
  });

  it('ranks a known entity whose coverage triples above a new name that appears three times', () => {
    // A feed where a tenth of new names reach three articles on their first day (lists of companies).
    const newcomers = new NewcomerTail([
      ...Array.from({ length: 900 }, () => ({ count: 1, volume: 500 })),
      ...Array.from({ length: 100 }, () => ({ count: 3, volume: 500 })),
    ]);
    const parameters: SurpriseParameters = { overdispersion: 0.2, historyHalfWeight: 5 };
    const day = { exposure: 500, historyExposure: 28 * 500, bucketVolume: 500, windowBuckets: 1 };
    const known = surpriseOf({ ...day, observed: 12, historyCount: 4 * 28 }, newcomers, parameters);
    const fresh = surpriseOf({ ...day, observed: 3, historyCount: 0 }, newcomers, parameters);
    expect(known.expected).toBeCloseTo(4, 0);
    expect(known.significance).toBeGreaterThan(fresh.significance + 0.5);
    expect(fresh.significance).toBeLessThan(1.1);
    // A new name with many articles at once is news all the same.
    expect(surpriseOf({ ...day, observed: 25, historyCount: 0 }, newcomers, parameters).significance).toBeGreaterThan(
      known.significance,
    );
  });

  it('reads counts against the volume: a day when the whole feed doubles is no spike for a steady entity', () => {
    const newcomers = new NewcomerTail();
    const parameters: SurpriseParameters = { overdispersion: 0.2, historyHalfWeight: 5 };
    const history = { historyCount: 5 * 28, historyExposure: 28 * 200, bucketVolume: 200, windowBuckets: 1 };
    const doubled = surpriseOf({ ...history, observed: 10, exposure: 400 }, newcomers, parameters);
    const sameVolume = surpriseOf({ ...history, observed: 10, exposure: 200 }, newcomers, parameters);
    expect(doubled.expected).toBeCloseTo(10, 0);
    expect(doubled.significance).toBeLessThan(0.5);
    expect(sameVolume.significance).toBeGreaterThan(doubled.significance + 0.5);
  });
});

describe("an entity's own overdispersion", () => {
  const windows = (observed: readonly number[], expected: number) => observed.map((o) => ({ observed: o, expected }));
  const repeat = (n: number, at: (i: number) => number): number[] => Array.from({ length: n }, (_, i) => at(i));

  it('is near Poisson for steady coverage, large for erratic coverage, and the prior for a name seen now and then', () => {
    // Deviations of ±√μ: exactly the spread of a Poisson count.
    const steady = windows(
      repeat(28, (i) => 30 + (i % 2 === 0 ? 1 : -1) * Math.sqrt(30)),
      30,
    );
    expect(ownOverdispersion(steady, 0.2, 25)).toBeLessThan(0.01);
    // Σ[(y − μ)² − μ] / Σμ² = (400 − 30) / 900 ≈ 0.41, a little towards the prior.
    const erratic = ownOverdispersion(
      windows(
        repeat(28, (i) => (i % 2 === 0 ? 10 : 50)),
        30,
      ),
      0.2,
      25,
    );
    expect(erratic).toBeCloseTo(370 / 900, 1);
    expect(erratic).toBeLessThan(370 / 900);
    // Mostly empty windows say next to nothing about φ, however the few mentions fell.
    for (const observed of [repeat(28, (i) => (i === 5 ? 1 : 0)), repeat(28, (i) => (i === 5 ? 3 : 0))]) {
      expect(ownOverdispersion(windows(observed, 0.1), 0.2, 25)).toBeCloseTo(0.2, 1);
    }
    // Never below zero, however regular the history.
    expect(
      ownOverdispersion(
        windows(
          repeat(28, () => 30),
          30,
        ),
        0.2,
        25,
      ),
    ).toBe(0);
  });

  it('counts overlapping windows as less evidence, so they lean more on the prior', () => {
    // 0 and 6 around a mean of 3: φ̂ = Σ[(y − μ)² − μ] / Σμ² = 36 / 54, well above the prior.
    const erratic = windows(
      repeat(6, (i) => (i % 2 === 0 ? 0 : 6)),
      3,
    );
    // The evidence, (Σμ²)² / Σ(μ + 2μ²) = 54² / 126; a third of it when windows overlap threefold.
    const evidence = (54 * 54) / 126;
    const apart = ownOverdispersion(erratic, 0.2, 1, 1);
    const overlapping = ownOverdispersion(erratic, 0.2, 1, 3);
    expect(apart).toBeCloseTo((evidence * (36 / 54) + 0.2) / (evidence + 1), 6);
    expect(overlapping).toBeCloseTo(((evidence / 3) * (36 / 54) + 0.2) / (evidence / 3 + 1), 6);
    expect(overlapping).toBeLessThan(apart);
    expect(overlapping).toBeGreaterThan(0.2);
  });
});

/** A feed of `names` background entities, each in `perDay` articles a day (articles of their own). */
function background(days: number[], names: number, perDay: number): Mention[] {
  return days.flatMap((day) =>
    Array.from({ length: names }, (_, n) =>
      Array.from({ length: perDay }, (__, i) => mentionOf(`e-bg-${n}`, day, { hour: 6 + (i % 12) })),
    ).flat(),
  );
}

function run(detector: SpikeDetector, mentions: Mention[]): SpikeAlert[] {
  return mentions.sort((a, b) => a.t - b.t).flatMap((m) => detector.offer(m, 0).alerts);
}

describe('SpikeDetector with the count model (the default)', () => {
  const days = Array.from({ length: 30 }, (_, d) => d);

  it('alerts on a known entity whose coverage triples, not on new names with three mentions', () => {
    const detector = new SpikeDetector({ hour: null, now: () => TEST_NOW });
    const feed = [
      ...background(days, 20, 2),
      // New names every day, most once, a tenth three times (a list of companies, say).
      ...days.flatMap((d) =>
        Array.from({ length: 20 }, (_, n) =>
          Array.from({ length: n < 2 ? 3 : 1 }, () => mentionOf(`e-new-${d}-${n}`, d, { hour: 9 })),
        ).flat(),
      ),
      ...days.slice(0, 29).flatMap((d) => Array.from({ length: 4 }, () => mentionOf('e-known', d, { hour: 10 }))),
      ...Array.from({ length: 12 }, () => mentionOf('e-known', 29, { hour: 10 })),
      // Event time moves on: day 29 closes, and its final counts are judged.
      mentionOf('e-clock', 31, { hour: 1 }),
    ];
    const alerts = run(detector, feed);
    const started = (id: string): SpikeAlert[] => alerts.filter((a) => a.entity_id === id && a.state === 'STARTED');
    const known = started('e-known');
    expect(known).toHaveLength(1);
    expect(known[0]).toMatchObject({ method: 'surprise', window_start: DAY0 + 29 * DAY_MS });
    const peakKnown = Math.max(
      ...alerts.filter((a) => a.entity_id === 'e-known' && a.state !== 'ENDED').map((a) => a.significance),
    );
    const newNames = alerts.filter((a) => a.entity_id.startsWith('e-new-29-'));
    for (const a of newNames) expect(a.significance).toBeLessThan(peakKnown);
    // Counts, expectation and evidence travel with the alert.
    expect(known[0]!.articles).toBeGreaterThanOrEqual(DEFAULT_DAY_RULE.minArticles);
    expect(known[0]!.baseline_mean).toBeGreaterThan(2);
    expect(known[0]!.threshold).toBeLessThanOrEqual(known[0]!.observed);
  });

  /** Seeded Poisson counts (Knuth): an entity's coverage with no news in it. */
  function poissonCounts(mean: number, n: number, seed: number): number[] {
    let state = seed;
    const random = (): number => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
    return Array.from({ length: n }, () => {
      const limit = Math.exp(-mean);
      let k = 0;
      for (let p = random(); p > limit; p *= random()) k += 1;
      return k;
    });
  }

  /** The alerts of `entity` with these daily articles, over a background of 100 entities at 3 a day. */
  function alertsWith(entity: string, daily: readonly number[], rule = DEFAULT_DAY_RULE): SpikeAlert[] {
    const detector = new SpikeDetector({ day: rule, hour: null, now: () => TEST_NOW });
    const feed = [
      ...background(
        daily.map((_, d) => d),
        100,
        3,
      ),
      ...daily.flatMap((n, d) =>
        Array.from({ length: n }, (_, i) => mentionOf(entity, d, { hour: 7, minute: i % 60 })),
      ),
      mentionOf('e-clock', daily.length + 2, { hour: 1 }),
    ];
    return run(detector, feed).filter((a) => a.entity_id === entity);
  }

  /** The highest significance of the entity's alerts about day `day`. */
  const peakOn = (alerts: SpikeAlert[], day: number): number =>
    Math.max(
      0,
      ...alerts
        .filter((a) => a.state !== 'ENDED' && a.window_end === DAY0 + (day + 1) * DAY_MS)
        .map((a) => a.significance),
    );

  it("reads a small feed's surplus of volume as chance, a large feed's as a busy day", () => {
    // An entity at 1 article a day, then 4, on a day when the rest of the feed is up by half.
    const peakWith = (names: number, rule = DEFAULT_DAY_RULE): number => {
      const usual = days.slice(0, 29);
      const feed = [
        ...background(usual, names, 2),
        ...background([29], Math.round(names * 1.5), 2),
        ...usual.map((d) => mentionOf('e-x', d, { hour: 7 })),
        ...Array.from({ length: 4 }, (_, i) => mentionOf('e-x', 29, { hour: 7, minute: i })),
        mentionOf('e-clock', 31, { hour: 1 }),
      ];
      const detector = new SpikeDetector({ day: rule, hour: null, now: () => TEST_NOW });
      return peakOn(
        run(detector, feed).filter((a) => a.entity_id === 'e-x'),
        29,
      );
    };
    const asCounted = { ...DEFAULT_DAY_RULE, volumePrior: 0 };
    // Ten articles of others a day going to fifteen says little about the news of the day.
    expect(peakWith(5)).toBeGreaterThan(peakWith(5, asCounted) + 0.1);
    // A thousand going to fifteen hundred is a busy day, read as one with the prior or without.
    expect(Math.abs(peakWith(500) - peakWith(500, asCounted))).toBeLessThan(0.02);
    expect(peakWith(500)).toBeLessThan(peakWith(5));
  });

  it('judges a big entity covered every day by its own spread: a +50% day is plainly news, its usual rate never', () => {
    // About 30 articles a day with Poisson noise, then 45.
    const busy = [...poissonCounts(30, 29, 11), 45];
    const own = peakOn(alertsWith('e-big', busy), 29);
    expect(own).toBeGreaterThan(1.5);
    // With one φ for everyone (0.2), the same day is barely past the bar: as if it were noise.
    const fixed = peakOn(alertsWith('e-big', busy, { ...DEFAULT_DAY_RULE, overdispersionPriorWeight: null }), 29);
    expect(fixed).toBeLessThan(1);
    expect(own).toBeGreaterThan(fixed + 0.8);
    // Exactly its usual 4 or 30 articles every day: never an episode.
    for (const perDay of [4, 30]) {
      const steady = alertsWith(
        'e-steady',
        Array.from({ length: 40 }, () => perDay),
      );
      expect(
        steady.filter((a) => a.state === 'STARTED'),
        `${perDay} a day`,
      ).toEqual([]);
    }
  });

  it('holds an entity whose coverage has always come in bursts to more than +50%', () => {
    // The same mean of 30 a day, but three days at 10 and three at 50: its own φ is large by the
    // day and by three days alike.
    const erratic = Array.from({ length: 27 }, (_, d) => (Math.floor(d / 3) % 2 === 0 ? 10 : 50));
    const alerts = alertsWith('e-erratic', [...erratic, 30, 30, 45]);
    expect(peakOn(alerts, 29)).toBeLessThan(DEFAULT_DAY_RULE.minSignificance);
  });

  it('updates an open episode while its bucket fills, each time its significance passes a whole number', () => {
    const detector = new SpikeDetector({ hour: null, now: () => TEST_NOW });
    const alerts = run(detector, [
      ...background(days.slice(0, 12), 10, 2),
      ...Array.from({ length: 40 }, (_, i) => mentionOf('e-x', 12, { hour: 8, minute: i })),
    ]);
    const states = alerts.filter((a) => a.entity_id === 'e-x');
    expect(states[0]!.state).toBe('STARTED');
    expect(states.length).toBeGreaterThan(2);
    expect(states.slice(1).every((a) => a.state === 'ONGOING' && a.window_end === states[0]!.window_end)).toBe(true);
    for (let i = 1; i < states.length; i++) {
      expect(Math.floor(states[i]!.significance)).toBeGreaterThan(Math.floor(states[i - 1]!.significance));
      expect(states[i]!.observed).toBeGreaterThan(states[i - 1]!.observed);
    }
    // Updated as it passes 2 (the desk's push bar), not a whole step after its last state: one
    // article more moves this story's significance by about 0.1 there.
    const pushable = states.find((a) => a.significance >= 2)!;
    expect(pushable.significance).toBeLessThan(2.2);
    // The bucket's final judgement still comes once it closes.
    const closing = run(detector, [mentionOf('e-bg-0', 14)]).filter((a) => a.entity_id === 'e-x');
    expect(closing[0]).toMatchObject({ state: 'ONGOING', window_end: states[0]!.window_end, observed: 40 });
  });

  it('goes on updating a filling bucket when its alerts are read back, and after a restart mid-bucket', () => {
    const burst = (): Mention[] => Array.from({ length: 40 }, (_, i) => mentionOf('e-x', 12, { hour: 8, minute: i }));
    const feed = [...background(days.slice(0, 12), 10, 2), ...burst()].sort((a, b) => a.t - b.t);
    const states = (alerts: SpikeAlert[]): string[] =>
      alerts.filter((a) => a.entity_id === 'e-x').map((a) => `${a.state} ${a.observed} ${a.significance.toFixed(6)}`);
    const quiet = run(new SpikeDetector({ hour: null, now: () => TEST_NOW }), [...feed]);
    expect(states(quiet).length).toBeGreaterThan(2);

    // As the stage runs: every alert comes back from entity.spikes before the next mention.
    const echoing = (detector: SpikeDetector, mentions: readonly Mention[]): SpikeAlert[] =>
      mentions.flatMap((m) => {
        const alerts = detector.offer(m, 0).alerts;
        for (const alert of alerts) detector.noteSentAlert(alert);
        return alerts;
      });
    const echoed = echoing(new SpikeDetector({ hour: null, now: () => TEST_NOW, alertsEchoed: true }), feed);
    expect(states(echoed)).toEqual(states(quiet));

    // Killed after the burst's 20th mention: restored from its snapshots and its alerts, it goes on.
    const cut = feed.length - 20;
    const first = new SpikeDetector({ hour: null, now: () => TEST_NOW, alertsEchoed: true });
    const before = echoing(first, feed.slice(0, cut));
    const restored = new SpikeDetector({ hour: null, now: () => TEST_NOW, alertsEchoed: true });
    for (const id of ['e-x', ...Array.from({ length: 10 }, (_, n) => `e-bg-${n}`)])
      restored.restore(first.snapshot(id)!);
    for (const alert of before) restored.noteSentAlert(alert);
    expect(states([...before, ...echoing(restored, feed.slice(cut))])).toEqual(states(quiet));
  });

  it('sends a bucket’s final judgement once, even when an earlier growth update is read back after it', () => {
    const detector = new SpikeDetector({ hour: null, now: () => TEST_NOW, alertsEchoed: true });
    const feed = [
      ...background(days.slice(0, 12), 10, 2),
      ...Array.from({ length: 40 }, (_, i) => mentionOf('e-x', 12, { hour: 8, minute: i })),
    ].sort((a, b) => a.t - b.t);
    const growth = run(detector, feed).filter((a) => a.entity_id === 'e-x');
    expect(growth.length).toBeGreaterThan(2);
    // The bucket closes: its final judgement. Only then do the growth updates come back (a slow topic).
    const final = run(detector, [mentionOf('e-bg-0', 14)]).filter((a) => a.entity_id === 'e-x');
    expect(final).toHaveLength(1);
    for (const alert of [...growth, ...final]) detector.noteSentAlert(alert);
    const later = run(detector, [mentionOf('e-bg-0', 15), mentionOf('e-bg-0', 16)]).filter(
      (a) => a.entity_id === 'e-x' && a.window_end === final[0]!.window_end,
    );
    expect(later).toEqual([]);
  });

  it('counts an article once however many of its chunks mention the entity', () => {
    const detector = new SpikeDetector({ hour: null, now: () => TEST_NOW });
    run(detector, background(days.slice(0, 10), 5, 1));
    const chunks = Array.from({ length: 6 }, (_, i) =>
      mentionOf('e-long-read', 10, { article: 'art-long', chunk: `art-long:v1:${i}` }),
    );
    run(detector, chunks);
    const snapshot = detector.snapshot('e-long-read')!;
    expect(snapshot.days).toEqual([{ bucket_start: DAY0 + 10 * DAY_MS, count: 6 }]);
    expect(snapshot.article_days).toEqual([{ bucket_start: DAY0 + 10 * DAY_MS, count: 1 }]);
  });

  it('restores article counts and the feed volume from its changelog', () => {
    const feed = [...background(days.slice(0, 12), 10, 2), ...Array.from({ length: 9 }, () => mentionOf('e-x', 12))];
    const first = new SpikeDetector({ hour: null, now: () => TEST_NOW });
    const alerts = run(first, feed);
    expect(alerts.some((a) => a.entity_id === 'e-x' && a.state === 'STARTED')).toBe(true);
    const restored = new SpikeDetector({ hour: null, now: () => TEST_NOW });
    for (const id of ['e-x', ...Array.from({ length: 10 }, (_, n) => `e-bg-${n}`)])
      restored.restore(first.snapshot(id)!);
    // What was sent is learnt from the alert topic, as the stage does.
    for (const alert of alerts) restored.noteSentAlert(alert);
    expect(restored.snapshot('e-x')).toEqual(first.snapshot('e-x'));
    // The same next mentions are judged the same way by both: counts, volume and newcomers agree.
    // (Not e-x's: its alerts read back say where its growth stood, and the next mentions are not its own.)
    const next = [mentionOf('e-bg-1', 13), mentionOf('e-y', 14), mentionOf('e-bg-2', 15)];
    expect(next.map((m) => restored.offer(m, 0))).toEqual(next.map((m) => first.offer(m, 0)));
  });
});

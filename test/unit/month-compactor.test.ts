import { describe, expect, it } from 'vitest';
import type { MonthStats } from '../../streams/datastore/datastore.js';
import { MonthCompactor } from '../../streams/datastore/month-compactor.js';

const JAN = Date.UTC(2025, 0, 1);
const FEB = Date.UTC(2025, 1, 1);
const MAR = Date.UTC(2025, 2, 1);

/** Months as a store reports them; `compact` merges at once and remembers what it was asked. */
function store(months: MonthStats[]) {
  const compacted: string[] = [];
  return {
    months,
    compacted,
    monthStats: () => Promise.resolve(months.map((month) => ({ ...month }))),
    compact: (index: string) => {
      compacted.push(index);
      months.find((month) => month.index === index)!.segments = 1;
      return Promise.resolve();
    },
  };
}

describe('MonthCompactor', () => {
  it('merges a finished month once a pass finds it unchanged, never the current month', async () => {
    const datastore = store([
      { index: 'neon-interactions-2025.01', month: JAN, docs: 100, segments: 40 },
      { index: 'neon-interactions-2025.02', month: FEB, docs: 50, segments: 12 },
    ]);
    const compactor = new MonthCompactor(datastore, ['interactions']);
    const midFebruary = FEB + 14 * 86_400_000;
    expect((await compactor.pass(midFebruary)).merging).toEqual([]); // first look: no history yet
    expect((await compactor.pass(midFebruary + 3_600_000)).merging).toEqual(['neon-interactions-2025.01']);
    expect(datastore.compacted).toEqual(['neon-interactions-2025.01']);
    // Already one segment: nothing to do; February is still being written to.
    expect((await compactor.pass(midFebruary + 7_200_000)).merging).toEqual([]);
  });

  it('waits while a finished month is still written to (a replay of old news), and merges a late write again', async () => {
    const datastore = store([{ index: 'neon-chunks-2025.01', month: JAN, docs: 10, segments: 5 }]);
    const compactor = new MonthCompactor(datastore, ['chunks']);
    await compactor.pass(MAR);
    datastore.months[0]!.docs = 20;
    datastore.months[0]!.segments = 9;
    expect((await compactor.pass(MAR + 1)).merging).toEqual([]);
    expect((await compactor.pass(MAR + 2)).merging).toEqual(['neon-chunks-2025.01']);
    // A late article lands in January: a second segment, merged after the next quiet interval.
    datastore.months[0]!.docs = 21;
    datastore.months[0]!.segments = 2;
    expect((await compactor.pass(MAR + 3)).merging).toEqual([]);
    expect((await compactor.pass(MAR + 4)).merging).toEqual(['neon-chunks-2025.01']);
  });

  it('says which months a merge was asked for at the previous pass are still unmerged, and asks again', async () => {
    const datastore = store([{ index: 'neon-chunks-2025.01', month: JAN, docs: 10, segments: 5 }]);
    datastore.compact = (index: string) => {
      datastore.compacted.push(index); // accepted, but never done (a refused background merge)
      return Promise.resolve();
    };
    const compactor = new MonthCompactor(datastore, ['chunks']);
    await compactor.pass(MAR);
    expect(await compactor.pass(MAR + 1)).toEqual({ merging: ['neon-chunks-2025.01'], unmerged: [] });
    expect(await compactor.pass(MAR + 2)).toEqual({
      merging: ['neon-chunks-2025.01'],
      unmerged: ['neon-chunks-2025.01'],
    });
  });

  it('forgets a month that was dropped, and starts over if one of the same name comes back', async () => {
    const datastore = store([{ index: 'neon-chunks-2025.01', month: JAN, docs: 10, segments: 5 }]);
    const compactor = new MonthCompactor(datastore, ['chunks']);
    await compactor.pass(MAR);
    const dropped = datastore.months.splice(0, 1);
    await compactor.pass(MAR + 1);
    datastore.months.push(...dropped);
    expect((await compactor.pass(MAR + 2)).merging).toEqual([]);
    expect((await compactor.pass(MAR + 3)).merging).toEqual(['neon-chunks-2025.01']);
  });
});

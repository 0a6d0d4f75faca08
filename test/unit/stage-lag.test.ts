import { describe, expect, it } from 'vitest';
import { STAGE_CATALOG } from '../../streams/pipeline/stage-catalog.js';
import { stageLag } from '../../streams/telemetry/stage-lag.js';
import type { Transport } from '../../streams/runtime/transport.js';

describe('stageLag', () => {
  it('is never negative: a group that committed past the end read a moment before lags by 0, not less', async () => {
    const spikes = STAGE_CATALOG.find((s) => s.name === 'spikes')!;
    const calls: string[] = [];
    // Partition 0: 12 behind; partition 1: the stage committed 38 past an end read too early.
    const transport = {
      committedOffsets: (group: string) => {
        calls.push(`committed ${group}`);
        return Promise.resolve([88n, 138n]);
      },
      endOffsets: () => {
        calls.push('ends');
        return Promise.resolve([100n, 100n]);
      },
    } as unknown as Transport;
    const lag = await stageLag(transport, spikes);
    expect(lag.lag).toBe(12 * spikes.reads.length);
    expect(lag.topics.every((t) => t.lag >= 0)).toBe(true);
    // Positions first, ends second: what is committed can then not pass the end read after it.
    expect(calls.slice(0, 2)).toEqual([`committed ${spikes.group}`, 'ends']);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OffsetWatermarks, type InputHandle } from '../../streams/runtime/offset-watermarks.js';

const position = (w: OffsetWatermarks, topic = 't', partition = 0): bigint | undefined =>
  w.committable().find((c) => c.topic === topic && c.partition === partition)?.offset;

describe('OffsetWatermarks', () => {
  it('commits nothing until the first input completes, then one past it', () => {
    const w = new OffsetWatermarks();
    const a = w.track('t', 0, 5n);
    expect(position(w)).toBe(5n);
    a.complete();
    expect(position(w)).toBe(6n);
  });

  it('waits for every derived output of an input, in any order', () => {
    const w = new OffsetWatermarks();
    const a = w.track('t', 0, 0);
    const b = w.track('t', 0, 1);
    a.addOutputs(3);
    a.seal();
    b.complete();
    expect(position(w)).toBe(0n);
    a.outputAcknowledged();
    a.outputAcknowledged();
    expect(position(w)).toBe(0n);
    a.outputAcknowledged();
    expect(position(w)).toBe(2n);
  });

  it('does not complete an input that is not sealed, even with all declared outputs acknowledged', () => {
    const w = new OffsetWatermarks();
    const a = w.track('t', 0, 0);
    a.addOutputs(1);
    a.outputAcknowledged();
    expect(position(w)).toBe(0n);
    a.addOutputs(1);
    a.seal();
    expect(position(w)).toBe(0n);
    a.outputAcknowledged();
    expect(position(w)).toBe(1n);
  });

  it('skips offset gaps (compaction, transaction markers)', () => {
    const w = new OffsetWatermarks();
    w.track('t', 0, 10).complete();
    w.track('t', 0, 14).complete();
    expect(position(w)).toBe(15n);
  });

  it('keeps partitions and topics apart', () => {
    const w = new OffsetWatermarks();
    w.track('t', 0, 0).complete();
    w.track('t', 1, 0);
    w.track('u', 0, 7).complete();
    expect(w.committable()).toEqual([
      { topic: 't', partition: 0, offset: 1n },
      { topic: 't', partition: 1, offset: 0n },
      { topic: 'u', partition: 0, offset: 8n },
    ]);
  });

  it('reports only positions that moved past what was committed', () => {
    const w = new OffsetWatermarks();
    w.track('t', 0, 0).complete();
    const committed = new Map([[OffsetWatermarks.partitionKey('t', 0), 1n]]);
    expect(w.committable(committed)).toEqual([]);
    w.track('t', 0, 1).complete();
    expect(w.committable(committed)).toEqual([{ topic: 't', partition: 0, offset: 2n }]);
  });

  it('rejects misuse loudly', () => {
    const w = new OffsetWatermarks();
    const a = w.track('t', 0, 3);
    expect(() => w.track('t', 0, 3)).toThrow(/delivered after/);
    expect(() => a.outputAcknowledged()).toThrow(/more acknowledgements/);
    a.addOutputs(1);
    expect(() => a.complete()).toThrow(/pending/);
    a.seal();
    expect(() => a.addOutputs(1)).toThrow(/after seal/);
  });

  it('forgets a reset partition; late acknowledgements from before are harmless', () => {
    const w = new OffsetWatermarks();
    const old = w.track('t', 0, 0);
    old.addOutputs(1);
    old.seal();
    w.reset('t', 0);
    expect(w.committable()).toEqual([]);
    const again = w.track('t', 0, 0);
    old.outputAcknowledged();
    expect(position(w)).toBe(0n);
    again.complete();
    expect(position(w)).toBe(1n);
  });

  it('counts inputs in flight', () => {
    const w = new OffsetWatermarks();
    const a = w.track('t', 0, 0);
    w.track('t', 1, 0);
    expect(w.inFlight).toBe(2);
    a.complete();
    expect(w.inFlight).toBe(1);
  });
});

/**
 * The promise that matters, under random fan-outs and random completion orders: the committed
 * position never passes an input that is not fully acknowledged, and it reaches the end once all are.
 */
describe('OffsetWatermarks property', () => {
  type Step = { kind: 'ack' | 'seal'; pick: number };

  it('never commits past an unacknowledged offset', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 1, max: 3 }), fanOut: fc.integer({ min: 0, max: 4 }) }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.array(fc.record({ kind: fc.constantFrom<'ack' | 'seal'>('ack', 'seal'), pick: fc.nat() }), {
          maxLength: 400,
        }),
        (inputs, steps: Step[]) => {
          const w = new OffsetWatermarks();
          let offset = 0n;
          const tracked: { handle: InputHandle; offset: bigint; acksLeft: number; sealed: boolean }[] = [];
          for (const input of inputs) {
            offset += BigInt(input.gap);
            const handle = w.track('t', 0, offset);
            handle.addOutputs(input.fanOut);
            tracked.push({ handle, offset, acksLeft: input.fanOut, sealed: false });
          }
          const check = (): void => {
            const committed = position(w);
            const firstIncomplete = tracked.find((t) => !(t.sealed && t.acksLeft === 0));
            if (firstIncomplete) expect(committed).toBe(firstIncomplete.offset);
            else expect(committed).toBe(offset + 1n);
            for (const t of tracked) {
              if (committed !== undefined && t.offset < committed) expect(t.sealed && t.acksLeft === 0).toBe(true);
            }
          };
          for (const step of steps) {
            const open = tracked.filter((t) => (step.kind === 'ack' ? t.acksLeft > 0 : !t.sealed));
            if (open.length === 0) continue;
            const target = open[step.pick % open.length]!;
            if (step.kind === 'ack') {
              target.acksLeft -= 1;
              target.handle.outputAcknowledged();
            } else {
              target.sealed = true;
              target.handle.seal();
            }
            check();
          }
          // Finish everything in a random-ish order: the position must reach the end.
          for (const t of [...tracked].reverse()) {
            while (t.acksLeft > 0) {
              t.acksLeft -= 1;
              t.handle.outputAcknowledged();
            }
            t.sealed = true;
            t.handle.seal();
            check();
          }
          expect(position(w)).toBe(offset + 1n);
          expect(w.inFlight).toBe(0);
        },
      ),
      { numRuns: 500 },
    );
  });
});

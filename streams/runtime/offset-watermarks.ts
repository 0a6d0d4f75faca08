/**
 * Per-partition commit positions for at-least-once processing with fan-out.
 *
 * Every input offset is tracked from the moment it is handed to the pipeline until all of its
 * derived outputs are acknowledged (an input may produce many outputs, or none). The committable
 * position of a partition is one past the highest offset below which every input is complete —
 * never past an input that is still in flight, whatever order completions arrive in.
 */

export interface InputHandle {
  readonly partition: number;
  readonly offset: bigint;
  /** Declares `count` more outputs derived from this input (call before they can be acknowledged). */
  addOutputs(count: number): void;
  /** One derived output was durably written (or dead-lettered). */
  outputAcknowledged(): void;
  /** No more outputs will be added; the input is complete once the declared ones are acknowledged. */
  seal(): void;
  /** Seal with no (further) outputs and complete — a filtered input, or one dead-lettered whole. */
  complete(): void;
  readonly done: boolean;
}

interface PendingInput {
  outstanding: number;
  sealed: boolean;
}

class PartitionWatermark {
  /** In-flight inputs by offset; insertion order is offset order because Kafka delivers in order. */
  private readonly pending = new Map<bigint, PendingInput>();
  /** Next offset to commit (Kafka's convention: the offset of the next record to read). */
  private committable: bigint | undefined;
  private highestSeen: bigint | undefined;

  constructor(readonly partition: number) {}

  begin(offset: bigint): PendingInput {
    if (this.highestSeen !== undefined && offset <= this.highestSeen) {
      throw new Error(`partition ${this.partition}: offset ${offset} delivered after ${this.highestSeen}`);
    }
    // Offsets can skip (compaction, transaction markers); a gap below the first pending input is
    // nothing we wait for, so the position before it is simply "everything up to here".
    this.highestSeen = offset;
    const entry: PendingInput = { outstanding: 0, sealed: false };
    this.pending.set(offset, entry);
    if (this.pending.size === 1) this.committable ??= offset;
    return entry;
  }

  settle(): void {
    for (const [offset, entry] of this.pending) {
      if (!entry.sealed || entry.outstanding > 0) {
        this.committable = offset;
        return;
      }
      this.pending.delete(offset);
    }
    if (this.highestSeen !== undefined) this.committable = this.highestSeen + 1n;
  }

  get position(): bigint | undefined {
    return this.committable;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  get highest(): bigint | undefined {
    return this.highestSeen;
  }
}

export class OffsetWatermarks {
  private readonly partitions = new Map<string, PartitionWatermark>();

  private key(topic: string, partition: number): string {
    return `${topic}\u0000${partition}`;
  }

  /**
   * Starts tracking an input. `onComplete` runs once, when the input is sealed and every declared
   * output acknowledged. Handles from before a `reset` of their partition become inert.
   */
  track(topic: string, partition: number, offset: bigint | string | number, onComplete?: () => void): InputHandle {
    const key = this.key(topic, partition);
    let watermark = this.partitions.get(key);
    if (!watermark) {
      watermark = new PartitionWatermark(partition);
      this.partitions.set(key, watermark);
    }
    const owner = watermark;
    const at = BigInt(offset);
    const entry = owner.begin(at);
    let notified = false;
    const settle = (): void => {
      owner.settle();
      if (!notified) {
        notified = true;
        onComplete?.();
      }
    };
    return {
      partition,
      offset: at,
      addOutputs(count: number) {
        if (entry.sealed) throw new Error(`offset ${at}: outputs added after seal`);
        if (!Number.isInteger(count) || count < 0) throw new Error(`offset ${at}: bad output count ${count}`);
        entry.outstanding += count;
      },
      outputAcknowledged() {
        if (entry.outstanding <= 0) throw new Error(`offset ${at}: more acknowledgements than outputs`);
        entry.outstanding -= 1;
        if (entry.sealed && entry.outstanding === 0) settle();
      },
      seal() {
        if (entry.sealed) return;
        entry.sealed = true;
        if (entry.outstanding === 0) settle();
      },
      complete() {
        if (entry.outstanding > 0) throw new Error(`offset ${at}: completed with ${entry.outstanding} outputs pending`);
        this.seal();
      },
      get done() {
        return entry.sealed && entry.outstanding === 0;
      },
    };
  }

  /**
   * Positions worth committing: partitions whose committable position moved past `lastCommitted`.
   * The value follows Kafka's convention (next offset to read).
   */
  committable(
    lastCommitted: ReadonlyMap<string, bigint> = new Map(),
  ): { topic: string; partition: number; offset: bigint }[] {
    const result: { topic: string; partition: number; offset: bigint }[] = [];
    for (const [key, watermark] of this.partitions) {
      const position = watermark.position;
      if (position === undefined) continue;
      const previous = lastCommitted.get(key);
      if (previous !== undefined && position <= previous) continue;
      const topic = key.slice(0, key.indexOf('\u0000'));
      result.push({ topic, partition: watermark.partition, offset: position });
    }
    return result;
  }

  /** Key used in `lastCommitted` maps. */
  static partitionKey(topic: string, partition: number): string {
    return `${topic}\u0000${partition}`;
  }

  /**
   * True when `offset` is at or below what this partition already saw: the transport rewound (a
   * rebalance restarted it from the committed offset), and the partition must be reset first.
   */
  isRewind(topic: string, partition: number, offset: bigint | string | number): boolean {
    const highest = this.partitions.get(this.key(topic, partition))?.highest;
    return highest !== undefined && BigInt(offset) <= highest;
  }

  /** Inputs handed out and not complete, over all partitions. */
  get inFlight(): number {
    let total = 0;
    for (const watermark of this.partitions.values()) total += watermark.inFlight;
    return total;
  }

  /**
   * Forgets a partition (revoked in a rebalance, or re-delivered from its committed offset). Its old
   * handles keep working on a detached object, so late acknowledgements are harmless.
   */
  reset(topic: string, partition: number): void {
    this.partitions.delete(this.key(topic, partition));
  }

  resetAll(): void {
    this.partitions.clear();
  }
}

/**
 * When M2 batches are extracted, and who waits for it.
 *
 * A batch is extracted once it closes (pair-batches.ts: count, event time, held bound, stop). Each
 * chunk that joined a batch when it arrived waits for it: the stage commits the chunk's offset only
 * once an extraction of every batch it joined has been written (`settle`).
 *
 * The one wall-clock rule: once no new chunk has come for `quietMs`, the open batches are extracted
 * as they stand — a quiet stream (the end of a replay, a night without news) must not hold its last
 * chunks uncommitted until the next chunk moves event time on. This extraction is provisional: it
 * does not close the batch. If the batch takes more chunks, or a newer version of one, before it
 * closes by its own rules, it is extracted again whole when it does, so the batch a replay sees
 * (which never pauses) is extracted in every run. What the early extraction wrote is not lost or
 * duplicated: interaction ids come from the statement (interaction-extractor.ts), so a statement
 * found both times is one record, and its citations are merged (recent-interactions.ts). Only a
 * statement the model gives for the part and not for the whole stays as an extra record.
 *
 * An extraction that fails is run again by the next waiter that asks (the stage's retry), with the
 * same chunks. Pure: the timer is injected.
 */
import type { Chunk } from '../../schemas/records.generated.js';
import type { BatchCloseReason, PairBatch } from './pair-batches.js';

export type RoundReason = BatchCloseReason | 'quiet';

export interface BatchRound {
  readonly batch: PairBatch;
  /** In time order. */
  readonly chunks: readonly Chunk[];
  readonly reason: RoundReason;
}

export interface Timer {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimer: Timer = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface BatchRoundsOptions {
  /** Extracts and writes one round; rejects if it could not. */
  extract: (round: BatchRound) => Promise<void>;
  /** Wall clock without a new chunk after which open batches are extracted as they stand; Infinity: never. */
  quietMs: number;
  timer?: Timer;
  /** A failure nobody will retry (it is dead-lettered): the round counts as settled. */
  isFinal?: (error: unknown) => boolean;
}

class Round implements BatchRound {
  done = false;
  private running: Promise<void> | undefined;

  constructor(
    readonly batch: PairBatch,
    readonly chunks: readonly Chunk[],
    readonly reason: RoundReason,
    private readonly run: (round: BatchRound) => Promise<void>,
    private readonly isFinal: (error: unknown) => boolean,
    private readonly settled: () => void,
  ) {}

  covers(chunkId: string): boolean {
    return this.chunks.some((c) => c.id === chunkId);
  }

  /** The extraction, shared by every waiter while it runs; a failed one runs again when asked again. */
  attempt(): Promise<void> {
    if (this.done) return Promise.resolve();
    this.running ??= this.run(this).then(
      () => {
        this.done = true;
        this.running = undefined;
        this.settled();
      },
      (error: unknown) => {
        this.running = undefined;
        if (this.isFinal(error)) {
          this.done = true;
          this.settled();
        }
        throw error;
      },
    );
    return this.running;
  }
}

interface Waiting {
  chunkId: string;
  resolve: (round: Round) => void;
}

class Track {
  readonly rounds: Round[] = [];
  /** Chunks some round has extracted, in the version it extracted. */
  readonly covered = new Set<string>();
  /** A chunk took a newer version after a round extracted it. */
  changed = false;
  readonly waiting: Waiting[] = [];

  constructor(readonly batch: PairBatch) {}

  latestRoundWith(chunkId: string): Round | undefined {
    for (let i = this.rounds.length - 1; i >= 0; i--) if (this.rounds[i]!.covers(chunkId)) return this.rounds[i];
    return undefined;
  }

  uncovered(): Chunk[] {
    return this.batch.chunks.filter((c) => !this.covered.has(c.id));
  }

  /** Closed, every round extracted (or given up): nothing more will happen to it. */
  finished(): boolean {
    return !this.batch.open && this.rounds.every((r) => r.done) && this.waiting.length === 0;
  }
}

export class BatchRounds {
  private readonly tracks = new Map<PairBatch, Track>();
  /** chunk id → tracks of batches holding it, until they finish. */
  private readonly byChunk = new Map<string, Set<Track>>();
  private readonly timer: Timer;
  private readonly isFinal: (error: unknown) => boolean;
  private quietHandle: unknown;
  private readonly running = new Set<Promise<void>>();
  /** Rounds started, by reason. */
  readonly started: Record<RoundReason, number> = { full: 0, event_time: 0, held: 0, stop: 0, quiet: 0 };

  constructor(private readonly options: BatchRoundsOptions) {
    this.timer = options.timer ?? realTimer;
    this.isFinal = options.isFinal ?? (() => false);
  }

  /** Batches not finished yet. */
  get size(): number {
    return this.tracks.size;
  }

  /**
   * What the planner decided for one chunk, in input order: the batches it joined (to wait for),
   * the batches that took a newer version of it, the batches closed by its arrival.
   */
  accept(plan: {
    firstSight: boolean;
    joined: readonly PairBatch[];
    updated: readonly PairBatch[];
    closed: readonly PairBatch[];
  }): void {
    for (const batch of plan.joined) this.track(batch);
    for (const batch of plan.updated) {
      const track = this.tracks.get(batch);
      if (track && track.rounds.length > 0) track.changed = true;
    }
    for (const batch of plan.closed) this.closeRound(batch, batch.closedBy ?? 'stop');
    if (plan.firstSight) this.armQuietTimer();
  }

  /** Batches this chunk is in that are not finished: a redelivered chunk waits for them too. */
  unfinishedBatchesOf(chunkId: string): PairBatch[] {
    return [...(this.byChunk.get(chunkId) ?? [])].map((t) => t.batch);
  }

  /**
   * Resolves once a round that extracted this chunk of the batch has been written (or was given up
   * as final); rejects with the failure of that round's attempt.
   */
  async settle(batch: PairBatch, chunkId: string): Promise<void> {
    const track = this.tracks.get(batch);
    if (!track) return; // finished before: already written
    const round =
      track.latestRoundWith(chunkId) ??
      (await new Promise<Round>((resolve) => track.waiting.push({ chunkId, resolve })));
    await round.attempt();
  }

  /** The quiet stream's flush: every open batch's chunks not extracted yet, as they stand. */
  flushQuiet(): void {
    this.quietHandle = undefined;
    for (const track of [...this.tracks.values()]) {
      if (!track.batch.open) continue;
      const chunks = track.uncovered();
      if (chunks.length > 0) this.startRound(track, chunks, 'quiet');
    }
  }

  /** Closes every batch the planner drained, and waits for every round running. */
  async drain(closed: readonly PairBatch[]): Promise<void> {
    if (this.quietHandle !== undefined) this.timer.clear(this.quietHandle);
    this.quietHandle = undefined;
    for (const batch of closed) this.closeRound(batch, 'stop');
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private armQuietTimer(): void {
    if (!Number.isFinite(this.options.quietMs)) return;
    if (this.quietHandle !== undefined) this.timer.clear(this.quietHandle);
    this.quietHandle = this.timer.set(() => this.flushQuiet(), this.options.quietMs);
  }

  private track(batch: PairBatch): Track {
    let track = this.tracks.get(batch);
    if (!track) {
      track = new Track(batch);
      this.tracks.set(batch, track);
    }
    for (const chunk of batch.chunks) {
      let set = this.byChunk.get(chunk.id);
      if (!set) {
        set = new Set();
        this.byChunk.set(chunk.id, set);
      }
      set.add(track);
    }
    return track;
  }

  /**
   * The batch is closed: extracted whole, unless one round already extracted exactly these chunks
   * in these versions (a quiet flush that nothing came after).
   */
  private closeRound(batch: PairBatch, reason: BatchCloseReason): void {
    const track = this.track(batch);
    const whole =
      track.rounds.length === 1 &&
      !track.changed &&
      track.rounds[0]!.chunks.length === batch.chunks.length &&
      track.uncovered().length === 0;
    if (!whole) this.startRound(track, [...batch.chunks], reason);
    this.forgetIfFinished(track);
  }

  private startRound(track: Track, chunks: Chunk[], reason: RoundReason): void {
    const round = new Round(track.batch, chunks, reason, this.options.extract, this.isFinal, () =>
      this.forgetIfFinished(track),
    );
    track.rounds.push(round);
    for (const chunk of chunks) track.covered.add(chunk.id);
    track.changed = false;
    this.started[reason] += 1;
    const still: Waiting[] = [];
    for (const waiting of track.waiting.splice(0)) {
      if (round.covers(waiting.chunkId)) waiting.resolve(round);
      else still.push(waiting);
    }
    track.waiting.push(...still);
    const run = round.attempt().catch(() => undefined); // waiters see the failure and retry
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  private forgetIfFinished(track: Track): void {
    if (!track.finished()) return;
    this.tracks.delete(track.batch);
    for (const chunk of track.batch.chunks) {
      const set = this.byChunk.get(chunk.id);
      set?.delete(track);
      if (set?.size === 0) this.byChunk.delete(chunk.id);
    }
  }
}

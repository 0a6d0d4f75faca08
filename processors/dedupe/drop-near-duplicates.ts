/**
 * Near-duplicate removal of chunks (NEON §2.1 step 4): a chunk whose trigram Jaccard similarity with
 * a chunk already kept in the time window reaches the threshold is a duplicate. MinHash-LSH finds
 * the candidates, the exact Jaccard decides. A duplicate is not thrown away: its sources and dates
 * are merged into the survivor's provenance, so the content stays mapped to everyone who published it.
 *
 * Delivery: replay-safe. A chunk id already held is "replayed" (same content and mentions as the
 * first time, provenance as merged so far), never a duplicate of itself; a replayed duplicate merges
 * nothing new. Deterministic given the order of chunks, and every replica computes the same
 * signatures (fixed seeds). Rejections: none; every chunk is unique, replayed, a duplicate or seen.
 *
 * Time is the chunks' event time, never the wall clock: the window ends at the latest chunk time
 * offered or restored, so what is compared with what depends on the chunks and their order only. A
 * chunk offered again once the window has moved past it (or past its survivor) cannot be compared
 * with the survivors of its time any more (they are evicted), so deciding it again would call it
 * unique — a survivor written again with only its own source, a duplicate written as a second
 * document. That is exactly what a replay does when each chunk comes twice (every stage re-reading
 * its topic from the start under a fresh group, the second copies arriving once the first have
 * moved the window on), so the decision taken for each chunk id is remembered for four windows of
 * event time: a chunk decided before that would now pass as unique is "seen" and writes nothing
 * (its survivor already carries it). One never decided is a late chunk: unique, not held, as it
 * would be alone (and unique again if offered again).
 *
 * State after a restart: rebuilt by calling {@link NearDuplicateFilter.restore} with every chunk of
 * the window from the unique-chunk topic (its own output is its changelog), or from a JSON snapshot
 * with {@link NearDuplicateFilter.exportState} / {@link NearDuplicateFilter.fromState}. Both keep
 * the survivors' merged provenance; shingles and band keys are recomputed from the text. What was
 * decided a duplicate is not in either, so after a restart a duplicate older than the window, offered
 * again, is a late chunk.
 */
import type { Chunk, Mention, Provenance } from '../../schemas/records.generated.js';
import { bandKeys, chooseBandPlan, type BandPlan } from './lsh-bands.js';
import { MinHasher } from './minhash.js';
import { NearDuplicateIndex, type IndexCandidate, type IndexSize } from './near-duplicate-index.js';
import { SHINGLE_KINDS, shingles, type ShingleKind } from './trigram-shingles.js';

export interface DedupeOptions {
  /** Trigram Jaccard similarity at or above which a chunk is a near-duplicate. Default 0.5. */
  threshold: number;
  /** Event-time window in which survivors are held, ms. Default 7 days. */
  windowMs: number;
  /** MinHash permutations k = bands × rows. Default: chosen with `bands` for the threshold (90 at 0.5). */
  numHashes: number;
  /** LSH bands b. Default: chosen with `numHashes` for the threshold (30 at 0.5). */
  bands: number;
  /** Shingles: word trigrams (default) or character trigrams. */
  shingle: ShingleKind;
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_DEDUPE_THRESHOLD = 0.5;
export const DEFAULT_DEDUPE_WINDOW_MS = 7 * DAY_MS;

export const DEDUPE_ERROR_CODES = ['invalid_options', 'invalid_state'] as const;
export type DedupeErrorCode = (typeof DEDUPE_ERROR_CODES)[number];

export class DedupeError extends Error {
  override readonly name = 'DedupeError';
  constructor(
    readonly code: DedupeErrorCode,
    readonly problems: readonly string[],
  ) {
    super(problems.join('; '));
  }
}

/**
 * Fills in defaults and checks every rule at once. With neither numHashes nor bands given, the band
 * plan is chosen for the threshold (lsh-bands.ts: P(threshold) ≥ 0.98); give both or neither.
 */
export function resolveDedupeOptions(options: Partial<DedupeOptions> = {}): DedupeOptions {
  const problems: string[] = [];
  const threshold = options.threshold ?? DEFAULT_DEDUPE_THRESHOLD;
  const windowMs = options.windowMs ?? DEFAULT_DEDUPE_WINDOW_MS;
  const shingle = options.shingle ?? 'word3';
  if (!(threshold > 0 && threshold <= 1)) problems.push(`threshold must be in (0, 1], got ${threshold}`);
  if (!(Number.isFinite(windowMs) && windowMs > 0))
    problems.push(`windowMs must be a positive number, got ${windowMs}`);
  if (!SHINGLE_KINDS.includes(shingle)) problems.push(`shingle must be one of ${SHINGLE_KINDS.join(', ')}`);
  let plan: BandPlan = { bands: 1, rows: 1 };
  if (options.numHashes === undefined && options.bands === undefined) {
    if (problems.length === 0) plan = chooseBandPlan(threshold);
  } else if (options.numHashes === undefined || options.bands === undefined) {
    problems.push('numHashes and bands go together: give both or neither');
  } else {
    const { numHashes, bands } = options;
    if (!Number.isInteger(numHashes) || numHashes < 1) {
      problems.push(`numHashes must be a positive integer, got ${numHashes}`);
    }
    if (!Number.isInteger(bands) || bands < 1) problems.push(`bands must be a positive integer, got ${bands}`);
    else if (numHashes % bands !== 0) problems.push(`numHashes (${numHashes}) must be a multiple of bands (${bands})`);
    plan = { bands, rows: numHashes / bands };
  }
  if (problems.length > 0) throw new DedupeError('invalid_options', problems);
  return { threshold, windowMs, numHashes: plan.bands * plan.rows, bands: plan.bands, shingle };
}

export type OfferResult =
  | { kind: 'unique'; chunk: Chunk; mentions: Mention[] }
  | { kind: 'duplicate'; of: string; similarity: number; survivor: Chunk }
  | { kind: 'replayed'; chunk: Chunk; mentions: Mention[] }
  /** Decided before, and what decided it has left the window (a survivor evicted, a duplicate's survivor evicted): nothing to write. */
  | { kind: 'seen'; was: 'survivor' | 'duplicate' };

/** What was decided for a chunk id: held as a survivor, merged as a duplicate, or let through late. */
type Decision = 'survivor' | 'duplicate' | 'late';

/** Decisions remembered for this many windows of event time (and at most this many chunk ids). */
const DECISIONS_KEPT_WINDOWS = 4;
const MAX_DECISIONS_KEPT = 1_000_000;

/** A JSON-able snapshot: the options and the survivors of the window in registration order. */
export interface DedupeState {
  format: 'neon-dedupe-state/1';
  options: DedupeOptions;
  latest_t: number | null;
  chunks: Chunk[];
}

/** One Mention per entity of the chunk, in entity_ids order (name and type from chunk.entities). */
export function mentionsOf(chunk: Chunk): Mention[] {
  const described = new Map(chunk.entities.map((entity) => [entity.id, entity]));
  const ids = [...new Set([...chunk.entity_ids, ...chunk.entities.map((entity) => entity.id)])];
  // The chunk's own article is the first provenance entry; later ones are merged duplicates.
  const own = chunk.provenance.find((source) => source.article_id === chunk.article_id);
  return ids.map((id) => {
    const entity = described.get(id);
    return {
      entity_id: id,
      // A chunk written by the first Chunk schema has ids without names: the id is the best name known.
      name: entity?.name ?? id,
      entity_type: entity?.type ?? 'OTHER',
      t: chunk.t,
      chunk_id: chunk.id,
      article_id: chunk.article_id,
      url: own?.url ?? null,
    };
  });
}

/**
 * The survivor's own provenance entries first (as the Chunk schema promises), then every other
 * article once, sorted by published_at (then article id, so the order is deterministic).
 */
export function mergeProvenance(survivor: readonly Provenance[], more: readonly Provenance[]): Provenance[] {
  const seen = new Set(survivor.map((p) => p.article_id));
  const added: Provenance[] = [];
  for (const p of more) {
    if (seen.has(p.article_id)) continue;
    seen.add(p.article_id);
    added.push({ ...p });
  }
  const own = survivor.slice(0, 1);
  const rest = [...survivor.slice(1), ...added].sort(
    (a, b) =>
      a.published_at - b.published_at || (a.article_id < b.article_id ? -1 : a.article_id > b.article_id ? 1 : 0),
  );
  return [...own.map((p) => ({ ...p })), ...rest];
}

function copyChunk(chunk: Chunk): Chunk {
  return {
    ...chunk,
    entity_ids: [...chunk.entity_ids],
    entities: chunk.entities.map((e) => ({ ...e })),
    provenance: chunk.provenance.map((p) => ({ ...p })),
  };
}

export class NearDuplicateFilter {
  readonly options: DedupeOptions;
  private readonly plan: BandPlan;
  private readonly hasher: MinHasher;
  private readonly index: NearDuplicateIndex<Chunk>;
  private readonly signatureBuffer: Uint32Array;
  /** chunk id → its decision and event time, in the order decided. */
  private readonly decisions = new Map<string, { as: Decision; t: number }>();

  constructor(options: Partial<DedupeOptions> = {}) {
    this.options = resolveDedupeOptions(options);
    this.plan = { bands: this.options.bands, rows: this.options.numHashes / this.options.bands };
    this.hasher = new MinHasher(this.options.numHashes);
    this.signatureBuffer = new Uint32Array(this.options.numHashes);
    this.index = new NearDuplicateIndex<Chunk>({ threshold: this.options.threshold, windowMs: this.options.windowMs });
  }

  /** Decides for one chunk; on 'duplicate', returns the survivor with the duplicate's provenance merged in. */
  offer(chunk: Chunk): OfferResult {
    const held = this.index.get(chunk.id);
    if (held !== undefined) return { kind: 'replayed', chunk: copyChunk(held), mentions: mentionsOf(held) };
    this.index.advance(chunk.t);
    this.forgetOldDecisions();
    const candidate = this.candidateOf(chunk);
    const decision = this.index.findDuplicate(candidate);
    if (decision.kind === 'duplicate') {
      const survivor = this.index.get(decision.of);
      if (survivor !== undefined) {
        survivor.provenance = mergeProvenance(survivor.provenance, chunk.provenance);
        this.decide(chunk, 'duplicate');
        return { kind: 'duplicate', of: decision.of, similarity: decision.similarity, survivor: copyChunk(survivor) };
      }
    }
    // Unique now only because what decided it has left the window: decided before, not again.
    const earlier = this.decisions.get(chunk.id);
    if (earlier !== undefined && earlier.as !== 'late') return { kind: 'seen', was: earlier.as };
    const kept = copyChunk(chunk);
    this.decide(chunk, this.index.add(candidate, kept) ? 'survivor' : 'late');
    return { kind: 'unique', chunk: copyChunk(kept), mentions: mentionsOf(kept) };
  }

  /**
   * Takes a chunk that was already decided unique (read back from the unique-chunk topic, written
   * by this or another replica) into the window without deciding anything. A chunk already held
   * gains the provenance the record carries; survivors re-emitted with merged provenance arrive here.
   */
  restore(chunk: Chunk): void {
    const held = this.index.get(chunk.id);
    if (held !== undefined) {
      held.provenance = mergeProvenance(held.provenance, chunk.provenance);
      return;
    }
    if (this.index.add(this.candidateOf(chunk), copyChunk(chunk))) this.decide(chunk, 'survivor');
  }

  /** The survivor held under this id as it stands now (its provenance merged so far), or undefined. */
  current(id: string): Chunk | undefined {
    const held = this.index.get(id);
    return held === undefined ? undefined : copyChunk(held);
  }

  size(): IndexSize {
    return this.index.size();
  }

  exportState(): DedupeState {
    const latest = this.index.latest();
    return {
      format: 'neon-dedupe-state/1',
      options: { ...this.options },
      latest_t: Number.isFinite(latest) ? latest : null,
      chunks: [...this.index.entries()].map((entry) => copyChunk(entry.payload)),
    };
  }

  static fromState(state: DedupeState): NearDuplicateFilter {
    const problems: string[] = [];
    if ((state.format as string) !== 'neon-dedupe-state/1') problems.push(`unknown state format ${state.format}`);
    if (!Array.isArray(state.chunks)) problems.push('chunks must be an array');
    if (problems.length > 0) throw new DedupeError('invalid_state', problems);
    const filter = new NearDuplicateFilter(state.options);
    // The window's end first, so chunks that had already fallen out of it are not taken back in.
    if (state.latest_t !== null) filter.index.advance(state.latest_t);
    for (const chunk of state.chunks) filter.restore(chunk);
    return filter;
  }

  private decide(chunk: Chunk, as: Decision): void {
    this.decisions.delete(chunk.id);
    this.decisions.set(chunk.id, { as, t: chunk.t });
    this.forgetOldDecisions();
  }

  /** Decided order is nearly time order: the oldest are at the front (one behind a newer one goes a little later). */
  private forgetOldDecisions(): void {
    const horizon = this.index.latest() - DECISIONS_KEPT_WINDOWS * this.options.windowMs;
    for (const [id, { t }] of this.decisions) {
      if (t >= horizon && this.decisions.size <= MAX_DECISIONS_KEPT) break;
      this.decisions.delete(id);
    }
  }

  private candidateOf(chunk: Chunk): IndexCandidate {
    const set = shingles(chunk.text, this.options.shingle);
    const signature = this.hasher.signature(set, this.signatureBuffer);
    return {
      id: chunk.id,
      group: chunk.article_id,
      t: chunk.t,
      shingles: set,
      bandKeys: bandKeys(signature, this.plan),
    };
  }
}

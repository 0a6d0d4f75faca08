/**
 * NEON M2 target pairs: "co-occurring entity pairs (s, o), s ∈ S, o ∈ E, with prominent TF-IDF
 * scores" (§2.1), computed online over a sliding window of event time.
 *
 * For a subject s, the chunks mentioning s are its document: the term frequency of o is the number
 * of those chunks that also mention o, and o's inverse document frequency is log(N / df(o)) over
 * all N chunks of the window. Entities that co-occur with everything (a country in every story)
 * score low; the ones particular to s score high. A pair is selected while o is among s's top
 * `maxObjects` objects and co-occurred at least `minCooccurrences` times.
 *
 * Counts are kept per day and summed over the window, so old co-occurrences fall out as event
 * time passes. Each chunk is counted once (the planner passes a chunk id only on its first sight:
 * a dedupe survivor written again with more sources is the same document, not another). The index lives in memory: after a restart it warms up again from the chunks that
 * follow (pairs are chosen a few chunks later, nothing is lost to M1).
 */
import { DAY_MS } from '../spikes/spike-rule.js';

export interface PairSelectionOptions {
  /** Event-time window the statistics cover. */
  windowMs: number;
  /** Objects selected per subject. */
  maxObjects: number;
  /** Chunks a pair must share before it is selected. */
  minCooccurrences: number;
}

export const DEFAULT_PAIR_SELECTION: PairSelectionOptions = {
  windowMs: 14 * DAY_MS,
  maxObjects: 3,
  minCooccurrences: 2,
};

interface DayCounts {
  chunks: number;
  /** entity id → chunks mentioning it. */
  df: Map<string, number>;
  /** subject id → object id → chunks mentioning both. */
  cooccurrences: Map<string, Map<string, number>>;
}

export interface ScoredObject {
  objectId: string;
  cooccurrences: number;
  score: number;
}

export class PairSelector {
  private readonly options: PairSelectionOptions;
  private readonly days = new Map<number, DayCounts>();
  private latest = -Infinity;

  constructor(options: Partial<PairSelectionOptions> = {}) {
    this.options = { ...DEFAULT_PAIR_SELECTION, ...options };
  }

  /** The event-time window the statistics cover. */
  get windowMs(): number {
    return this.options.windowMs;
  }

  /** Counts one chunk: its entities, and the co-occurrences of each subject among them. */
  observe(chunk: { t: number; entity_ids: readonly string[] }, subjects: readonly string[]): void {
    const day = Math.floor(chunk.t / DAY_MS) * DAY_MS;
    if (day < this.latest - this.options.windowMs) return; // older than the window: nothing to count
    let counts = this.days.get(day);
    if (!counts) {
      counts = { chunks: 0, df: new Map(), cooccurrences: new Map() };
      this.days.set(day, counts);
    }
    counts.chunks += 1;
    const entities = [...new Set(chunk.entity_ids)];
    for (const id of entities) counts.df.set(id, (counts.df.get(id) ?? 0) + 1);
    for (const subject of subjects) {
      let objects = counts.cooccurrences.get(subject);
      if (!objects) {
        objects = new Map();
        counts.cooccurrences.set(subject, objects);
      }
      for (const object of entities) if (object !== subject) objects.set(object, (objects.get(object) ?? 0) + 1);
    }
    if (day > this.latest) {
      this.latest = day;
      for (const old of this.days.keys()) if (old < day - this.options.windowMs) this.days.delete(old);
    }
  }

  /** s's objects by TF-IDF over the window ending at `t`, best first. */
  scoredObjects(subjectId: string, t: number): ScoredObject[] {
    const from = t - this.options.windowMs;
    let total = 0;
    const df = new Map<string, number>();
    const tf = new Map<string, number>();
    for (const [day, counts] of this.days) {
      if (day < from - DAY_MS || day > t) continue;
      total += counts.chunks;
      for (const [object, n] of counts.cooccurrences.get(subjectId) ?? []) tf.set(object, (tf.get(object) ?? 0) + n);
    }
    if (tf.size === 0) return [];
    for (const [day, counts] of this.days) {
      if (day < from - DAY_MS || day > t) continue;
      for (const object of tf.keys()) df.set(object, (df.get(object) ?? 0) + (counts.df.get(object) ?? 0));
    }
    return [...tf]
      .filter(([, n]) => n >= this.options.minCooccurrences)
      .map(([objectId, n]) => ({
        objectId,
        cooccurrences: n,
        score: n * Math.log((total + 1) / (df.get(objectId) ?? 1)),
      }))
      .filter((o) => o.score > 0)
      .sort((a, b) => b.score - a.score || a.objectId.localeCompare(b.objectId))
      .slice(0, this.options.maxObjects);
  }

  /** The objects of `subjectId` in this chunk that make a selected pair at the chunk's time. */
  selectedObjects(subjectId: string, chunk: { t: number; entity_ids: readonly string[] }): string[] {
    const top = new Set(this.scoredObjects(subjectId, chunk.t).map((o) => o.objectId));
    return chunk.entity_ids.filter((id) => id !== subjectId && top.has(id));
  }
}

import { monthEnd, type DatastoreKind } from '../elasticsearch/datastore-templates.js';
import type { Datastore } from './datastore.js';

/** What a pass did. */
export interface CompactionPass {
  /** Months whose merge into one segment this pass started. */
  merging: string[];
  /**
   * Months a merge was started for at the previous pass that still have several segments and no new
   * documents: the merge was refused (Elasticsearch reports a refused background merge, such as a
   * missing `maintenance` privilege, only in its task) or has not finished. Asked again.
   */
  unmerged: string[];
}

/**
 * Merges each finished month of a datastore into one segment, as an ILM "warm" phase would (the
 * integ-test Elasticsearch has no ILM). A month indexed at news speed ends up in hundreds of
 * segments, each with its own HNSW graph, and a kNN search walks every one of them: at a million
 * interactions that is what makes a question slow. A merged month is one graph.
 *
 * A month is merged once it is over and nothing was written to it between two passes: a replay of old
 * news writes into past months, and merging an index that is still being written to is work thrown
 * away. A month written to after its merge (a late article) is merged again once it is quiet.
 */
export class MonthCompactor {
  /** Each month's document count at the previous pass. */
  private docsAtLastPass = new Map<string, number>();
  /** The months the previous pass started merging. */
  private startedAtLastPass = new Set<string>();

  constructor(
    private readonly datastore: Pick<Datastore, 'monthStats' | 'compact'>,
    private readonly kinds: readonly DatastoreKind[],
  ) {}

  /** One pass: starts the merges that are due. */
  async pass(now = Date.now()): Promise<CompactionPass> {
    const seen = new Map<string, number>();
    const merging: string[] = [];
    const unmerged: string[] = [];
    for (const kind of this.kinds) {
      for (const month of await this.datastore.monthStats(kind)) {
        seen.set(month.index, month.docs);
        const quiet = this.docsAtLastPass.get(month.index) === month.docs;
        if (monthEnd(month.month) <= now && month.segments > 1 && quiet) {
          if (this.startedAtLastPass.has(month.index)) unmerged.push(month.index);
          await this.datastore.compact(month.index);
          merging.push(month.index);
        }
      }
    }
    // Dropped months are forgotten with the rest of the previous pass.
    this.docsAtLastPass = seen;
    this.startedAtLastPass = new Set(merging);
    return { merging, unmerged };
  }
}

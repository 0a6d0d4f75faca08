/**
 * Interactions already written, remembered by what they say rather than by id, so the same statement
 * is not indexed twice:
 *
 * - the overlap of consecutive chunks: windows share sentences (chunk-article.ts), so a tuple cut
 *   from a shared sentence comes out of both chunks, with the same time;
 * - both directions of one link: "Biden met Macron in Paris" is the same statement whether it was
 *   extracted for Biden (object Macron) or for Macron (object Biden). The entity filter matches an
 *   interaction by subject or object, so one record serves both entities' timelines and questions,
 *   and a second would only take a place of the top k from something else.
 *
 * The key is the variant, the time, the text's normalised key and the unordered pair of entities. M1
 * and M2 are kept apart: they are two methods whose outputs are compared, and an M2 tuple cites the
 * whole batch of its time where M1 cites one chunk. Bounded: the
 * last `capacity` keys are kept (an overlap or a mirrored pair is found within the same article, so
 * a short memory catches nearly all of it); a statement seen again after that is written again under
 * its deterministic id, which overwrites rather than adds when it is the same record.
 */
import type { Interaction } from '../../schemas/records.generated.js';
import { entityKey } from '../markup/entity-id.js';

type Statement = Pick<Interaction, 'variant' | 't' | 'text' | 'subject_id' | 'object_id'>;

export function statementKey(interaction: Statement): string {
  const pair = [interaction.subject_id, interaction.object_id ?? ''].sort();
  return `${interaction.variant}|${interaction.t}|${entityKey(interaction.text)}|${pair[0]!}|${pair[1]!}`;
}

export class RecentInteractions {
  /** Insertion-ordered: the first key is the oldest. */
  private readonly keys = new Set<string>();

  constructor(private readonly capacity = 65_536) {}

  /**
   * The interactions whose statement has not been claimed yet, in their order; their keys are
   * claimed now, so a concurrent call with the same statement gets nothing for it. Pass the result
   * to `release` if writing it fails, so a retry writes it again.
   */
  claim<T extends Statement>(interactions: readonly T[]): T[] {
    const fresh: T[] = [];
    for (const interaction of interactions) {
      const key = statementKey(interaction);
      if (this.keys.has(key)) continue;
      this.keys.add(key);
      fresh.push(interaction);
    }
    while (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value!);
    return fresh;
  }

  release(interactions: readonly Statement[]): void {
    for (const interaction of interactions) this.keys.delete(statementKey(interaction));
  }
}

/**
 * Interactions already written, remembered by what they say rather than by id, so the same statement
 * is one record however many calls found it:
 *
 * - the overlap of consecutive chunks: windows share sentences (chunk-article.ts), so a tuple cut
 *   from a shared sentence comes out of both chunks, with the same time;
 * - both directions of one link: "Biden met Macron in Paris" is the same statement whether it was
 *   extracted for Biden (object Macron) or for Macron (object Biden). The entity filter matches an
 *   interaction by subject or object, so one record serves both entities' timelines and questions,
 *   and a second would only take a place of the top k from something else;
 * - M2: two batches of a pair that share a date, or an early (quiet-stream) extraction of a batch
 *   and the extraction of the whole batch (batch-rounds.ts).
 *
 * The key is the variant, the time, the text's normalised key and the unordered pair of entities. M1
 * and M2 are kept apart: they are two methods whose outputs are compared.
 *
 * What a record cites does not depend on which call came first: each call's record is a
 * contribution, and the record written is the merge of every contribution so far — the chunks (and
 * their articles and URLs) of all of them, the text and title of the contribution whose chunks sort
 * first. A contribution that adds nothing writes nothing; one that adds a chunk or a source writes
 * the merged record again under the same id (an overwrite downstream). So the last record written for
 * a statement is the same whatever order the calls finished in, and a replay that extracts the same
 * chunks ends with the same documents. The id and direction are those of the first contribution:
 * when both directions of one link give the same words, which direction is kept depends on which
 * call finished first (ids are made from the directed pair, interaction-extractor.ts).
 *
 * Bounded: the last `capacity` statements are kept (an overlap, a mirrored pair or a batch's second
 * extraction is found soon after the first); a statement seen again after that is written again
 * with what that call found, under its deterministic id.
 */
import type { Interaction } from '../../schemas/records.generated.js';
import { entityKey } from '../markup/entity-id.js';

type Statement = Pick<Interaction, 'variant' | 't' | 'text' | 'subject_id' | 'object_id'>;

export function statementKey(interaction: Statement): string {
  const pair = [interaction.subject_id, interaction.object_id ?? ''].sort();
  return `${interaction.variant}|${interaction.t}|${entityKey(interaction.text)}|${pair[0]!}|${pair[1]!}`;
}

/** What one call (one chunk for M1, one date of one batch for M2) says a statement rests on. */
interface Contribution {
  text: string;
  title: string;
  chunkIds: string[];
  articleIds: string[];
  urls: string[];
  extractedAt: number;
}

interface Remembered {
  /** The first contribution's record: id, direction, names, variant, model. */
  first: Interaction;
  /** By chunk ids: a call on the same chunks again (a re-emitted survivor) adds its sources to its own. */
  contributions: Map<string, Contribution>;
  /** The merged record last handed out, undefined when its write failed (or none was). */
  written: Interaction | undefined;
}

const MAX_URLS = 10;

/** The URLs an interaction cites: the one a citation shows first, the others sorted, ten at most. */
export function citationUrls(first: string | undefined, urls: readonly string[]): string[] {
  const rest = [...new Set(urls)].filter((u) => u !== first).sort();
  return (first === undefined ? rest : [first, ...rest]).slice(0, MAX_URLS);
}

const contributionKey = (interaction: Interaction): string => interaction.chunk_ids.join('\u0000');

function sameRecord(a: Interaction, b: Interaction): boolean {
  const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return (
    a.text === b.text &&
    a.title === b.title &&
    same(a.chunk_ids, b.chunk_ids) &&
    same(a.article_ids, b.article_ids) &&
    same(a.urls, b.urls)
  );
}

/**
 * The record of a statement from all its contributions, the same whatever order they came in: the
 * chunks and articles of all, sorted; the URL a citation shows (the first: the own article of the
 * chunk that sorts first) and the text and title of the contribution whose chunks sort first; the
 * other URLs sorted. A call's own record is already in this form (interaction-extractor.ts), so one
 * contribution gives the record the extractor made.
 */
function mergedRecord(remembered: Remembered): Interaction {
  const contributions = [...remembered.contributions]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, c]) => c);
  const primary = contributions[0]!;
  return {
    ...remembered.first,
    text: primary.text,
    title: primary.title,
    chunk_ids: [...new Set(contributions.flatMap((c) => c.chunkIds))].sort(),
    article_ids: [...new Set(contributions.flatMap((c) => c.articleIds))].sort(),
    urls: citationUrls(
      primary.urls[0],
      contributions.flatMap((c) => c.urls),
    ),
    extracted_at: Math.max(...contributions.map((c) => c.extractedAt)),
  };
}

export class RecentInteractions {
  /** Insertion-ordered: the first key is the oldest. */
  private readonly statements = new Map<string, Remembered>();

  constructor(private readonly capacity = 65_536) {}

  /**
   * The records to write for these interactions, in their order: a new statement's record, or a
   * known statement's record merged with what this call added; nothing for a call that added
   * nothing. Handed-out records count as written: pass them to `release` if writing fails, so the
   * retry writes them again.
   */
  claim(interactions: readonly Interaction[]): Interaction[] {
    const out = new Map<string, Interaction>();
    for (const interaction of interactions) {
      const key = statementKey(interaction);
      let remembered = this.statements.get(key);
      if (!remembered) {
        remembered = { first: interaction, contributions: new Map(), written: undefined };
        this.statements.set(key, remembered);
      }
      const ckey = contributionKey(interaction);
      const before = remembered.contributions.get(ckey);
      remembered.contributions.set(ckey, {
        text: before?.text ?? interaction.text,
        title: before?.title ?? interaction.title,
        chunkIds: interaction.chunk_ids,
        articleIds: [...new Set([...(before?.articleIds ?? []), ...interaction.article_ids])],
        urls: citationUrls(before?.urls[0] ?? interaction.urls[0], [...(before?.urls ?? []), ...interaction.urls]),
        extractedAt: Math.max(before?.extractedAt ?? 0, interaction.extracted_at),
      });
      const merged = mergedRecord(remembered);
      if (remembered.written !== undefined && sameRecord(remembered.written, merged)) continue;
      remembered.written = merged;
      out.set(key, merged);
    }
    while (this.statements.size > this.capacity) this.statements.delete(this.statements.keys().next().value!);
    return [...out.values()];
  }

  /** Records whose write failed: the next call with their statement writes the merged record again. */
  release(records: readonly Interaction[]): void {
    for (const record of records) {
      const remembered = this.statements.get(statementKey(record));
      if (remembered) remembered.written = undefined;
    }
  }
}

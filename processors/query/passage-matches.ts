/**
 * Matching statements through their passages. A statement is one sentence; the words a question
 * shares with the news, and much of what it is about, are often in the sentences around it, in the
 * chunk it was extracted from. So over the interactions store a search runs on the statements
 * themselves and on the chunks they came from: each statement of a matched chunk takes its chunk's
 * match, and each pair of lists (dense, lexical) becomes one list, each statement at the better of
 * its own match and its passage's. The items are still statements, one per passage (the retriever
 * keeps the best-ranked), read with their passage.
 *
 * - `relative` (BM25): scores of two indices are not on one scale (document lengths and word
 *   rarities differ), so each list's scores are divided by its best first: the merged score is a
 *   share of the best match, in (0, 1].
 * - `raw` (cosine): both lists score the query's vector against vectors of one model, (1 + cos) / 2:
 *   the merged score is the better similarity as it is.
 *
 * Pure; no I/O.
 */
import type { ListedDocument } from './fuse-rankings.js';

/** How two lists' scores are put on one scale before the better is taken (see above). */
export type PassageScale = 'relative' | 'raw';

/** Which of a search's lists match statements through their passages too. */
export const PASSAGE_MATCHES = ['none', 'lexical', 'hybrid'] as const;
export type PassageMatch = (typeof PASSAGE_MATCHES)[number];

/** A statement found under a chunk: its id and the chunks it was extracted from. */
export interface PassageStatement {
  id: string;
  chunkIds: readonly string[];
}

/**
 * One list from the statements' own matches (`own`, best first) and their chunks' (`passages`, best
 * first, ids of chunks), on one scale (`scale`). A statement under several matched chunks takes the
 * best of them. Ties keep the statement's own match first, then the order of the passages, then the
 * statement id: the order is deterministic.
 */
export function mergePassageMatches(
  own: readonly ListedDocument[],
  passages: readonly ListedDocument[],
  statements: readonly PassageStatement[],
  scale: PassageScale = 'relative',
): ListedDocument[] {
  const scaled = (list: readonly ListedDocument[]): Map<string, number> => {
    const best = Math.max(0, ...list.map((d) => d.score));
    const scores = new Map<string, number>();
    for (const d of list) {
      if (!scores.has(d.id)) scores.set(d.id, scale === 'raw' ? d.score : best > 0 ? d.score / best : 0);
    }
    return scores;
  };
  const ownScore = scaled(own);
  const passageScore = scaled(passages);
  const passageRank = new Map(passages.map((d, i) => [d.id, i]));
  const merged = new Map<string, { score: number; own: number; rank: number }>();
  for (const [id, score] of ownScore) merged.set(id, { score, own: score, rank: Number.POSITIVE_INFINITY });
  for (const statement of statements) {
    for (const chunkId of statement.chunkIds) {
      const score = passageScore.get(chunkId);
      if (score === undefined) continue;
      const known = merged.get(statement.id) ?? { score: 0, own: 0, rank: Number.POSITIVE_INFINITY };
      known.score = Math.max(known.score, score);
      known.rank = Math.min(known.rank, passageRank.get(chunkId)!);
      merged.set(statement.id, known);
    }
  }
  return [...merged]
    .sort(([a, x], [b, y]) => y.score - x.score || y.own - x.own || x.rank - y.rank || a.localeCompare(b))
    .map(([id, { score }]) => ({ id, score }));
}

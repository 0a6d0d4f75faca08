/**
 * Which retrieved documents a later revision of their article has replaced, as of a time. An
 * article republished under the same id with a higher version (Article.version: a correction, an
 * update, changed text at the same URL) is cut into chunks of its own (`<article>:v<version>:<index>`),
 * so the older version's chunks stay in the datastore beside them, where answers as of earlier dates
 * still need them. As of a time at or after a later version's first report, the older version's
 * chunks, and the statements extracted from them only, are superseded: left out of the answer.
 *
 * An article of another id that corrects or retracts an earlier one and names it by its URL
 * (detect-correction.ts) supersedes it the same way from the correction's own time on.
 *
 * Decided when reading rather than written onto the old documents: it depends on nothing but what is
 * stored by then, so it is the same whatever order the versions were indexed in, on a replay, and on
 * both datastores. Pure.
 */

import { comparableUrl } from '../index/detect-correction.js';

/** One revision of one article. */
export interface Revision {
  articleId: string;
  version: number;
}

/** The fields of a stored document this needs (a structural subset of the datastores' documents). */
export interface RevisedDocument {
  id: string;
  kind: 'chunk' | 'interaction';
  article_id?: string;
  article_version?: number;
  chunk_ids?: readonly string[];
  /** Chunks: their own article's URL first; statements: their articles' URLs. */
  urls?: readonly string[];
}

const CHUNK_ID = /^(.+):v(\d+):(\d+)$/;

/** The article and version a chunk id names (`<article>:v<version>:<index>`); undefined for other ids. */
export function chunkRevision(chunkId: string): Revision | undefined {
  const match = CHUNK_ID.exec(chunkId);
  if (match === null) return undefined;
  const version = Number(match[2]);
  return Number.isSafeInteger(version) && version >= 1 ? { articleId: match[1]!, version } : undefined;
}

/**
 * The revisions a document's content comes from: a chunk's own (its fields, else its id; version 1
 * when neither says), an interaction's the chunks it was extracted from (none when their ids do not
 * name a version: such a statement is never superseded).
 */
export function revisionsOf(document: RevisedDocument): Revision[] {
  if (document.kind === 'chunk') {
    const fromId = chunkRevision(document.id);
    const articleId = document.article_id ?? fromId?.articleId;
    if (articleId === undefined) return [];
    return [{ articleId, version: document.article_version ?? fromId?.version ?? 1 }];
  }
  return (document.chunk_ids ?? []).flatMap((id) => {
    const revision = chunkRevision(id);
    return revision === undefined ? [] : [revision];
  });
}

/**
 * The ids of the documents whose every revision has a later version among `later` (the revisions
 * first reported by the time asked about): a statement drawn from chunks of two articles stays while
 * one of them is current.
 */
export function supersededIds(documents: readonly RevisedDocument[], later: readonly Revision[]): Set<string> {
  const latest = new Map<string, number>();
  for (const { articleId, version } of later) latest.set(articleId, Math.max(version, latest.get(articleId) ?? 0));
  const superseded = new Set<string>();
  for (const document of documents) {
    const revisions = revisionsOf(document);
    if (revisions.length > 0 && revisions.every((r) => (latest.get(r.articleId) ?? 0) > r.version)) {
      superseded.add(document.id);
    }
  }
  return superseded;
}

/** The articles whose later versions could supersede some of `documents`, and the least such version. */
export function revisionQuery(
  documents: readonly RevisedDocument[],
): { articleIds: string[]; minVersion: number } | undefined {
  const revisions = documents.flatMap(revisionsOf);
  if (revisions.length === 0) return undefined;
  return {
    articleIds: [...new Set(revisions.map((r) => r.articleId))].sort(),
    minVersion: Math.min(...revisions.map((r) => r.version)) + 1,
  };
}

/**
 * The articles a document reports from, by comparable URL, as corrections name them: a chunk's own
 * article (its first URL; the others are near-duplicates merged into it, which a correction of one
 * publisher does not withdraw), a statement's articles.
 */
export function reportedUrls(document: RevisedDocument): string[] {
  const urls = document.kind === 'chunk' ? (document.urls ?? []).slice(0, 1) : (document.urls ?? []);
  return [...new Set(urls.map(comparableUrl).filter((url): url is string => url !== undefined))];
}

/**
 * The ids of the documents every article of which a later correction or retraction names (the
 * corrections first reported by the time asked about, with the URLs they name): the corrected report
 * is left out and the correction answers instead; a retracted one is withdrawn.
 */
export function correctedIds(
  documents: readonly RevisedDocument[],
  corrections: readonly { corrects_urls?: readonly string[] }[],
): Set<string> {
  const named = new Set(corrections.flatMap((c) => c.corrects_urls ?? []));
  const corrected = new Set<string>();
  for (const document of documents) {
    const urls = reportedUrls(document);
    if (urls.length > 0 && urls.every((url) => named.has(url))) corrected.add(document.id);
  }
  return corrected;
}

/**
 * The documents of the two datastores, built from topic records plus their vector. Pure; the index
 * stages bind them to Elasticsearch. Ids are the records' own deterministic ids, so a replay
 * overwrites (idempotent on `_id`).
 */
import type { Chunk, Interaction } from '../../schemas/records.generated.js';
import { chunkRevision } from '../query/supersede-revisions.js';
import { detectCorrection } from './detect-correction.js';

export function publishedDay(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

/** Elasticsearch takes plain arrays; rounding to float32 precision keeps the request small. */
function plain(vector: Float32Array): number[] {
  return Array.from(vector, (x) => Math.round(x * 1e7) / 1e7);
}

/**
 * Every distinct time a chunk was reported, ascending, the first its own `t`: dedupe merges each
 * near-duplicate's article into the survivor's provenance, so a story reported again on later days
 * keeps all of them (NEON §2.1). A merged report with a time before `t` (a duplicate that reached
 * dedupe after the survivor although published earlier) counts as of `t`: the document is stored in
 * the month of `t`, and searches rely on no report preceding it when they skip months.
 */
export function chunkReportTimes(chunk: Chunk): number[] {
  const later = chunk.provenance.map((p) => p.published_at).filter((t) => t > chunk.t);
  return [chunk.t, ...new Set(later)].sort((a, b) => a - b);
}

export function chunkDocument(chunk: Chunk, vector: Float32Array, model: string, now: number): Record<string, unknown> {
  const own = chunk.provenance.find((p) => p.article_id === chunk.article_id) ?? chunk.provenance[0];
  // A correction or retraction of an earlier article of the same publisher, named by its URL: retrieval
  // leaves that article out of answers as of this chunk's time (detect-correction.ts).
  const correction =
    own === undefined
      ? undefined
      : detectCorrection({ title: chunk.title, text: chunk.text, ownUrl: own.url, first: chunk.index === 0 });
  return {
    id: chunk.id,
    kind: 'chunk',
    text: chunk.text,
    title: chunk.title,
    marked_text: chunk.marked_text,
    published_at: chunk.t,
    published_day: publishedDay(chunk.t),
    // What time filters and temporal ranking read: a report inside a window finds the chunk there.
    reported_at: chunkReportTimes(chunk),
    article_id: chunk.article_id,
    // The article's revision (named by the chunk id): a later one supersedes it as of its own time.
    article_version: chunkRevision(chunk.id)?.version ?? 1,
    chunk_index: chunk.index,
    entity_ids: chunk.entity_ids,
    entity_names: chunk.entities.map((e) => e.name),
    article_ids: [...new Set(chunk.provenance.map((p) => p.article_id))],
    // The chunk's own article first: the link a citation shows.
    urls: [...new Set([own?.url, ...chunk.provenance.map((p) => p.url)].filter((u): u is string => !!u))],
    sources: [...new Set(chunk.provenance.map((p) => p.source))],
    provenance: chunk.provenance.map((p) => ({ ...p })),
    ...(correction === undefined ? {} : { corrects_urls: correction.urls, correction: correction.kind }),
    embedding: plain(vector),
    embedding_model: model,
    indexed_at: now,
  };
}

export function interactionDocument(
  interaction: Interaction,
  vector: Float32Array,
  model: string,
  now: number,
): Record<string, unknown> {
  return {
    id: interaction.id,
    kind: 'interaction',
    text: interaction.text,
    published_at: interaction.t,
    published_day: publishedDay(interaction.t),
    // One report: written the same way as a chunk's, so both datastores filter both kinds alike.
    reported_at: [interaction.t],
    subject_id: interaction.subject_id,
    subject_name: interaction.subject_name,
    object_id: interaction.object_id,
    object_name: interaction.object_name,
    title: interaction.title,
    entity_ids: [interaction.subject_id, ...(interaction.object_id === null ? [] : [interaction.object_id])],
    variant: interaction.variant,
    chunk_ids: interaction.chunk_ids,
    article_ids: interaction.article_ids,
    urls: interaction.urls,
    sources: [],
    model: interaction.model,
    extracted_at: interaction.extracted_at,
    embedding: plain(vector),
    embedding_model: model,
    indexed_at: now,
  };
}

/**
 * What is embedded for an interaction: its text. NEON writes the date into each datastore entry
 * ("(20230831, Doja Cat collaborates with …)"); with `dateInText` it is written the same way, but by
 * default it is left out: time enters the ranking (as-of filter, TempRALM, recency) instead, since a
 * date in every text makes dense similarity match dates rather than subjects (measured in the README).
 */
export function interactionEmbeddingText(interaction: Interaction, options: { dateInText?: boolean } = {}): string {
  return options.dateInText ? `${publishedDay(interaction.t)}: ${interaction.text}` : interaction.text;
}

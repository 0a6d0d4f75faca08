/**
 * Which entity each `<e>…</e>` mention of a chunk stands for.
 *
 * A chunk carries its marked text and the canonical entities it mentions (E′), but not which mention
 * is which entity: a mention may be the canonical name ("Jared Leto"), a shorter alias ("Leto") or a
 * variant spelling. Extraction needs the link twice — to ground an object the LLM names, and to find
 * the clauses that join two entities offline — so it is resolved here, by the same keys markup
 * compares names with.
 */
import type { Chunk, ChunkEntity } from '../../schemas/records.generated.js';
import { entityKey, keyTokens } from '../markup/entity-id.js';
import { CLOSE_TAG, OPEN_TAG, unescapeMarkup } from '../markup/render-markup.js';

export interface MarkedSpan {
  /** The mention as written, unescaped. */
  surface: string;
  /** Offsets of the mention in `MarkedText.plain`. */
  start: number;
  end: number;
  /** The chunk entity it resolves to; undefined when no entity of the chunk matches. */
  entity: ChunkEntity | undefined;
}

export interface MarkedText {
  /** The chunk text without markup (what offsets point into). */
  plain: string;
  spans: MarkedSpan[];
}

/**
 * The chunk entity a surface names: the one whose canonical key equals the surface's key, else the
 * only one whose name contains every word of the surface ("Leto" → "Jared Leto"). A surface two
 * entities could claim resolves to neither: a wrong link would put words in someone else's mouth.
 */
export function resolveSurface(surface: string, entities: readonly ChunkEntity[]): ChunkEntity | undefined {
  const key = entityKey(surface);
  if (key.length === 0) return undefined;
  const exact = entities.find((e) => entityKey(e.name) === key);
  if (exact) return exact;
  const words = keyTokens(surface);
  const containing = entities.filter((e) => {
    const name = new Set(keyTokens(e.name));
    return words.every((w) => name.has(w));
  });
  return containing.length === 1 ? containing[0] : undefined;
}

/** Parses `<e>…</e>` markup (as markup renders it: escaped text, no nested tags) into spans. */
export function parseMarkedText(marked: string, entities: readonly ChunkEntity[]): MarkedText {
  const spans: MarkedSpan[] = [];
  let plain = '';
  let at = 0;
  while (at < marked.length) {
    const open = marked.indexOf(OPEN_TAG, at);
    if (open < 0) {
      plain += unescapeMarkup(marked.slice(at));
      break;
    }
    plain += unescapeMarkup(marked.slice(at, open));
    const close = marked.indexOf(CLOSE_TAG, open + OPEN_TAG.length);
    if (close < 0) {
      // An unclosed tag is text, not a mention.
      plain += unescapeMarkup(marked.slice(open));
      break;
    }
    const surface = unescapeMarkup(marked.slice(open + OPEN_TAG.length, close));
    const start = plain.length;
    plain += surface;
    spans.push({ surface, start, end: plain.length, entity: resolveSurface(surface, entities) });
    at = close + CLOSE_TAG.length;
  }
  return { plain, spans };
}

export function markedTextOf(chunk: Pick<Chunk, 'marked_text' | 'entities'>): MarkedText {
  return parseMarkedText(chunk.marked_text, chunk.entities);
}

/** Every surface the chunk uses for `entityId` (its canonical name always among them). */
export function surfacesOf(entityId: string, chunk: Pick<Chunk, 'marked_text' | 'entities'>): string[] {
  const entity = chunk.entities.find((e) => e.id === entityId);
  const surfaces = new Set<string>(entity ? [entity.name] : []);
  for (const span of markedTextOf(chunk).spans) if (span.entity?.id === entityId) surfaces.add(span.surface);
  return [...surfaces];
}

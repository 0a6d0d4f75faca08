/**
 * Grounding: a tuple the LLM wrote is kept only if the chunks it came from back it.
 *
 * - **Object**: an M1 object must name an entity marked in the chunk (by its canonical name or a
 *   surface the chunk uses for it, resolved as markup resolves names); anything else — an entity the
 *   snippet only mentions unmarked, one the model invented, one an injected line asked for — is
 *   refused (`ungrounded_object`). M2's object is the pair's, fixed before the call.
 * - **Text**: most of its content words must occur in the chunks (`unsupported_text`). Words are
 *   compared by their first five letters, so "dressed" matches "dress" and "collaborates" matches
 *   "collaboration": the prompt asks for as few words as possible, which means paraphrase, not
 *   invention.
 * - **Subject**: a line that does not name the subject is kept with the subject's name in front, so
 *   every interaction in the datastore reads on its own ("Doja Cat: dressed as Choupette").
 * - **Duplicates**: the same text (by its comparison key) for the same object is kept once.
 */
import type { Chunk, ChunkEntity } from '../../schemas/records.generated.js';
import { entityKey } from '../markup/entity-id.js';
import { markedTextOf, resolveSurface, surfacesOf } from './marked-spans.js';
import type { M1Item, M2Item } from './parse-extraction-reply.js';

export const REJECT_REASONS = ['ungrounded_object', 'unsupported_text', 'duplicate'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export interface GroundedTuple {
  object: ChunkEntity | null;
  text: string;
}

export interface Grounded {
  tuples: GroundedTuple[];
  rejected: Partial<Record<RejectReason, number>>;
}

export interface GroundingOptions {
  /** Share of a text's content words that must occur in the chunks. */
  minSupport: number;
}

export const DEFAULT_GROUNDING: GroundingOptions = { minSupport: 0.6 };

const STOPWORDS = new Set(
  (
    'the and for with from that this was were has have had its his her their they them into onto over ' +
    'after before about also been being but not are will would could should which who whom whose what ' +
    'when where while than then there these those said says per via'
  ).split(' '),
);
const STEM = 5;

function contentWords(text: string): string[] {
  return entityKey(text)
    .split(' ')
    .filter((w) => w.length >= 3 && !STOPWORDS.has(w));
}

/** The stems of every word of the chunks, to check a text's words against. */
function vocabulary(chunks: readonly Pick<Chunk, 'marked_text' | 'entities'>[]): Set<string> {
  const stems = new Set<string>();
  for (const chunk of chunks) {
    for (const word of entityKey(markedTextOf(chunk).plain).split(' ')) stems.add(word.slice(0, STEM));
  }
  return stems;
}

function supported(text: string, stems: ReadonlySet<string>, options: GroundingOptions): boolean {
  const words = contentWords(text);
  if (words.length === 0) return false;
  const found = words.filter((w) => stems.has(w.slice(0, STEM))).length;
  return found / words.length >= options.minSupport;
}

function names(text: string, surfaces: readonly string[]): boolean {
  const padded = ` ${entityKey(text)} `;
  return surfaces.some((surface) => {
    const key = entityKey(surface);
    return key.length > 0 && padded.includes(` ${key} `);
  });
}

/** Collapses whitespace and trailing punctuation, and puts the subject in front when the line omits it. */
function finish(text: string, subject: ChunkEntity, subjectSurfaces: readonly string[]): string {
  const line = text
    .replace(/\s+/g, ' ')
    .replace(/^[-*•\d.)\s]+/, '')
    .replace(/[.;,\s]+$/, '')
    .trim();
  return names(line, subjectSurfaces) ? line : `${subject.name}: ${line}`;
}

class TupleCollector {
  readonly tuples: GroundedTuple[] = [];
  readonly rejected: Partial<Record<RejectReason, number>> = {};
  private readonly seen = new Set<string>();

  reject(reason: RejectReason): void {
    this.rejected[reason] = (this.rejected[reason] ?? 0) + 1;
  }

  keep(tuple: GroundedTuple): void {
    const key = `${tuple.object?.id ?? ''}|${entityKey(tuple.text)}`;
    if (this.seen.has(key)) return this.reject('duplicate');
    this.seen.add(key);
    this.tuples.push(tuple);
  }
}

export function groundM1(
  items: readonly M1Item[],
  subject: ChunkEntity,
  chunk: Pick<Chunk, 'marked_text' | 'entities'>,
  options: GroundingOptions = DEFAULT_GROUNDING,
): Grounded {
  const stems = vocabulary([chunk]);
  const subjectSurfaces = surfacesOf(subject.id, chunk);
  const spans = markedTextOf(chunk).spans;
  const out = new TupleCollector();
  for (const item of items) {
    let object: ChunkEntity | null = null;
    if (item.object !== null && item.object.length > 0 && item.object.toLowerCase() !== 'null') {
      // The object as marked ("Leto") or by its canonical name ("Jared Leto"); the subject itself is no object.
      const marked = spans.find((s) => entityKey(s.surface) === entityKey(item.object!))?.entity;
      const resolved = marked ?? resolveSurface(item.object, chunk.entities);
      if (!resolved || !spans.some((s) => s.entity?.id === resolved.id)) {
        out.reject('ungrounded_object');
        continue;
      }
      object = resolved.id === subject.id ? null : resolved;
    }
    if (!supported(item.text, stems, options)) {
      out.reject('unsupported_text');
      continue;
    }
    out.keep({ object, text: finish(item.text, subject, subjectSurfaces) });
  }
  return { tuples: out.tuples, rejected: out.rejected };
}

export function groundM2(
  items: readonly M2Item[],
  subject: ChunkEntity,
  object: ChunkEntity,
  chunks: readonly Pick<Chunk, 'marked_text' | 'entities'>[],
  options: GroundingOptions = DEFAULT_GROUNDING,
): Grounded {
  const stems = vocabulary(chunks);
  const subjectSurfaces = [...new Set(chunks.flatMap((c) => surfacesOf(subject.id, c)))];
  const out = new TupleCollector();
  for (const item of items) {
    if (!supported(item.text, stems, options)) {
      out.reject('unsupported_text');
      continue;
    }
    out.keep({ object, text: finish(item.text, subject, subjectSurfaces) });
  }
  return { tuples: out.tuples, rejected: out.rejected };
}

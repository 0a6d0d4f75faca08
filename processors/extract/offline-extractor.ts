/**
 * Interactions without an LLM: NEON M1-style tuples cut from the marked sentences themselves, so the
 * product works end to end with no key (the embedded default) and every tuple is grounded by
 * construction — its words are the chunk's words.
 *
 * For a subject s, each sentence mentioning s gives:
 * - per other marked entity o of the sentence, the clause linking them: the text from the earlier of
 *   the two mentions to the end of the later one, if words join them within one clause (no `,` `;`
 *   or quote mark between them, at most `maxWords` words); the shortest such clause per (s, o) is kept;
 * - if no sentence links s to anyone, one subject-only tuple: the clause that starts at s's mention.
 * Compression is by cutting, never by rewriting: parenthetical asides are dropped, whitespace is
 * collapsed, and a clause that starts with an alias of s ("Leto") starts with s's canonical name.
 * Deterministic: the same chunk always gives the same tuples, in text order.
 */
import type { Chunk } from '../../schemas/records.generated.js';
import { splitSentences, type TextRange } from '../markup/split-sentences.js';
import { markedTextOf, type MarkedSpan } from './marked-spans.js';

export const OFFLINE_EXTRACTOR_MODEL = 'neon-offline-extractor/1';

export interface OfflineTuple {
  objectId: string | null;
  objectName: string | null;
  text: string;
}

export interface OfflineExtractorOptions {
  /** Longest clause kept, in words. */
  maxWords: number;
  /** Most tuples per subject and chunk. */
  maxTuples: number;
}

const DEFAULTS: OfflineExtractorOptions = { maxWords: 24, maxTuples: 8 };

/** "X and Y" lists two entities; it says nothing about what joins them. */
const COORDINATORS = new Set(['and', 'or', 'nor']);

const words = (text: string): number => (text.match(/\S+/g) ?? []).length;

/** Whitespace collapsed, asides in brackets dropped, stray punctuation trimmed from both ends. */
function compress(text: string): string {
  return text
    .replace(/\s*\([^()]*\)/g, '')
    .replace(/\s+/g, ' ')
    .replace(/^[\s,;:.!?"“”'‘’—–-]+/, '')
    .replace(/[\s,;:!?"“”'‘’—–-]+$/, '')
    .trim();
}

/** The clause from `from` to `to` of the plain text, with the subject named canonically at its start. */
function clause(plain: string, from: number, to: number, subjectSpan: MarkedSpan, subjectName: string): string {
  const text = plain.slice(from, to);
  const named = from === subjectSpan.start ? subjectName + text.slice(subjectSpan.end - subjectSpan.start) : text;
  return compress(named);
}

interface AnalysedChunk {
  /** The marked text this was worked out from: a chunk object changed since is analysed again. */
  markedText: string;
  plain: string;
  spans: MarkedSpan[];
  sentences: TextRange[];
}

/**
 * A chunk's plain text, spans and sentences, worked out once: every target subject of a chunk is
 * extracted from the same chunk object, and splitting it into sentences is most of the cost.
 */
const analysed = new WeakMap<Pick<Chunk, 'marked_text' | 'entities'>, AnalysedChunk>();

function analyse(chunk: Pick<Chunk, 'marked_text' | 'entities'>): AnalysedChunk {
  const known = analysed.get(chunk);
  if (known?.markedText === chunk.marked_text) return known;
  const { plain, spans } = markedTextOf(chunk);
  const fresh = { markedText: chunk.marked_text, plain, spans, sentences: splitSentences(plain) };
  analysed.set(chunk, fresh);
  return fresh;
}

export function extractOffline(
  subjectId: string,
  chunk: Pick<Chunk, 'marked_text' | 'entities'>,
  options: Partial<OfflineExtractorOptions> = {},
): OfflineTuple[] {
  const { maxWords, maxTuples } = { ...DEFAULTS, ...options };
  const subject = chunk.entities.find((e) => e.id === subjectId);
  if (!subject) return [];
  const { plain, spans, sentences } = analyse(chunk);
  const linked = new Map<string, { tuple: OfflineTuple; at: number }>();
  let alone: { tuple: OfflineTuple; at: number } | undefined;

  for (const sentence of sentences) {
    const inside = spans.filter((s) => s.start >= sentence.start && s.end <= sentence.end && s.entity);
    const subjectSpans = inside.filter((s) => s.entity!.id === subjectId);
    for (const mention of subjectSpans) {
      for (const other of inside) {
        const object = other.entity!;
        if (object.id === subjectId) continue;
        const [from, to] = other.start < mention.start ? [other.start, mention.end] : [mention.start, other.end];
        const between = plain.slice(Math.min(mention.end, other.end), Math.max(mention.start, other.start));
        // A link is words within one clause: "X met Y", not "X, Y" or "X and Y" (a list, an apposition) nor a quote's edge.
        const linking = (between.match(/\p{L}{2,}/gu) ?? []).filter((w) => !COORDINATORS.has(w.toLowerCase()));
        if (/[,;"“”]/.test(between) || linking.length === 0) continue;
        const text = clause(plain, from, to, mention, subject.name);
        if (words(text) > maxWords || words(text) < 2) continue;
        const known = linked.get(object.id);
        if (known && words(known.tuple.text) <= words(text)) continue;
        linked.set(object.id, { tuple: { objectId: object.id, objectName: object.name, text }, at: from });
      }
      if (alone === undefined) {
        // The clause that starts at the subject: up to the next clause break or the sentence end.
        const rest = plain.slice(mention.end, sentence.end);
        const stop = rest.search(/[,;:]|\s[—–-]\s/);
        const end = mention.end + (stop < 0 ? rest.length : stop);
        const text = clause(plain, mention.start, end, mention, subject.name);
        const cut = text.split(' ').slice(0, maxWords).join(' ');
        if (words(cut) >= words(subject.name) + 2)
          alone = { tuple: { objectId: null, objectName: null, text: compress(cut) }, at: mention.start };
      }
    }
  }

  const chosen = linked.size > 0 ? [...linked.values()] : alone ? [alone] : [];
  const seen = new Set<string>();
  return chosen
    .sort((a, b) => a.at - b.at || a.tuple.text.localeCompare(b.tuple.text))
    .map((c) => c.tuple)
    .filter((t) => {
      const key = `${t.objectId ?? ''}|${t.text.toLowerCase()}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, maxTuples);
}

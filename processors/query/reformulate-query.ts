/**
 * NEON §2.3 step 2: q′ = REFORM(t_q, q) — the query with its entities disambiguated to their
 * canonical names and the query date written out in words ("Doja Cat news, August 31, 2023"), as
 * shown to people; and what the two retrievers search for: the embedded text (without the date
 * unless asked: time enters the ranking instead) and the words of lexical search.
 */
import { searchWords } from './question-terms.js';

export interface LinkableEntity {
  id: string;
  name: string;
  aliases: readonly string[];
  /** How often it was mentioned: the tie-breaker when one alias names several entities. */
  mentions: number;
}

export interface LinkedEntity {
  id: string;
  name: string;
  /** The words of the query that named it. */
  surface: string;
}

const MAX_ALIAS_WORDS = 6;

function normalise(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Alias → entity, the most mentioned entity winning an alias several share. */
export class EntityLinker {
  private readonly byAlias = new Map<string, LinkableEntity>();

  constructor(entities: Iterable<LinkableEntity> = []) {
    for (const entity of entities) this.add(entity);
  }

  add(entity: LinkableEntity): void {
    for (const alias of new Set([entity.name, ...entity.aliases])) {
      const key = normalise(alias);
      // One-letter and purely numeric aliases link too much to be useful in a query.
      if (key.length < 2 || /^\d+$/.test(key)) continue;
      const known = this.byAlias.get(key);
      if (!known || known.mentions < entity.mentions || known.id === entity.id) this.byAlias.set(key, entity);
    }
  }

  get size(): number {
    return this.byAlias.size;
  }

  /** The entities the query names, longest match first, left to right, without overlaps. */
  link(query: string): LinkedEntity[] {
    const words = query.split(/\s+/).filter((w) => w !== '');
    const keys = words.map(normalise);
    const linked: LinkedEntity[] = [];
    for (let i = 0; i < words.length;) {
      let matched = 0;
      for (let n = Math.min(MAX_ALIAS_WORDS, words.length - i); n >= 1; n--) {
        const key = keys
          .slice(i, i + n)
          .filter((k) => k !== '')
          .join(' ');
        const entity = key === '' ? undefined : this.byAlias.get(key);
        if (entity) {
          if (!linked.some((l) => l.id === entity.id)) {
            linked.push({ id: entity.id, name: entity.name, surface: words.slice(i, i + n).join(' ') });
          }
          matched = n;
          break;
        }
      }
      i += Math.max(matched, 1);
    }
    return linked;
  }
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** "August 31, 2023" (UTC). */
export function spellDate(t: number): string {
  const d = new Date(t);
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()}`;
}

export interface Reformulated {
  /** q′ as NEON writes it: the question with canonical entity names and the query date spelled out. */
  text: string;
  /** What the dense retriever embeds: q′ with or without the date (see `ReformulateOptions`). */
  embedded: string;
  /** What lexical search matches: the question's words and the canonical names of its entities. */
  lexical: string;
  /**
   * The question's topic with every word and the aliases it used: what answer sentences are read
   * against, whatever lexical search looks for (its question word says what kind of answer is asked).
   */
  asked: string;
  entities: LinkedEntity[];
}

export interface ReformulateOptions {
  /**
   * Write the query date into the embedded text, as NEON's q′ does. Off by default: time enters the
   * ranking (filters, TempRALM, recency) instead, because a date in both the query and the documents'
   * texts makes dense similarity match dates rather than subjects.
   */
  dateInText?: boolean;
  /**
   * The question without its time words ("last week", "in March 2023"), when they were understood:
   * those words are constraints, not subject matter, and searched for they would match any text that
   * happens to name that week or month.
   */
  topic?: string;
  /**
   * What lexical search looks for: every word of the topic (`all`), or its content words only
   * (`content`: without function, question and time words, whose long posting lists cost BM25 time
   * and say nothing about the subject).
   */
  lexicalWords?: 'all' | 'content';
}

export function reformulate(
  query: string,
  tq: number,
  linker?: EntityLinker,
  options: ReformulateOptions = {},
): Reformulated {
  const entities = linker?.link(query) ?? [];
  const canonical = (text: string): string => {
    let named = text.trim();
    for (const entity of entities) {
      if (entity.surface !== entity.name) named = named.replace(entity.surface, entity.name);
    }
    return named;
  };
  const text = canonical(query);
  const topic = canonical(options.topic ?? query) || text;
  // An alias the question used ("Merz") and the canonical name ("Friedrich Merz") may both be in the
  // documents: lexical search looks for either.
  const aliases = entities.filter((e) => e.surface !== e.name && !topic.includes(e.surface)).map((e) => e.surface);
  const searched = options.lexicalWords === 'content' ? searchWords(topic).join(' ') || topic : topic;
  return {
    text: `${text}, ${spellDate(tq)}`,
    embedded: options.dateInText ? `${topic}, ${spellDate(tq)}` : topic,
    lexical: [searched, ...aliases].join(' '),
    asked: [topic, ...aliases].join(' '),
    entities,
  };
}

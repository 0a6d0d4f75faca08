/**
 * NEON §2.3 step 2: q′ = REFORM(t_q, q) — the query with its entities disambiguated to their
 * canonical names and the query date written out in words ("Doja Cat news, August 31, 2023"), so
 * that the dense retriever sees the time the question is about.
 */

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
  text: string;
  entities: LinkedEntity[];
}

export function reformulate(query: string, tq: number, linker?: EntityLinker): Reformulated {
  const entities = linker?.link(query) ?? [];
  let text = query.trim();
  for (const entity of entities) {
    if (entity.surface !== entity.name) text = text.replace(entity.surface, entity.name);
  }
  return { text: `${text}, ${spellDate(tq)}`, entities };
}

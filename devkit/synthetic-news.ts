/**
 * Synthetic news statements and questions for the retrieval benchmark, realistic for BM25: the
 * posting lists a lexical query walks, and so its cost, follow how often its words occur, so the
 * words must occur as often as in news. Words are drawn independently from the word frequencies of
 * the bundled Wikipedia Current Events sample (read at run time; ~49k words of ~8k kinds, Zipf-like:
 * "the" about 5%, most words once), statements are 10–30 words long about a subject and often an
 * object drawn from the ~3k names the sample capitalises, each as popular as it is there (the United
 * States hundreds of times, most names once). Questions are 5–12 words drawn the same way after a
 * question word, most naming an entity.
 *
 * The sample's vocabulary is small: a real million statements would hold many more rare words, whose
 * short posting lists are cheap. The frequent words, which cost a query most, are as frequent as in
 * the sample, so the lexical cost measured on these texts errs on the high side, if anything.
 *
 * Deterministic for a given random source: the same seed gives the same texts.
 */
import { readFileSync } from 'node:fs';

export const CURRENT_EVENTS_SAMPLE = new URL(
  '../samples/wikipedia-current-events-2025q1/articles.jsonl',
  import.meta.url,
);

/** Words as the sample writes them: letters and digits, with inner apostrophes, hyphens and dots. */
const WORD = /[\p{L}\p{N}](?:[\p{L}\p{N}'’.-]*[\p{L}\p{N}])?/gu;
/** Words that join a name's capitalised words ("Democratic Republic of the Congo"). */
const NAME_JOINERS = new Set(['of', 'the', 'de', 'al', 'bin']);
/** Capitalised words that open a sentence or count rather than name something. */
const NOT_NAMES = new Set(
  (
    'The A An In On At After Following During Former Over Under About Some Several Many More Most At Two Three ' +
    'Four Five Six Seven Eight Nine Ten One Dozens Hundreds Thousands It He She They This These That Those His ' +
    'Her Their Its January February March April May June July August September October November December ' +
    'Monday Tuesday Wednesday Thursday Friday Saturday Sunday President Prime Minister'
  ).split(' '),
);
const STATEMENT_WORDS = { min: 10, max: 30 } as const;
const QUESTION_WORDS = { min: 5, max: 12 } as const;
const QUESTION_OPENERS = ['Who', 'What', 'Which', 'Where', 'Why', 'How', 'How many', 'Did', 'Has'] as const;
/** Share of statements that name an object besides their subject (M2 always does, M1 often). */
const OBJECT_SHARE = 0.6;
/** Share of questions that name an entity. */
const QUESTION_ENTITY_SHARE = 0.7;

/** A categorical distribution drawn from by one uniform number and a binary search. */
export class Weighted<T> {
  private readonly cumulative: Float64Array;

  constructor(
    readonly items: readonly T[],
    weights: readonly number[],
  ) {
    if (items.length === 0 || items.length !== weights.length) throw new RangeError('one weight per item, some items');
    this.cumulative = new Float64Array(items.length);
    let sum = 0;
    weights.forEach((w, i) => {
      sum += w;
      this.cumulative[i] = sum;
    });
    for (let i = 0; i < this.cumulative.length; i++) this.cumulative[i]! /= sum;
  }

  /** `u` uniform in [0, 1). */
  pick(u: number): T {
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.cumulative[mid]! > u) high = mid;
      else low = mid + 1;
    }
    return this.items[low]!;
  }
}

export interface NewsVocabulary {
  /** Word → occurrences in the sample's texts and headlines. */
  words: Map<string, number>;
  /** Name → occurrences in the sample's texts. */
  names: Map<string, number>;
}

function add(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/**
 * Word and name frequencies of news: words from the texts and headlines, names from the texts. A name
 * is a run of capitalised words, with `of`/`the` inside it ("Democratic Republic of the Congo"), that
 * is not a count, a month or a weekday; a possessive `'s` is cut. A single capitalised word opening
 * a sentence is a name only if it is capitalised elsewhere too ("Russia", not "Armed").
 */
export function newsVocabulary(articles: Iterable<{ text: string; title?: string }>): NewsVocabulary {
  const words = new Map<string, number>();
  const runs: { name: string; opening: boolean }[] = [];
  const capitalisedInside = new Set<string>();
  for (const article of articles) {
    for (const match of (article.title ?? '').matchAll(WORD)) add(words, match[0]);
    for (const sentence of article.text.split(/(?<=[.!?])\s+/)) {
      let run: string[] = [];
      let position = 0;
      let runStart = 0;
      const flush = (): void => {
        while (run.length > 0 && NAME_JOINERS.has(run.at(-1)!)) run.pop();
        if (run.length > 0) runs.push({ name: run.join(' '), opening: runStart === 0 && run.length === 1 });
        run = [];
      };
      // Punctuation between words ends a name: "Gaza, Israel" is two.
      for (const piece of sentence.split(/[,;:()"“”]+/)) {
        for (const match of piece.matchAll(WORD)) {
          const word = match[0];
          add(words, word);
          const bare = word.replace(/['’]s$/, '');
          if (/^\p{Lu}/u.test(bare) && !NOT_NAMES.has(bare)) {
            if (run.length === 0) runStart = position;
            if (position > 0) capitalisedInside.add(bare);
            run.push(bare);
            if (bare !== word) flush();
          } else if (run.length > 0 && NAME_JOINERS.has(word)) run.push(word);
          else flush();
          position += 1;
        }
        flush();
      }
    }
  }
  const names = new Map<string, number>();
  for (const run of runs) if (!run.opening || capitalisedInside.has(run.name)) add(names, run.name);
  return { words, names };
}

/** The bundled sample's articles (one JSON line each). */
export function currentEventsArticles(path: URL | string = CURRENT_EVENTS_SAMPLE): { text: string; title: string }[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const article = JSON.parse(line) as { text?: string; title?: string };
      return { text: article.text ?? '', title: article.title ?? '' };
    });
}

export interface SyntheticEntity {
  id: string;
  name: string;
}

export interface SyntheticStatement {
  text: string;
  subject: SyntheticEntity;
  object: SyntheticEntity | null;
}

export interface SyntheticQuestion {
  text: string;
  entity: SyntheticEntity | null;
}

/** An entity id from its name, as the registry's ids look: `e-` and a slug. */
function entityId(name: string): string {
  return `e-${name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')}`;
}

export class SyntheticNews {
  private readonly words: Weighted<string>;
  private readonly entities: Weighted<SyntheticEntity>;

  /** `random`: uniform in [0, 1), seeded by the caller. */
  constructor(
    vocabulary: NewsVocabulary,
    private readonly random: () => number,
  ) {
    const words = [...vocabulary.words.entries()];
    this.words = new Weighted(
      words.map(([w]) => w),
      words.map(([, n]) => n),
    );
    // Names that slug alike are one entity; its popularity is theirs together.
    const byId = new Map<string, { entity: SyntheticEntity; mentions: number }>();
    for (const [name, mentions] of vocabulary.names) {
      const id = entityId(name);
      if (id === 'e-') continue;
      const known = byId.get(id);
      if (known) known.mentions += mentions;
      else byId.set(id, { entity: { id, name }, mentions });
    }
    const entities = [...byId.values()];
    this.entities = new Weighted(
      entities.map((e) => e.entity),
      entities.map((e) => e.mentions),
    );
  }

  /** Every entity, for a linker. */
  get entityList(): readonly SyntheticEntity[] {
    return this.entities.items;
  }

  private between(bounds: { min: number; max: number }): number {
    return bounds.min + Math.floor(this.random() * (bounds.max - bounds.min + 1));
  }

  private word(): string {
    return this.words.pick(this.random());
  }

  entity(): SyntheticEntity {
    return this.entities.pick(this.random());
  }

  /** A statement about its subject (first, as the extractor writes them), often naming an object later. */
  statement(): SyntheticStatement {
    const subject = this.entity();
    const object = this.random() < OBJECT_SHARE ? this.entity() : null;
    const subjectWords = subject.name.split(' ').length;
    const objectWords = object === null ? 0 : object.name.split(' ').length;
    const length = Math.max(this.between(STATEMENT_WORDS) - subjectWords - objectWords, 2);
    const words = Array.from({ length }, () => this.word());
    if (object !== null) words.splice(1 + Math.floor(this.random() * (length - 1)), 0, object.name);
    return { text: `${subject.name} ${words.join(' ')}.`, subject, object: object?.id === subject.id ? null : object };
  }

  /** A question: a question word, then words drawn as in statements, most often an entity among them. */
  question(): SyntheticQuestion {
    const opener = QUESTION_OPENERS[Math.floor(this.random() * QUESTION_OPENERS.length)]!;
    const entity = this.random() < QUESTION_ENTITY_SHARE ? this.entity() : null;
    const taken = opener.split(' ').length + (entity === null ? 0 : entity.name.split(' ').length);
    const length = Math.max(this.between(QUESTION_WORDS) - taken, 1);
    const words = Array.from({ length }, () => this.word());
    if (entity !== null) words.splice(Math.floor(this.random() * (length + 1)), 0, entity.name);
    return { text: `${opener} ${words.join(' ')}?`, entity };
  }
}

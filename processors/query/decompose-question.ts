/**
 * Iterative multi-hop retrieval as EventRAG does it (seed 003, §2.3: the query decomposed into
 * targeted queries, each retrieving its own events, the agent going on until what it gathered
 * answers), offline: the question's decomposition is read from its linked entities and the
 * interaction graph the gathered items span, not asked of a language model.
 *
 * - `isSufficient`: whether the items gathered so far answer the question — every entity it names is
 *   covered, and one item covers all its content words and holds a candidate of the answer type it
 *   asks for (`answer-type.ts`, `answer-candidates.ts`) that the question does not already name;
 * - `bridgeEntities`: the entities the gathered items connect the question to (an interaction's
 *   subject and object, a chunk's co-mentioned entities), weighted by those items' relevance,
 *   leaving out the question's own entities and those already followed;
 * - `subQueries`: one query per bridge, "<bridge> <the question's words its evidence lacks> <the
 *   question's entities>" ("Who leads the party that won the election in X?", with "The Blue Party
 *   won the election in X" found, asks "Blue Party leads X").
 */
import { datesIn, namesIn, namesSeenMidSentence, numbersIn } from './answer-candidates.js';
import { expectedAnswerType, type AnswerType } from './answer-type.js';
import { allTerms, contentTerms, contentWords, stem, words } from './question-terms.js';
import type { LinkedEntity } from './reformulate-query.js';

/** One gathered item as the decomposition reads it. */
export interface Evidence {
  id: string;
  text: string;
  relevance: number;
  /** The entities the item connects: an interaction's subject and object, a chunk's marked entities. */
  entities: readonly { id: string; name: string }[];
}

export interface Bridge {
  id: string;
  name: string;
  /** The summed relevance of the gathered items that connect the question to it. */
  weight: number;
}

export interface SubQuery {
  bridge: Bridge;
  /** What the hop searches for, embedded and matched lexically. */
  text: string;
  /** The question's words it asks about the bridge: what its evidence should add. */
  asking: string[];
}

export interface SufficiencyReading {
  sufficient: boolean;
  answerType: AnswerType;
  /** The ids of the question's entities no gathered item covers. */
  uncoveredEntities: string[];
  /** The item that covers all the question's content words and holds an answer candidate, if one does. */
  answeredBy?: string;
}

function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Whether the words of `name` occur in `text`, in order, as whole words. */
function mentions(text: string, name: string): boolean {
  const key = words(name).join(' ');
  return key !== '' && ` ${words(text).join(' ')} `.includes(` ${key} `);
}

/** Whether a sentence holds a candidate answer of the type asked for that the question does not name. */
function holdsCandidate(
  sentence: string,
  type: AnswerType,
  asked: ReadonlySet<string>,
  seenMidSentence: ReadonlySet<string>,
): boolean {
  const newToQuestion = (candidate: string): boolean => words(candidate).some((w) => !asked.has(stem(w)));
  switch (type) {
    case 'person':
    case 'name':
    case 'place':
      return namesIn(sentence, seenMidSentence).some(newToQuestion);
    case 'date':
      return datesIn(sentence).some(newToQuestion);
    case 'number':
      return numbersIn(sentence).some(newToQuestion);
    default:
      // A reason or an open question: covering the question's words is all that can be checked.
      return true;
  }
}

/**
 * Whether an item found by a sub-query adds what it asked about: one of its words (stemmed). A
 * bridge's reports that only repeat what the first hop found fill no gap.
 */
export function fillsGap(text: string, sub: SubQuery): boolean {
  const terms = allTerms(text);
  return sub.asking.some((w) => terms.has(stem(w)));
}

/**
 * Whether the gathered items answer the question (see the module's comment). A question without
 * content words beyond its entities is answered once they are covered.
 */
export function isSufficient(
  question: string,
  entities: readonly LinkedEntity[],
  evidence: readonly Evidence[],
): SufficiencyReading {
  const answerType = expectedAnswerType(question);
  const uncoveredEntities = entities
    .filter(
      (entity) =>
        !evidence.some(
          (item) =>
            item.entities.some((e) => e.id === entity.id) ||
            mentions(item.text, entity.name) ||
            mentions(item.text, entity.surface),
        ),
    )
    .map((entity) => entity.id);
  const terms = new Set(contentTerms(question));
  const asked = allTerms(question);
  const seenMidSentence = namesSeenMidSentence(evidence.flatMap((item) => sentencesOf(item.text)));
  const answeredBy = evidence.find((item) => {
    const covered = allTerms(item.text);
    if ([...terms].some((term) => !covered.has(term))) return false;
    return sentencesOf(item.text).some((sentence) => holdsCandidate(sentence, answerType, asked, seenMidSentence));
  })?.id;
  return {
    sufficient: uncoveredEntities.length === 0 && answeredBy !== undefined,
    answerType,
    uncoveredEntities,
    ...(answeredBy === undefined ? {} : { answeredBy }),
  };
}

/**
 * The entities the gathered items connect the question to, most connected first (summed relevance,
 * ties by id), at most `max`: not the question's own entities, nor those followed by earlier hops.
 */
export function bridgeEntities(evidence: readonly Evidence[], exclude: ReadonlySet<string>, max: number): Bridge[] {
  const bridges = new Map<string, Bridge>();
  for (const item of evidence) {
    const once = new Map(item.entities.map((e) => [e.id, e.name]));
    for (const [id, name] of once) {
      if (exclude.has(id)) continue;
      const known = bridges.get(id);
      if (known) known.weight += item.relevance;
      else bridges.set(id, { id, name: name || id, weight: item.relevance });
    }
  }
  return [...bridges.values()].sort((a, b) => b.weight - a.weight || a.id.localeCompare(b.id)).slice(0, max);
}

/**
 * The question's predicate words: its content words as written, without the words of the entities
 * it names (those are what the first hop searched for; a bridge takes their place).
 */
export function predicateWords(question: string, entities: readonly LinkedEntity[]): string[] {
  const named = new Set(entities.flatMap((e) => [...words(e.name), ...words(e.surface)]).map(stem));
  return contentWords(question).filter((w) => !named.has(stem(w)));
}

/**
 * One query per bridge: the bridge's name, the predicate words that the most relevant gathered item
 * naming the bridge lacks — what is still to be found about it — or all predicate words when that
 * item has them all, and the names of the question's entities.
 */
export function subQueries(
  question: string,
  entities: readonly LinkedEntity[],
  bridges: readonly Bridge[],
  evidence: readonly Evidence[],
): SubQuery[] {
  const predicate = predicateWords(question, entities);
  return bridges.map((bridge) => {
    const own = new Set(words(bridge.name).map(stem));
    const about = predicate.filter((w) => !own.has(stem(w)));
    const best = [...evidence]
      .filter((item) => item.entities.some((e) => e.id === bridge.id))
      .sort((a, b) => b.relevance - a.relevance)[0];
    const found = best === undefined ? new Set<string>() : allTerms(best.text);
    const missing = about.filter((w) => !found.has(stem(w)));
    const asked = missing.length > 0 ? missing : about;
    // The question's own entities stay in the query: the hop looks for the bridge in their story, not
    // for anything the bridge did (on 200 RealTime QA questions, 2 more composed answers held the answer).
    return { bridge, text: [bridge.name, ...asked, ...entities.map((e) => e.name)].join(' ').trim(), asking: asked };
  });
}

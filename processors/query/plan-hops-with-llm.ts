/**
 * The decomposition of multi-hop retrieval by a language model, when one is configured (EventRAG
 * §2.3: the agent decomposes the query into targeted queries and refines them with the context each
 * step gathered). After each hop the model sees the question, the date it is asked as of, what was
 * found so far and the entities that evidence connects to, and says whether the evidence answers the
 * question, and if not, which of those entities to follow with what query. It may only follow
 * entities offered to it: a hop searches among a bridge's own documents, so a name the model made up
 * would find nothing. Pure: the request to send and the reading of the reply; the call is the
 * caller's. Without a model (or when its reply cannot be read) `decompose-question.ts` decides.
 */
import type { ChatRequest } from '../extract/chat-model.js';
import type { Bridge, Evidence } from './decompose-question.js';
import { contentWords } from './question-terms.js';
import { entityKey } from '../markup/entity-id.js';

/** Items of evidence shown to the model, best first, and how much of each. */
const SHOWN_ITEMS = 8;
const SHOWN_CHARACTERS = 400;
/** A search query longer than this is not a query. */
const MAX_QUERY_CHARACTERS = 300;

export interface HopPlan {
  /** The model judged the evidence enough to answer. */
  sufficient: boolean;
  /** The entities to follow, each with its query (none when sufficient). */
  follow: { bridge: Bridge; text: string; asking: string[] }[];
}

const SYSTEM = [
  'You plan the next step of a search over a news archive.',
  'You see a question, the date it is asked as of, the news items found so far (numbered) and the entities those items connect to.',
  'Decide whether the items already answer the question.',
  'If they do not, choose the entities whose own news is most likely to hold what is still missing, and write for each a short search query (at most 20 words) asking for exactly that.',
  'Choose only entities from the list, named exactly as listed.',
  'Reply with a JSON object and nothing else: {"sufficient": true or false, "follow": [{"entity": "<name>", "query": "<search query>"}]}.',
].join(' ');

/** The chat request that asks for the next hop's plan. */
export function hopPlanRequest(
  question: string,
  asOfDay: string,
  evidence: readonly Evidence[],
  candidates: readonly Bridge[],
  maxFollow: number,
): ChatRequest {
  const items = [...evidence]
    .sort((a, b) => b.relevance - a.relevance)
    .slice(0, SHOWN_ITEMS)
    .map((item, i) => `[${i + 1}] ${item.text.replace(/\s+/g, ' ').slice(0, SHOWN_CHARACTERS)}`);
  const user = [
    `Question: ${question}`,
    `As of: ${asOfDay}`,
    'Found so far:',
    ...(items.length > 0 ? items : ['(nothing)']),
    `Entities they connect to: ${candidates.map((c) => c.name).join('; ') || '(none)'}`,
    `Follow at most ${maxFollow}.`,
  ].join('\n');
  return {
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: user },
    ],
    maxTokens: 300,
    temperature: 0,
    json: true,
    purpose: 'plan',
  };
}

/** A reply the plan cannot be read from: the caller falls back to the offline decomposition. */
export class UnreadablePlan extends Error {
  override readonly name = 'UnreadablePlan';
}

/**
 * The plan a reply gives. Entities not offered are left out (a made-up or misspelt name), as are
 * repeats and empty or overlong queries; at most `maxFollow` are kept. Throws `UnreadablePlan` when
 * the reply is not such a JSON object at all.
 */
export function readHopPlan(reply: string, candidates: readonly Bridge[], maxFollow: number): HopPlan {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start < 0 || end < start) throw new UnreadablePlan('the reply holds no JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(reply.slice(start, end + 1));
  } catch {
    throw new UnreadablePlan('the reply is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw new UnreadablePlan('the reply is not a JSON object');
  const { sufficient, follow } = parsed as { sufficient?: unknown; follow?: unknown };
  if (typeof sufficient !== 'boolean') throw new UnreadablePlan('"sufficient" is not true or false');
  if (sufficient) return { sufficient, follow: [] };
  if (follow !== undefined && !Array.isArray(follow)) throw new UnreadablePlan('"follow" is not a list');
  const byKey = new Map(candidates.map((c) => [entityKey(c.name), c]));
  const chosen: HopPlan['follow'] = [];
  for (const entry of (follow as unknown[] | undefined) ?? []) {
    if (chosen.length >= maxFollow) break;
    const { entity, query } = (entry ?? {}) as { entity?: unknown; query?: unknown };
    if (typeof entity !== 'string' || typeof query !== 'string') continue;
    const bridge = byKey.get(entityKey(entity));
    const text = query.replace(/\s+/g, ' ').trim();
    if (!bridge || text === '' || text.length > MAX_QUERY_CHARACTERS) continue;
    if (chosen.some((c) => c.bridge.id === bridge.id)) continue;
    const named = new Set(contentWords(bridge.name));
    chosen.push({ bridge, text, asking: contentWords(text).filter((w) => !named.has(w)) });
  }
  return { sufficient, follow: chosen };
}

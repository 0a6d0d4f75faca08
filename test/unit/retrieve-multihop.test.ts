import { describe, expect, it } from 'vitest';
import { HashingEmbedder } from '../../processors/embed/hashing-embedder.js';
import { chunkDocument } from '../../processors/index/index-documents.js';
import { bridgeEntities, isSufficient, subQueries, type Evidence } from '../../processors/query/decompose-question.js';
import { EntityLinker } from '../../processors/query/reformulate-query.js';
import { parseSearchRequest } from '../../processors/query/search-request.js';
import type { Chunk } from '../../schemas/records.generated.js';
import type { Datastore } from '../../streams/datastore/datastore.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { Retriever, type RetrievalResult, type RetrievedItem } from '../../streams/retrieval/retrieve.js';
import { hopPlanRequest, readHopPlan, UnreadablePlan } from '../../processors/query/plan-hops-with-llm.js';
import type { ChatModel } from '../../processors/extract/chat-model.js';
import { llmConfig } from '../../processors/extract/llm-config.js';
import { OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import { fakeReplies, startFakeOpenAiServer } from '../../devkit/fake-openai-server.js';

const DAY = 86_400_000;
const TQ = Date.UTC(2025, 2, 10, 12);
const embedder = new HashingEmbedder(256);

const ENTITIES: Record<string, string> = {
  Freedonia: 'e-freedonia',
  'Blue Party': 'e-blue-party',
  'Red Party': 'e-red-party',
  'Maria Lopez': 'e-maria-lopez',
  'Juan Ortiz': 'e-juan-ortiz',
};

/**
 * A small news stream about an election in Freedonia, as of TQ: the Blue Party won it (many
 * reports), and who leads the Blue Party is said only in one earlier report that names neither the
 * election nor Freedonia; a later report (after TQ) names another leader.
 */
const STREAM: [id: string, daysBeforeTq: number, text: string, names: string[]][] = [
  ['won-1', 7, 'The Blue Party won the election in Freedonia on Sunday.', ['Blue Party', 'Freedonia']],
  [
    'won-2',
    6,
    'Freedonia election results: the Blue Party won the election with most seats.',
    ['Freedonia', 'Blue Party'],
  ],
  ['won-3', 5, 'The Blue Party celebrated that it won the election in Freedonia.', ['Blue Party', 'Freedonia']],
  [
    'won-4',
    4,
    'After the Blue Party won the election, Freedonia prepares a new government.',
    ['Blue Party', 'Freedonia'],
  ],
  ['won-5', 3, 'The election the Blue Party won in Freedonia was calm, observers said.', ['Blue Party', 'Freedonia']],
  ['lost', 5, 'The Red Party lost the election in Freedonia.', ['Red Party', 'Freedonia']],
  ['turnout', 6, 'Voters in Freedonia turned out in numbers for the party election.', ['Freedonia']],
  ['leader', 20, 'Maria Lopez leads the Blue Party.', ['Maria Lopez', 'Blue Party']],
  ['later-leader', -2, 'Juan Ortiz now leads the Blue Party.', ['Juan Ortiz', 'Blue Party']],
];

function chunkOf(id: string, t: number, text: string, names: string[]): Chunk {
  return {
    id: `chunk-${id}`,
    article_id: `art-${id}`,
    index: 0,
    text,
    title: '',
    marked_text: text,
    entity_ids: names.map((n) => ENTITIES[n]!),
    entities: names.map((n) => ({ id: ENTITIES[n]!, name: n, type: 'ORGANIZATION' })),
    t,
    provenance: [
      { article_id: `art-${id}`, url: `https://news.example/${id}`, source: 'news.example', published_at: t },
    ],
  };
}

/** The datastore with every call it answers counted. */
function counted(datastore: Datastore): { datastore: Datastore; calls: () => number } {
  let calls = 0;
  const counting = new Proxy(datastore, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        if (['nearest', 'lexical', 'list', 'histogram'].includes(String(property))) calls += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { datastore: counting, calls: () => calls };
}

async function electionStream(): Promise<Datastore> {
  const datastore = new EmbeddedDatastore('neon');
  await datastore.prepare({ model: embedder.model, dimensions: embedder.dimensions });
  const writer = datastore.writer({ stage: 'test' });
  const names = datastoreNames('chunks');
  for (const [id, daysBefore, text, entityNames] of STREAM) {
    const t = TQ - daysBefore * DAY;
    const [vector] = await embedder.embed([text], 'document');
    await writer.write({
      index: monthlyIndex(names, t),
      id: `chunk-${id}`,
      document: chunkDocument(chunkOf(id, t, text, entityNames), vector!, embedder.model, TQ),
    });
  }
  return datastore;
}

const linker = new EntityLinker(Object.entries(ENTITIES).map(([name, id]) => ({ id, name, aliases: [], mentions: 1 })));

async function search(
  datastore: Datastore,
  q: string,
  hops: number,
  strategy = 'generic',
  planner?: ChatModel,
): Promise<RetrievalResult> {
  const retriever = new Retriever({ datastore, embedder, linker, ...(planner ? { planner } : {}) });
  const parsed = parseSearchRequest(
    { q, date: new Date(TQ).toISOString(), k: 3, strategy, store: 'chunks', hops, time_words: false, window_days: 30 },
    TQ,
  );
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return retriever.search(parsed.request);
}

async function ask(datastore: Datastore, q: string, hops: number, strategy = 'generic'): Promise<RetrievedItem[]> {
  return (await search(datastore, q, hops, strategy)).items;
}

const TWO_HOP = 'Who leads the party that won the election in Freedonia?';

describe('iterative multi-hop retrieval', () => {
  it('reaches an answer only a bridge entity’s own query finds, as of t_q, in every strategy', async () => {
    const datastore = await electionStream();
    for (const strategy of ['generic', 'tempralm', 'temporal']) {
      const once = await ask(datastore, TWO_HOP, 1, strategy);
      // The question's own hop finds who won, not who leads the winner.
      expect(once.some((item) => item.text.includes('Maria Lopez'))).toBe(false);
      const twice = await ask(datastore, TWO_HOP, 2, strategy);
      const leader = twice.find((item) => item.text.includes('Maria Lopez'));
      expect(leader, strategy).toBeDefined();
      expect(leader).toMatchObject({ via_entity: 'e-blue-party', hop: 2, via_query: 'Blue Party leads Freedonia' });
      // The first ⌈k/2⌉ places keep the question's own best.
      expect(twice.slice(0, 2).map((item) => item.id)).toEqual(once.slice(0, 2).map((item) => item.id));
      // As of t_q in every hop: the later leader is never retrieved.
      expect(twice.every((item) => Date.parse(item.published_at) <= TQ)).toBe(true);
      expect(twice.some((item) => item.text.includes('Juan Ortiz'))).toBe(false);
    }
  });

  it('stops after the first hop when it already answers: no further datastore call', async () => {
    const { datastore, calls } = counted(await electionStream());
    const question = 'Which party won the election in Freedonia?';
    const once = await ask(datastore, question, 1);
    const callsForOne = calls();
    const twice = await ask(datastore, question, 2);
    expect(calls() - callsForOne).toBe(callsForOne);
    expect(twice.map((item) => item.id)).toEqual(once.map((item) => item.id));
    expect(twice.some((item) => item.hop !== undefined)).toBe(false);
    // The two-hop question does make the further calls.
    const before = calls();
    await ask(datastore, TWO_HOP, 2);
    const forTwoHops = calls() - before;
    expect(forTwoHops).toBeGreaterThan(callsForOne);
  });
});

describe('decompose-question', () => {
  const entities = linker.link(TWO_HOP);
  const evidence = (id: string, text: string, names: string[], relevance = 1): Evidence => ({
    id,
    text,
    relevance,
    entities: names.map((name) => ({ id: ENTITIES[name]!, name })),
  });
  const won = evidence('won', 'The Blue Party won the election in Freedonia on Sunday.', ['Blue Party', 'Freedonia']);
  const lost = evidence('lost', 'The Red Party lost the election in Freedonia.', ['Red Party', 'Freedonia'], 0.5);

  it('is sufficient when an item covers the question and holds an answer of the type asked', () => {
    expect(entities.map((e) => e.id)).toEqual(['e-freedonia']);
    expect(isSufficient(TWO_HOP, entities, [won, lost]).sufficient).toBe(false);
    const leader = evidence('leader', 'Maria Lopez leads the Blue Party, which won the election in Freedonia.', [
      'Maria Lopez',
      'Blue Party',
    ]);
    expect(isSufficient(TWO_HOP, entities, [won, leader])).toMatchObject({ sufficient: true, answeredBy: 'leader' });
    // Every word covered but no name the question does not already give: no answer yet.
    const echo = evidence('echo', 'Who leads the party that won the election in Freedonia?', ['Freedonia']);
    expect(isSufficient(TWO_HOP, entities, [echo]).sufficient).toBe(false);
    // An entity of the question that nothing gathered covers.
    const elsewhere = linker.link('Who leads the Red Party?');
    expect(isSufficient('Who leads the Red Party?', elsewhere, [won]).uncoveredEntities).toEqual(['e-red-party']);
  });

  it('follows the most connected entities the question does not name, asking what is still unfound', () => {
    const exclude = new Set(entities.map((e) => e.id));
    const bridges = bridgeEntities([won, lost], exclude, 2);
    expect(bridges.map((b) => b.id)).toEqual(['e-blue-party', 'e-red-party']);
    expect(bridgeEntities([won, lost], new Set([...exclude, 'e-blue-party']), 2).map((b) => b.id)).toEqual([
      'e-red-party',
    ]);
    expect(subQueries(TWO_HOP, entities, bridges, [won, lost]).map((q) => q.text)).toEqual([
      'Blue Party leads Freedonia',
      // "won" is not in the Red Party's report: still to find.
      'Red Party leads won Freedonia',
    ]);
  });
});

describe('multi-hop planned by a language model (over HTTP to an OpenAI-compatible server)', () => {
  const planner = (url: string): ChatModel =>
    new OpenAiChatModel(
      llmConfig({
        baseUrl: url,
        model: 'planner-model',
        timeoutMs: 2_000,
        retry: { attempts: 1, baseMs: 1, capMs: 5 },
      }),
    );

  it("follows the entity the model chooses with the model's own query, as of t_q", async () => {
    const fake = await startFakeOpenAiServer();
    const chat = planner(fake.url);
    try {
      fake.enqueue(
        fakeReplies.json({
          sufficient: false,
          follow: [{ entity: 'blue party', query: 'Who leads the Blue Party?' }],
        }),
      );
      const result = await search(await electionStream(), TWO_HOP, 2, 'tempralm', chat);
      const leader = result.items.find((item) => item.text.includes('Maria Lopez'));
      expect(leader).toMatchObject({
        via_entity: 'e-blue-party',
        hop: 2,
        via_query: 'Who leads the Blue Party?',
      });
      expect(result.items.some((item) => item.text.includes('Juan Ortiz'))).toBe(false);
      expect(result.decomposition).toEqual({ by: 'planner-model' });
      // One plan, after the question's own hop (two hops are the most a request asks for).
      const asked = fake.chatRequests();
      expect(asked).toHaveLength(1);
      expect(asked[0]!.json).toBe(true);
      const prompt = asked[0]!.messages.at(-1)!.content;
      expect(prompt).toContain(`Question: ${TWO_HOP}`);
      expect(prompt).toContain('As of: 2025-03-10');
      expect(prompt).toMatch(/Entities they connect to: .*Blue Party/);
    } finally {
      await chat.close();
      await fake.close();
    }
  });

  it('stops when the model says the first hop answers, and plans offline when its reply is unusable', async () => {
    const fake = await startFakeOpenAiServer();
    const datastore = await electionStream();
    // A new client each time: a client answers a request it has answered before from its cache.
    const searchPlanned = async (reply: Parameters<typeof fake.enqueue>[0]): Promise<RetrievalResult> => {
      const chat = planner(fake.url);
      fake.enqueue(reply);
      try {
        return await search(datastore, TWO_HOP, 2, 'generic', chat);
      } finally {
        await chat.close();
      }
    };
    try {
      const stopped = await searchPlanned(fakeReplies.json({ sufficient: true }));
      expect(stopped.items.some((item) => item.hop !== undefined)).toBe(false);
      const offline = await searchPlanned(fakeReplies.invalidJson());
      expect(offline.items.find((item) => item.text.includes('Maria Lopez'))).toMatchObject({
        via_query: 'Blue Party leads Freedonia',
      });
      expect(offline.decomposition).toEqual({
        by: 'planner-model',
        fallbacks: ['hop 2: the reply holds no JSON object'],
      });
      const down = await searchPlanned(fakeReplies.serverError(503));
      expect(down.decomposition?.fallbacks).toHaveLength(1);
      expect(down.items.some((item) => item.text.includes('Maria Lopez'))).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it('reads only entities it offered, once each, at most as many as asked', () => {
    const candidates = [
      { id: 'e-blue-party', name: 'Blue Party', weight: 2 },
      { id: 'e-red-party', name: 'Red Party', weight: 1 },
    ];
    const plan = readHopPlan(
      JSON.stringify({
        sufficient: false,
        follow: [
          { entity: 'Green Party', query: 'made up' },
          { entity: 'Blue Party', query: '  leader of the   Blue Party ' },
          { entity: 'BLUE PARTY', query: 'again' },
          { entity: 'Red Party', query: '' },
          { entity: 'Red Party', query: 'Red Party chair' },
        ],
      }),
      candidates,
      2,
    );
    expect(plan.follow.map((f) => [f.bridge.id, f.text, f.asking])).toEqual([
      ['e-blue-party', 'leader of the Blue Party', ['leader']],
      ['e-red-party', 'Red Party chair', ['chair']],
    ]);
    expect(() => readHopPlan('no plan today', candidates, 2)).toThrow(UnreadablePlan);
    expect(() => readHopPlan('{"follow": []}', candidates, 2)).toThrow('"sufficient" is not true or false');
    const request = hopPlanRequest(TWO_HOP, '2025-03-10', [], candidates, 2);
    expect(request.messages.at(-1)!.content).toContain('Entities they connect to: Blue Party; Red Party');
  });
});

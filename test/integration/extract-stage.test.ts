import { logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ConfiguredTargets } from '../../processors/extract/extraction-targets.js';
import {
  LlmInteractionExtractor,
  OfflineInteractionExtractor,
} from '../../processors/extract/interaction-extractor.js';
import { llmConfig } from '../../processors/extract/llm-config.js';
import { OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import { Secret } from '../../schemas/connection-config.js';
import type { Chunk } from '../../schemas/records.generated.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { startExtractStage } from '../../streams/stages/extract-stage.js';
import { pipelineTopics } from '../../streams/pipeline/pipeline-topics.js';
import { fakeExtractionReply } from '../../devkit/fake-extraction-llm.js';
import { fakeReplies, startFakeOpenAiServer, type FakeOpenAiServer } from '../../devkit/fake-openai-server.js';
import { freshTopic } from '../../devkit/fresh-names.js';
import { assertCommittedToEnd, committedToEnd, waitUntil } from '../harness/invariants.js';
import { useLiveClients } from '../harness/live-clients.js';
import { readRawTopic, readTopicRecords } from '../harness/topic-contents.js';
import { chunkOf, DAY, DOJA_CAT_CHUNK, T0 } from '../unit/extract-fixtures.js';

const live = useLiveClients();
const isM1 = (messages: { content: string }[]) => messages.some((m) => m.content.includes('the interactions of '));
const servers: FakeOpenAiServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(label: string) {
  const transport = createKafkaTransport(
    createKafkaClient({ clientId: `extract-${label}`, brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
  );
  const topics = pipelineTopics({
    uniqueChunks: freshTopic(`${label}.unique`),
    deadLetters: freshTopic(`${label}.dlq`),
  });
  const interactions = freshTopic(`${label}.interactions`);
  const created = [topics.uniqueChunks, topics.deadLetters, interactions];
  await transport.ensureTopics(created.map((topic) => ({ topic, partitions: 3 })));
  live.cleanup.topics.push(...created);
  return { transport, topics, interactions, group: freshTopic(`${label}.group`) };
}

async function publish(transport: ReturnType<typeof createKafkaTransport>, topic: string, chunks: Chunk[]) {
  const producer = transport.producer();
  await producer.send(
    topic,
    chunks.map((c) => topicRecord(topic, 'Chunk', c.article_id, c)),
  );
  await producer.disconnect();
}

const leto = (i: number) =>
  chunkOf(
    `<e>Doja Cat</e> and <e>Jared Leto</e> paid homage to <e>Karl Lagerfeld</e> at the gala, report ${i}.`,
    [
      ['Doja Cat', 'PERSON'],
      ['Jared Leto', 'PERSON'],
      ['Karl Lagerfeld', 'PERSON'],
    ],
    { t: T0 + (i % 2) * DAY, article: `art-leto-${i}` },
  );

/** The offline extractor over `chunks` for `subjects`, until its group has committed them all: what it wrote. */
async function extractOffline(label: string, chunks: Chunk[], subjects: string[], registry?: Registry) {
  const { transport, topics, interactions, group } = await setup(label);
  try {
    await publish(transport, topics.uniqueChunks, chunks);
    const stage = await startExtractStage(transport, {
      topics,
      groupId: group,
      interactionsTopic: interactions,
      extractor: new OfflineInteractionExtractor(),
      targets: new ConfiguredTargets(subjects),
      ...(registry ? { registry } : {}),
    });
    try {
      await waitUntil(() => committedToEnd(live.admin, group, topics.uniqueChunks), 30_000, `extraction (${label})`);
    } finally {
      await stage.stop();
    }
    return (await readTopicRecords(transport, interactions, 'Interaction')).map((w) => w.value);
  } finally {
    await transport.close();
  }
}

describe('extract stage on real Kafka', () => {
  it('writes grounded M1 and M2 interactions keyed by subject, skips untargeted chunks, dead-letters invalid output, and replays for free', async () => {
    const { transport, topics, interactions, group } = await setup('llm');
    const server = await startFakeOpenAiServer({ chat: fakeExtractionReply });
    servers.push(server);
    const chat = new OpenAiChatModel(
      llmConfig({
        baseUrl: server.url,
        model: 'fake-model',
        apiKey: new Secret('sk-test'),
        timeoutMs: 5_000,
        retry: { attempts: 3, baseMs: 5, capMs: 20 },
      }),
      { registry: new Registry() },
    );
    const untargeted = chunkOf('<e>Paris</e> hosted <e>France</e>-wide strikes.', ['Paris', 'France'], {
      article: 'art-paris',
    });
    const poisoned = chunkOf('<e>Doja Cat</e> spoke to <e>Vogue</e>.', ['Doja Cat', 'Vogue'], {
      article: 'art-poison',
    });
    const chunks = [DOJA_CAT_CHUNK, untargeted, ...Array.from({ length: 5 }, (_, i) => leto(i)), poisoned];
    // The poisoned chunk's M1 call gets invalid JSON twice; everything else the responder answers.
    server.setChatResponder((request) =>
      request.messages.some((m) => m.content.includes('spoke to <e>Vogue</e>'))
        ? { kind: 'invalid-json' }
        : fakeExtractionReply(request),
    );
    await publish(transport, topics.uniqueChunks, chunks);

    let registry = new Registry();
    const run = (groupId: string) =>
      startExtractStage(transport, {
        topics,
        groupId,
        interactionsTopic: interactions,
        extractor: new LlmInteractionExtractor(chat),
        targets: new ConfiguredTargets(['Doja Cat']),
        batching: { k: 2, quietMs: 300 },
        pairSelection: { minCooccurrences: 2 },
        registry,
      });
    const stage = await run(group);
    try {
      await waitUntil(() => committedToEnd(live.admin, group, topics.uniqueChunks), 60_000, 'extraction caught up');
    } finally {
      await stage.stop();
    }
    await assertCommittedToEnd(live.admin, group, topics.uniqueChunks);

    const written = await readTopicRecords(transport, interactions, 'Interaction');
    expect(written.length).toBeGreaterThan(0);
    for (const { key, value } of written) {
      expect(key).toBe(value.subject_id);
      expect(value.subject_id).toBe('e-doja-cat');
      expect(value.model).toBe('fake-model');
      // Grounded: every object is an entity marked in one of the chunks the interaction cites.
      const cited = chunks.filter((c) => value.chunk_ids.includes(c.id));
      expect(cited.length).toBe(value.chunk_ids.length);
      if (value.object_id) for (const c of cited) expect(c.entity_ids).toContain(value.object_id);
      for (const c of cited) expect(c.t).toBe(value.t);
    }
    const m1 = written.filter((w) => w.value.variant === 'M1');
    const m2 = written.filter((w) => w.value.variant === 'M2');
    // The Leto reports say the same on each of their two days, so each day's statements are written
    // once, citing whichever report of that day came first (the three partitions interleave freely).
    expect(new Set(m1.map((w) => w.value.id)).size).toBe(m1.length);
    const cited = new Set(m1.map((w) => w.value.chunk_ids[0]));
    expect(cited).toContain(DOJA_CAT_CHUNK.id);
    for (const day of [T0, T0 + DAY]) {
      expect(m1.some((w) => w.value.t === day && w.value.chunk_ids[0]!.startsWith('art-leto-'))).toBe(true);
    }
    expect(m1.map((w) => w.value.object_id)).toContain('e-choupette');
    // Pairs are selected at their second co-occurrence and their first joins the batch: 5 chunks,
    // batches of 2, over two days.
    expect(m2.length).toBeGreaterThan(0);
    // Both co-occur with Doja Cat in every one of those chunks: both pairs are selected.
    for (const w of m2) expect(['e-jared-leto', 'e-karl-lagerfeld']).toContain(w.value.object_id);
    expect(new Set(m2.map((w) => w.value.t))).toEqual(new Set([T0, T0 + DAY]));
    expect(written.some((w) => w.value.chunk_ids.includes(untargeted.id))).toBe(false);

    const deadLetters = await readRawTopic(transport, topics.deadLetters);
    expect(deadLetters.map((d) => d.headers['dlq.error.code'])).toEqual(['llm_invalid_output']);
    expect(deadLetters[0]!.key).toBe('art-poison');

    const metrics = await registry.getSingleMetricAsString('neon_extract_chunks_total');
    expect(metrics).toMatch(/outcome="no_target"} 1/);
    expect(metrics).toMatch(/outcome="targeted"} 7/);

    // A replay from the start under a new group: the same M1 interactions, and no M1 call paid again.
    // (M2 batches depend on how the partitions interleave, so a replay may batch differently.)
    const m1CallsBefore = server.chatRequests().filter((r) => isM1(r.messages)).length;
    registry = new Registry();
    const replayGroup = freshTopic('llm.replay');
    const replay = await run(replayGroup);
    try {
      await waitUntil(() => committedToEnd(live.admin, replayGroup, topics.uniqueChunks), 60_000, 'replay caught up');
    } finally {
      await replay.stop();
    }
    const again = (await readTopicRecords(transport, interactions, 'Interaction')).slice(written.length);
    const m1Ids = (list: typeof written) =>
      new Set(list.filter((w) => w.value.variant === 'M1').map((w) => w.value.id));
    expect(m1Ids(again)).toEqual(m1Ids(written));
    // Every reply is cached by its prompt, the invalid ones too: a replay decides the same, for free.
    expect(server.chatRequests().filter((r) => isM1(r.messages)).length).toBe(m1CallsBefore);
    await chat.close();
    await transport.close();
  });

  it('retries through an LLM outage without losing or committing the chunk', async () => {
    const { transport, topics, interactions, group } = await setup('outage');
    const server = await startFakeOpenAiServer({ chat: fakeExtractionReply });
    servers.push(server);
    const chat = new OpenAiChatModel(
      llmConfig({
        baseUrl: server.url,
        model: 'fake-model',
        apiKey: new Secret('sk-test'),
        timeoutMs: 5_000,
        retry: { attempts: 1, baseMs: 5, capMs: 20 },
      }),
      { registry: new Registry() },
    );
    // Longer than the client's own retries: the stage's retry loop has to carry it.
    server.enqueue(fakeReplies.serverError(503), fakeReplies.serverError(503), fakeReplies.rateLimited(0));
    await publish(transport, topics.uniqueChunks, [DOJA_CAT_CHUNK]);
    const stage = await startExtractStage(transport, {
      topics,
      groupId: group,
      interactionsTopic: interactions,
      extractor: new LlmInteractionExtractor(chat),
      targets: new ConfiguredTargets(['e-doja-cat']),
      variants: ['M1'],
    });
    try {
      await waitUntil(
        () => committedToEnd(live.admin, group, topics.uniqueChunks),
        60_000,
        'extracted after the outage',
      );
    } finally {
      await stage.stop();
    }
    expect(server.totals.chatCalls).toBe(4);
    expect((await readTopicRecords(transport, interactions, 'Interaction')).length).toBeGreaterThan(0);
    expect(await readRawTopic(transport, topics.deadLetters)).toEqual([]);
    await chat.close();
    await transport.close();
  });

  it('extracts offline for its targets, labelled with the offline model', async () => {
    const written = await extractOffline('offline', [DOJA_CAT_CHUNK], ['Doja Cat', 'Karl Lagerfeld']);
    // A statement per sentence, under the entity the sentence is about; Doja Cat takes part in both,
    // Karl Lagerfeld is named in both but is neither's subject nor object.
    expect(written.map((i) => `${i.subject_id} → ${i.object_id}`).sort()).toEqual([
      'e-brett-alan-nelson → e-doja-cat',
      'e-doja-cat → e-choupette',
    ]);
    for (const i of written) {
      expect(i.model).toBe('neon-offline-extractor/2');
      expect(i.variant).toBe('M1');
    }
  });

  it('writes a statement as one record citing every chunk that says it, for both directions of one link', async () => {
    const shared = '<e>Joe Biden</e> met <e>Emmanuel Macron</e> in <e>Paris</e> on Monday.';
    const entities: [string, 'PERSON' | 'LOCATION'][] = [
      ['Joe Biden', 'PERSON'],
      ['Emmanuel Macron', 'PERSON'],
      ['Paris', 'LOCATION'],
    ];
    // Consecutive windows of one article: the same time, the shared sentence in both.
    const first = chunkOf(`Talks opened early. ${shared}`, entities, { article: 'art-summit', id: 'art-summit:v1:0' });
    const second = chunkOf(`${shared} Talks ended late.`, entities, { article: 'art-summit', id: 'art-summit:v1:1' });
    const registry = new Registry();
    const written = await extractOffline(
      'repeats',
      [first, second],
      ['Joe Biden', 'Emmanuel Macron', 'Paris'],
      registry,
    );
    // One record (one id): written when the first chunk gave it, and again, citing both, when the
    // second did — whichever of the two calls finished first.
    expect(new Set(written.map((i) => `${i.id} ${i.subject_id} → ${i.object_id}: ${i.text}`))).toEqual(
      new Set([`${written[0]!.id} e-joe-biden → e-emmanuel-macron: Joe Biden met Emmanuel Macron in Paris on Monday.`]),
    );
    expect(written).toHaveLength(2);
    expect(written.at(-1)!.chunk_ids).toEqual(['art-summit:v1:0', 'art-summit:v1:1']);
    const repeated = (await registry.getSingleMetricAsString('neon_extract_repeated_interactions_total'))
      .split('\n')
      .find((line) => line.startsWith('neon_extract_repeated_interactions_total{'));
    // It came out four times: for each of its two entities (Paris is neither), from each chunk; two
    // of those added nothing.
    expect(repeated).toBe('neon_extract_repeated_interactions_total{variant="M1"} 2');
  });
});

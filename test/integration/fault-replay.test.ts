import { logLevel } from 'kafkajs';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LlmInteractionExtractor } from '../../processors/extract/interaction-extractor.js';
import { llmConfig } from '../../processors/extract/llm-config.js';
import { Secret } from '../../schemas/connection-config.js';
import { ElasticsearchDatastore } from '../../streams/elasticsearch/elasticsearch-datastore.js';
import { createKafkaClient } from '../../streams/kafka/kafka-client.js';
import { createKafkaTransport } from '../../streams/kafka/kafka-transport.js';
import { OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import { fakeExtractionReply } from '../../devkit/fake-extraction-llm.js';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../devkit/fake-openai-server.js';
import {
  collectingLogger,
  createScenarioTopics,
  describeOutcome,
  describeProgress,
  detectEpisodesOffline,
  freshScenarioNames,
  publishArticles,
  publishPoison,
  readOutcome,
  sampleArticles,
  splitSample,
  startScenarioStages,
  waitUntilSettled,
  type ScenarioNames,
} from '../harness/fault-scenario.js';
import { useLiveClients } from '../harness/live-clients.js';
import {
  chunkVersions,
  compareDocuments,
  createReplayStateTopics,
  readFullDocuments,
  replayNames,
  retriedWrites,
  withSyndicatedCopies,
  type FullDocuments,
} from '../harness/replay-scenario.js';

/**
 * S12: the product's whole chain of stages over real articles on real Kafka and Elasticsearch, with
 * both NEON variants extracting through the OpenAI-compatible client (a fake model answering from
 * the snippets, test/../devkit/fake-extraction-llm.ts); then every topic replayed from its start
 * under fresh consumer groups into fresh indices. The rebuilt indices must hold exactly the first
 * run's documents: the same ids with the same contents (all but the vector and the clock's
 * `indexed_at` / `extracted_at`), M2 interactions and dedupe survivors with their merged sources
 * included; the dead letters and the distinct mentions on the shared topics must not change.
 *
 * What made this fail before: M2 batches closed by a wall-clock linger, so a replay (fast, never
 * pausing) batched a pair's chunks otherwise, and the prompts, statements and ids followed; and the
 * dedupe stage of the replay rebuilt its window from the whole of `news.chunks.unique`, ending at
 * the first run's last chunk, so every chunk more than a window (7 days) older was unique — a
 * duplicate became a document of its own, a survivor was written back with its own source only.
 * The articles (400 of the bundled sample, with a wire service's copy of every eighth, which dedupe
 * merges) span 19 days, more than two windows, and every stage downstream of markup sees its
 * input twice (the first run's records, then the replaying stage's), the second copies once the
 * window has moved on.
 *
 * M2 batches wait at most 5 s of a quiet stream here (the product's default is 30 s): short enough
 * that a loaded machine may well pause that long mid-run and extract some batches early, which
 * must not change what the indices end with either.
 */

const live = useLiveClients();
const log = (line: string): void => console.log(`[fault S12] ${line}`);
const ARTICLES = 400;
const QUIET_MS = 5_000;
const DAY_MS = 86_400_000;

const servers: FakeOpenAiServer[] = [];
/** The runs' datastores, destroyed whatever the outcome. */
const stores: ElasticsearchDatastore[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(stores.splice(0).map((store) => store.destroy().catch(() => undefined)));
});

async function documentsOf(names: ScenarioNames): Promise<{ chunks: FullDocuments; interactions: FullDocuments }> {
  return {
    chunks: await readFullDocuments(live.es, `${names.indexPrefix}-chunks-*`),
    interactions: await readFullDocuments(live.es, `${names.indexPrefix}-interactions-*`),
  };
}

describe('S12: every topic replayed from the start into fresh indices', () => {
  it('rebuilds exactly the same documents, ids and contents, M2 interactions and dedupe survivors included', async () => {
    const transport = createKafkaTransport(
      createKafkaClient({ clientId: 'fault-s12', brokers: inject('kafkaBrokers'), logLevel: logLevel.NOTHING }),
    );
    const server = await startFakeOpenAiServer({ chat: fakeExtractionReply });
    servers.push(server);
    // One client for both runs, its replies cached by prompt as the product caches them.
    const chat = new OpenAiChatModel(
      llmConfig({
        baseUrl: server.url,
        model: 'fake-model',
        apiKey: new Secret('sk-test'),
        concurrency: 8,
        maxQueued: 10_000,
        timeoutMs: 10_000,
        retry: { attempts: 3, baseMs: 5, capMs: 50 },
      }),
      { registry: new Registry() },
    );
    const sample = await sampleArticles(ARTICLES);
    const plan = splitSample({ ...sample, accepted: withSyndicatedCopies(sample.accepted, 8, 3) }, 100);

    // The first run: the articles through the whole chain, until every stage has committed everything.
    const names = freshScenarioNames('s12');
    live.cleanup.topics.push(...(await createScenarioTopics(transport, names)));
    const firstStore = new ElasticsearchDatastore({ es: live.es, prefix: names.indexPrefix });
    stores.push(firstStore);
    const firstLog = collectingLogger();
    const started = Date.now();
    const first = await startScenarioStages(transport, names, {
      datastore: firstStore,
      extractor: new LlmInteractionExtractor(chat),
      variants: ['M1', 'M2'],
      batching: { quietMs: QUIET_MS },
      log: firstLog.log,
    });
    try {
      await publishArticles(transport, names, plan.first);
      await publishPoison(transport, names);
      await publishArticles(transport, names, plan.rest);
      await waitUntilSettled(live.admin, names, 300_000);
    } finally {
      await first.stop();
      log(`first run warnings: ${firstLog.summary()}; writes retried: ${await retriedWrites(first.registry)}`);
    }
    const before = await readOutcome(live.es, transport, names);
    const expected = await documentsOf(names);
    log(`first run in ${Date.now() - started} ms: ${describeOutcome(before)}`);

    // What the comparison rests on: M2 wrote, dedupe merged, and the news spans more than two windows.
    const m2 = [...expected.interactions.values()].filter((d) => d.variant === 'M2');
    const merged = [...expected.chunks.values()].filter((d) => (d.article_ids as string[]).length > 1);
    const times = [...expected.chunks.values()].map((d) => d.published_at as number);
    log(
      `documents: ${expected.chunks.size} chunks (${merged.length} with merged duplicates), ` +
        `${expected.interactions.size} interactions (${m2.length} M2); ` +
        `${(Math.max(...times) - Math.min(...times)) / DAY_MS} days of news`,
    );
    expect(m2.length).toBeGreaterThan(20);
    expect(merged.length).toBeGreaterThan(0);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(14 * DAY_MS);

    // The replay: every topic from its start, fresh groups, fresh indices, nothing published.
    const again = replayNames(names, 's12-replay');
    live.cleanup.topics.push(...(await createReplayStateTopics(transport, again)));
    const replayStore = new ElasticsearchDatastore({ es: live.es, prefix: again.indexPrefix });
    stores.push(replayStore);
    const replayLog = collectingLogger();
    const replayStarted = Date.now();
    const replay = await startScenarioStages(transport, again, {
      datastore: replayStore,
      extractor: new LlmInteractionExtractor(chat),
      variants: ['M1', 'M2'],
      batching: { quietMs: QUIET_MS },
      log: replayLog.log,
    });
    const progress = setInterval(
      () =>
        void describeProgress(live.admin, again).then(
          (line) => log(`replay: ${line}`),
          () => undefined,
        ),
      15_000,
    );
    try {
      await waitUntilSettled(live.admin, again, 600_000);
    } finally {
      clearInterval(progress);
      await replay.stop();
      log(`replay warnings: ${replayLog.summary()}; writes retried: ${await retriedWrites(replay.registry)}`);
    }
    const rebuilt = await documentsOf(again);
    log(
      `replay in ${Date.now() - replayStarted} ms: ${rebuilt.chunks.size} chunks, ${rebuilt.interactions.size} interactions`,
    );

    const comparisons = {
      chunks: compareDocuments(expected.chunks, rebuilt.chunks),
      interactions: compareDocuments(expected.interactions, rebuilt.interactions),
    };
    for (const [kind, { missing, unexpected, different }] of Object.entries(comparisons)) {
      const m2 = (ids: string[]) =>
        ids.filter((id) => (expected.interactions.get(id) ?? rebuilt.interactions.get(id))?.variant === 'M2');
      log(
        `${kind}: ${missing.length} missing, ${unexpected.length} unexpected, ${different.length} different` +
          (kind === 'interactions'
            ? ` (M2: ${m2(missing).length} missing, ${m2(unexpected).length} unexpected, ${m2(different.map((d) => d.split('.')[0]!)).length} different)`
            : ''),
      );
    }
    if (comparisons.chunks.different.length > 0) {
      const ids = new Set(
        comparisons.chunks.different.slice(0, 3).map((d) => d.split('.article_ids')[0]!.split('.')[0]!),
      );
      for (const [id, versions] of await chunkVersions(transport, names.topics.uniqueChunks, ids)) {
        log(`${id} on ${names.topics.uniqueChunks}: ${versions.join(' ')}`);
      }
    }
    for (const kind of ['chunks', 'interactions'] as const) {
      const { missing, unexpected, different } = comparisons[kind];
      expect(
        { missing: missing.slice(0, 5), unexpected: unexpected.slice(0, 5), different: different.slice(0, 5) },
        `${kind}: ${missing.length} missing, ${unexpected.length} unexpected, ${different.length} different`,
      ).toEqual({ missing: [], unexpected: [], different: [] });
      expect(rebuilt[kind].size, kind).toBe(expected[kind].size);
    }

    // The shared topics: the replay dead-lettered the same records and wrote no new distinct mention.
    const after = await readOutcome(live.es, transport, names);
    expect(after.deadLetters, 'dead letters').toEqual(before.deadLetters);
    const distinct = (outcome: typeof before) =>
      new Set(outcome.mentions.map(({ mention: m }) => `${m.entity_id}|${m.chunk_id}|${m.article_id}|${m.t}`));
    expect([...distinct(after)].sort(), 'distinct mentions').toEqual([...distinct(before)].sort());
    // The replay's spike stage (fresh state) raised the same episodes, each started once at the same
    // window. Their later states are logged, not held to the first run's: the replay's spike stage
    // reads every mention two or three times (the first run's, then each replaying stage's), and how
    // it counts repeats is the spike stage's to answer for (see the report of this test).
    const replayed = await readOutcome(live.es, transport, again);
    const starts = (episodes: typeof before.spikeEpisodes) =>
      [...episodes].map(([key, states]) => `${key} ${states.filter((s) => s.startsWith('STARTED@')).join(' ')}`);
    expect(starts(replayed.spikeEpisodes), 'spike episodes and their starts').toEqual(starts(before.spikeEpisodes));
    const changed = [...replayed.spikeEpisodes].filter(
      ([key, states]) => JSON.stringify(states) !== JSON.stringify(before.spikeEpisodes.get(key)),
    );
    log(
      `spike episodes: first run ${before.spikeEpisodes.size}, replay ${replayed.spikeEpisodes.size}, ` +
        `${changed.length} with other states (${changed
          .slice(0, 3)
          .map(([key, states]) => `${key}: ${states.join(' ')} vs ${before.spikeEpisodes.get(key)?.join(' ')}`)
          .join('; ')}); mentions on the topic ${after.mentions.length} (first run ${before.mentions.length}); ` +
        `the detector's verdict on them ${
          JSON.stringify(Object.fromEntries(detectEpisodesOffline(replayed.mentions))) ===
          JSON.stringify(Object.fromEntries(replayed.spikeEpisodes))
            ? 'equals'
            : 'differs from'
        } the replay's`,
    );

    await chat.close();
    await transport.close();
  }, 900_000);
});

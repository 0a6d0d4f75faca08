import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ConfiguredTargets, type ExtractionTargets } from '../../processors/extract/extraction-targets.js';
import {
  OfflineInteractionExtractor,
  type ExtractionResult,
  type InteractionExtractor,
} from '../../processors/extract/interaction-extractor.js';
import { SpikeBackfill, type BackfillOptions } from '../../processors/extract/spike-backfill.js';
import { SpikeTargets } from '../../processors/spikes/spike-targets.js';
import type { Chunk, ChunkEntity, Interaction, SpikeAlert } from '../../schemas/records.generated.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';
import { stageDecoder, topicRecord } from '../../streams/runtime/record-codec.js';
import type { Transport } from '../../streams/runtime/transport.js';
import { readTopicOnce } from '../../streams/runtime/topic-tail.js';
import { startExtractStage } from '../../streams/stages/extract-stage.js';
import { FIXTURES } from './avro-fixtures.js';
import { chunkOf, DAY, T0 } from './extract-fixtures.js';

/**
 * Back-fill on spikes: an entity's chunks from before its spike alert reached extraction are
 * extracted for it once it is a target, with the records a forward extraction writes.
 */

const DOJA = 'e-doja-cat';
const EXTRACTED_AT = T0 + 30 * DAY;

/** A report of day `day` about Doja Cat, with one statement she is the subject of. */
function report(day: number, n = 0): Chunk {
  return chunkOf(
    `<e>Doja Cat</e> performed in <e>Paris</e> on day ${day}, show number ${n}.`,
    [
      ['Doja Cat', 'PERSON'],
      ['Paris', 'LOCATION'],
    ],
    { t: T0 + day * DAY + n * 60_000, article: `art-${day}-${n}` },
  );
}

/** The first state of a day-granularity episode of Doja Cat that started on `day`. */
function started(day: number): SpikeAlert {
  return {
    ...FIXTURES.SpikeAlert,
    id: `spike-doja-${day}`,
    entity_id: DOJA,
    entity_name: 'Doja Cat',
    state: 'STARTED',
    window_start: T0 + day * DAY,
    window_end: T0 + (day + 1) * DAY,
    episode_start: T0 + day * DAY,
  };
}

/** Targets from spike alerts, with the scope they have in the product: from a day before the episode. */
const spikeTargets = () => new SpikeTargets({ beforeStartMs: DAY, afterEndMs: DAY });

async function publish(transport: Transport, chunks: readonly Chunk[]): Promise<void> {
  await transport.producer().send(
    TOPICS.uniqueChunks,
    chunks.map((c) => topicRecord(TOPICS.uniqueChunks, 'Chunk', c.article_id, c)),
  );
}

async function interactionsOn(transport: Transport): Promise<Interaction[]> {
  const decode = stageDecoder('Interaction');
  const out: Interaction[] = [];
  await readTopicOnce(transport, TOPICS.interactions, (r) => out.push(decode(r)), { purpose: 'test' });
  return out;
}

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 20) {
    if (waited > 10_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function committed(transport: Transport, group: string): Promise<bigint> {
  const offsets = await transport.committedOffsets(group, TOPICS.uniqueChunks);
  return offsets.reduce<bigint>((sum, o) => sum + (o ?? 0n), 0n);
}

interface Run {
  transport: Transport;
  registry: Registry;
  targets: SpikeTargets;
}

/**
 * Day 0: a report while Doja Cat is nobody's target. Then her spike starts on day 1, and a day-1
 * report arrives: the stage sees the day-0 chunk before it knows of the spike.
 */
async function spikeAfterEarlierChunk(
  backfill: Partial<BackfillOptions>,
  extractor: InteractionExtractor = new OfflineInteractionExtractor(() => EXTRACTED_AT),
  earlier: readonly Chunk[] = [report(0)],
): Promise<Run> {
  const transport = createEmbeddedTransport();
  await transport.ensureTopics(localTopicSpecs(1));
  const registry = new Registry();
  const targets = spikeTargets();
  const group = 'extract-backfill';
  const stage = await startExtractStage(transport, { extractor, targets, groupId: group, registry, backfill });
  try {
    await publish(transport, earlier);
    await until(async () => (await committed(transport, group)) === BigInt(earlier.length), 'the earlier chunks');
    targets.apply(started(1));
    await publish(transport, [report(1)]);
    await until(async () => (await committed(transport, group)) === BigInt(earlier.length + 1), 'the spike chunk');
  } finally {
    await stage.stop();
  }
  return { transport, registry, targets };
}

const ofChunk = (interactions: Interaction[], chunk: Chunk) =>
  interactions.filter((i) => i.chunk_ids.includes(chunk.id) && i.subject_id === DOJA);

async function counter(registry: Registry, outcome: string): Promise<number> {
  const metric = await registry.getSingleMetric('neon_extract_backfilled_chunks_total')?.get();
  return metric?.values.find((v) => v.labels['outcome'] === outcome)?.value ?? 0;
}

describe('the extract stage back-filling an entity that starts spiking', () => {
  it('extracts the chunk that came before the spike alert (without back-fill it never is)', async () => {
    const without = await interactionsOn((await spikeAfterEarlierChunk({ lookbackMs: 0 })).transport);
    expect(ofChunk(without, report(1))).toHaveLength(1);
    expect(ofChunk(without, report(0))).toEqual([]);

    const run = await spikeAfterEarlierChunk({});
    const written = await interactionsOn(run.transport);
    expect(ofChunk(written, report(1))).toHaveLength(1);
    expect(ofChunk(written, report(0)).map((i) => i.text)).toEqual([
      'Doja Cat performed in Paris on day 0, show number 0.',
    ]);
    expect(await counter(run.registry, 'extracted')).toBe(1);
  });

  it('writes the very records a forward extraction of the chunk writes (same ids, same contents)', async () => {
    const run = await spikeAfterEarlierChunk({});
    const backfilled = ofChunk(await interactionsOn(run.transport), report(0));

    // Forward: the same chunk with Doja Cat a target from the start.
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const stage = await startExtractStage(transport, {
      extractor: new OfflineInteractionExtractor(() => EXTRACTED_AT),
      targets: new ConfiguredTargets(['Doja Cat']),
      groupId: 'extract-forward',
    });
    try {
      await publish(transport, [report(0)]);
      await until(async () => (await committed(transport, 'extract-forward')) === 1n, 'the forward chunk');
    } finally {
      await stage.stop();
    }
    const forward = ofChunk(await interactionsOn(transport), report(0));
    expect(forward.length).toBeGreaterThan(0);
    expect(backfilled).toEqual(forward);
  });

  it('back-fills at most the cap per episode, the chunks nearest the spike, and counts the rest', async () => {
    const earlier = [report(0, 0), report(0, 1), report(0, 2), report(0, 3), report(0, 4)];
    const run = await spikeAfterEarlierChunk({ maxChunksPerEpisode: 2 }, undefined, earlier);
    const written = await interactionsOn(run.transport);
    const backfilled = earlier.filter((c) => ofChunk(written, c).length > 0);
    expect(backfilled.map((c) => c.id)).toEqual([earlier[3]!.id, earlier[4]!.id]);
    expect(await counter(run.registry, 'extracted')).toBe(2);
    expect(await counter(run.registry, 'over_cap')).toBe(3);
  });

  it('runs no more back-fill calls at once than its concurrency, beside forward calls', async () => {
    const offline = new OfflineInteractionExtractor(() => EXTRACTED_AT);
    let running = 0;
    let most = 0;
    const slow: InteractionExtractor = {
      model: offline.model,
      variants: offline.variants,
      m1: async (subject: ChunkEntity, chunk: Chunk): Promise<ExtractionResult> => {
        const isBackfill = chunk.t < T0 + DAY;
        if (isBackfill) most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 15));
        if (isBackfill) running -= 1;
        return offline.m1(subject, chunk);
      },
      m2: () => offline.m2(),
    };
    const earlier = Array.from({ length: 6 }, (_, n) => report(0, n));
    const run = await spikeAfterEarlierChunk({ concurrency: 1 }, slow, earlier);
    // Forward, nothing of day 0 was extracted (no target then): every day-0 call was a back-fill.
    expect(most).toBe(1);
    expect(await counter(run.registry, 'extracted')).toBe(6);
  });

  it('finds the chunks from before a restart: they are read back from the topic up to the committed position', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const group = 'extract-restart';
    const extractor = new OfflineInteractionExtractor(() => EXTRACTED_AT);
    const first = await startExtractStage(transport, { extractor, targets: spikeTargets(), groupId: group });
    try {
      await publish(transport, [report(0)]);
      await until(async () => (await committed(transport, group)) === 1n, 'the earlier chunk');
    } finally {
      await first.stop();
    }
    // A new process: nothing in memory, the spike known from the alerts topic.
    const targets = spikeTargets();
    targets.apply(started(1));
    const second = await startExtractStage(transport, { extractor, targets, groupId: group });
    try {
      await publish(transport, [report(1)]);
      await until(async () => (await committed(transport, group)) === 2n, 'the spike chunk');
    } finally {
      await second.stop();
    }
    expect(ofChunk(await interactionsOn(transport), report(0))).toHaveLength(1);
  });
});

describe('SpikeBackfill', () => {
  const targetsFrom = (from: number): ExtractionTargets => ({
    isTarget: (id, t) => id === DOJA && t >= from,
    list: () => [DOJA],
  });
  const subjects = (targets: ExtractionTargets, chunk: Chunk) =>
    new Set(chunk.entities.filter((e) => targets.isTarget(e.id, chunk.t)).map((e) => e.id));
  const observe = (backfill: SpikeBackfill, targets: ExtractionTargets, chunk: Chunk) =>
    backfill.observe(chunk, subjects(targets, chunk), targets);

  it('back-fills only chunks inside the target scope and the look-back, once', () => {
    const backfill = new SpikeBackfill({ lookbackMs: 3 * DAY });
    const nobody: ExtractionTargets = { isTarget: () => false, list: () => [] };
    const old = report(0);
    const outOfScope = report(2);
    const inScope = report(4);
    for (const chunk of [old, outOfScope, inScope]) expect(observe(backfill, nobody, chunk).calls).toEqual([]);
    // Doja Cat is a target from day 3: day 2 is before her scope, day 0 past the look-back from day 4.
    const targets = targetsFrom(T0 + 3 * DAY);
    const decision = observe(backfill, targets, report(5));
    expect(decision.calls.map((c) => [c.subject.id, c.chunk.id])).toEqual([[DOJA, inScope.id]]);
    // The next chunk, or the same one again (a redelivery), triggers nothing more.
    expect(observe(backfill, targets, report(5)).calls).toEqual([]);
    expect(observe(backfill, targets, report(5, 1)).calls).toEqual([]);
  });

  it('takes the newest version of a chunk written again by dedupe', () => {
    const backfill = new SpikeBackfill();
    const nobody: ExtractionTargets = { isTarget: () => false, list: () => [] };
    const first = report(0);
    const merged: Chunk = {
      ...first,
      provenance: [
        ...first.provenance,
        { article_id: 'wire-1', url: 'https://wire.example.org/1', source: 'wire', published_at: first.t + 1 },
      ],
    };
    observe(backfill, nobody, first);
    observe(backfill, nobody, merged);
    const calls = observe(backfill, targetsFrom(T0), report(1)).calls;
    expect(calls.map((c) => c.chunk)).toEqual([merged]);
  });

  it('forgets chunks past its bound on held chunks, the oldest first', () => {
    const backfill = new SpikeBackfill({ maxBufferedChunks: 2 });
    const nobody: ExtractionTargets = { isTarget: () => false, list: () => [] };
    const chunks = [report(0, 0), report(0, 1), report(0, 2)];
    for (const chunk of chunks) observe(backfill, nobody, chunk);
    expect(backfill.size()).toBe(2);
    const calls = observe(backfill, targetsFrom(T0), report(1)).calls;
    expect(calls.map((c) => c.chunk.id)).toEqual([chunks[1]!.id, chunks[2]!.id]);
  });

  it('is off with a zero look-back', () => {
    const backfill = new SpikeBackfill({ lookbackMs: 0 });
    const nobody: ExtractionTargets = { isTarget: () => false, list: () => [] };
    observe(backfill, nobody, report(0));
    expect(backfill.size()).toBe(0);
    expect(observe(backfill, targetsFrom(T0), report(1)).calls).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import type { Timer } from '../../processors/extract/batch-rounds.js';
import type { ChatModel } from '../../processors/extract/chat-model.js';
import { extractFromChunks } from '../../processors/extract/extraction-plan.js';
import { ALL_ENTITIES } from '../../processors/extract/extraction-targets.js';
import { LlmInteractionExtractor } from '../../processors/extract/interaction-extractor.js';
import type { PairBatchOptions } from '../../processors/extract/pair-batches.js';
import { StreamExtraction } from '../../processors/extract/stream-extraction.js';
import type { Chunk, EntityType, Interaction } from '../../schemas/records.generated.js';
import { fakeExtractionReply } from '../../devkit/fake-extraction-llm.js';
import { chunkOf, DAY, T0 } from './extract-fixtures.js';

/**
 * M2 as a stream: the same chunks in the same order, grouped into polls differently, with quiet
 * pauses that make the wall-clock flush extract open batches early, and with calls finishing in a
 * different order, must end with the same interactions — the same ids and the same contents — as a
 * run that saw them all at once, and as the finite extraction of the list.
 */

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const PEOPLE = ['Doja Cat', 'Jared Leto', 'Emmanuel Macron', 'Olaf Scholz', 'Joe Biden'];
const PLACES = ['Paris', 'Berlin', 'Washington'];
const GROUPS = ['Chanel', 'NATO'];

/** Six days of short reports about a few people, day-dated like the bundled sample, some at a later hour. */
function newsChunks(): Chunk[] {
  const next = random(7);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const chunks: Chunk[] = [];
  const entities = (names: string[]): [string, EntityType][] =>
    names.map((n) => [n, PEOPLE.includes(n) ? 'PERSON' : PLACES.includes(n) ? 'LOCATION' : 'ORGANIZATION']);
  for (let day = 0; day < 6; day++) {
    const perDay = 5 + Math.floor(next() * 4);
    for (let i = 0; i < perDay; i++) {
      const a = pick(PEOPLE.slice(0, 3));
      const b = pick(PEOPLE.filter((p) => p !== a));
      const place = pick(PLACES);
      const group = pick(GROUPS);
      const t = T0 + day * DAY + (next() < 0.2 ? 5 * 3_600_000 : 0);
      const article = `art-${day}-${i}`;
      const first = `<e>${a}</e> met <e>${b}</e> in <e>${place}</e> to discuss <e>${group}</e> on day ${day}.`;
      const second = `<e>${b}</e> praised <e>${a}</e> after talks number ${i} in <e>${place}</e>.`;
      chunks.push(chunkOf(first, entities([a, b, place, group]), { t, article, id: `${article}:v1:0` }));
      if (next() < 0.3) {
        // A second window of the same article, sharing its first sentence.
        chunks.push(
          chunkOf(`${first} ${second}`, entities([a, b, place, group]), { t, article, id: `${article}:v1:1` }),
        );
      }
    }
    // A survivor of the day before, written again by dedupe with a syndicated copy's source merged in.
    if (day > 0) {
      const survivor = chunks.find((c) => c.t < T0 + day * DAY && c.t >= T0 + (day - 1) * DAY)!;
      chunks.push({
        ...survivor,
        provenance: [
          ...survivor.provenance,
          {
            article_id: `wire-${survivor.article_id}`,
            url: `https://wire.example.org/${survivor.article_id}`,
            source: 'wire.example.org',
            published_at: survivor.t + 3_600_000,
          },
        ],
      });
    }
  }
  return chunks;
}

/** The fake LLM of the integration tests, in process, answering after a random number of turns. */
function fakeChat(delay: () => Promise<void>, prompts?: string[]): ChatModel {
  return {
    model: 'fake-model',
    complete: async (request) => {
      prompts?.push(request.messages.map((m) => m.content).join('\n'));
      await delay();
      const text = fakeExtractionReply({
        model: 'fake-model',
        messages: request.messages,
        json: true,
        body: {},
        headers: {},
      });
      return { text, model: 'fake-model', promptTokens: 0, completionTokens: 0, cached: false };
    },
    close: () => Promise.resolve(),
  };
}

/** A clock the test moves: the quiet-stream flush fires when the test says the stream paused. */
class ManualTimer implements Timer {
  private now = 0;
  private next = 0;
  private readonly pending = new Map<number, { run: () => void; at: number }>();

  set(run: () => void, ms: number): unknown {
    this.next += 1;
    this.pending.set(this.next, { run, at: this.now + ms });
    return this.next;
  }

  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  advance(ms: number): void {
    this.now += ms;
    for (const [handle, { run, at }] of [...this.pending]) {
      if (at > this.now) continue;
      this.pending.delete(handle);
      run();
    }
  }
}

const BATCHING: Partial<PairBatchOptions> = { k: 3, spanMs: DAY, maxHeldChunks: 6, quietMs: 1_000 };
const SELECTION = { minCooccurrences: 2, maxObjects: 3 };

interface Arrival {
  /** Chunks per poll, in order. */
  polls: number[];
  /** The stream goes quiet after a poll (longer than quietMs). */
  quietAfter: (poll: number) => boolean;
  /** Turns a call or a write takes before it answers. */
  turns: () => number;
}

/**
 * The chunks through StreamExtraction as the extract stage drives it (plan in order, calls as
 * sinks, drain at stop); what an index would hold at the end: the last record written per id.
 */
async function streamed(chunks: readonly Chunk[], arrival: Arrival, prompts?: string[]) {
  const timer = new ManualTimer();
  const wait = async () => {
    for (let n = arrival.turns(); n > 0; n--) await new Promise((resolve) => setImmediate(resolve));
  };
  const index = new Map<string, Interaction>();
  const extraction = new StreamExtraction({
    extractor: new LlmInteractionExtractor(fakeChat(wait, prompts), { now: () => 0 }),
    targets: ALL_ENTITIES,
    batching: BATCHING,
    pairSelection: SELECTION,
    timer,
    // Records go out in the order they are handed over (one partition per key), and are
    // acknowledged later.
    write: async (records) => {
      for (const record of records) index.set(record.id, record);
      await wait();
    },
  });
  const calls: Promise<void>[] = [];
  let at = 0;
  for (const [poll, size] of arrival.polls.entries()) {
    for (const chunk of chunks.slice(at, at + size)) {
      const { m1, m2 } = extraction.plan(chunk);
      calls.push(...m1.map((call) => extraction.m1(call)), ...m2.map((w) => extraction.m2(w)));
    }
    at += size;
    await wait();
    if (arrival.quietAfter(poll)) timer.advance(BATCHING.quietMs!);
  }
  expect(at).toBe(chunks.length);
  await extraction.drain();
  await Promise.all(calls);
  return { index, started: { ...extraction.rounds.started } };
}

/** Sorted, with the extraction time (wall clock) left out. */
const contents = (records: Iterable<Interaction>) =>
  [...records].map((r) => ({ ...r, extracted_at: 0 })).sort((a, b) => (a.id < b.id ? -1 : 1));

/** Random poll sizes of 1 to `most` chunks adding up to `total`. */
function polls(total: number, most: number, next: () => number): number[] {
  const sizes: number[] = [];
  for (let left = total; left > 0;) {
    const size = Math.min(left, 1 + Math.floor(next() * most));
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

describe('M2 over a stream', () => {
  const chunks = newsChunks();

  it('gives the same interactions, ids and contents, however the chunks were grouped, paused and answered', async () => {
    const allAtOnce = await streamed(chunks, { polls: [chunks.length], quietAfter: () => false, turns: () => 0 });
    const reference = contents(allAtOnce.index.values());
    // The rules that close batches all took part, and M2 wrote something.
    expect(allAtOnce.started.full).toBeGreaterThan(0);
    expect(allAtOnce.started.event_time).toBeGreaterThan(0);
    expect(allAtOnce.started.held).toBeGreaterThan(0);
    expect(allAtOnce.started.quiet).toBe(0);
    expect(reference.filter((r) => r.variant === 'M2').length).toBeGreaterThan(10);
    expect(reference.some((r) => r.variant === 'M2' && r.chunk_ids.length > 1)).toBe(true);

    const finite = await extractFromChunks(chunks, {
      extractor: new LlmInteractionExtractor(
        fakeChat(() => Promise.resolve()),
        { now: () => 0 },
      ),
      targets: ALL_ENTITIES,
      variants: ['M1', 'M2'],
      batching: BATCHING,
      pairSelection: SELECTION,
    });
    expect(contents(finite.interactions)).toEqual(reference);

    for (const seed of [1, 2, 3]) {
      const next = random(seed);
      const arrival: Arrival = {
        polls: polls(chunks.length, 5, next),
        quietAfter: () => next() < 0.5,
        turns: () => Math.floor(next() * 6),
      };
      const run = await streamed(chunks, arrival);
      // The quiet-stream flush extracted batches early in these runs…
      expect(run.started.quiet, `seed ${seed}`).toBeGreaterThan(0);
      // … and nothing in the end depends on it, nor on the polls or the order calls finished in.
      expect(contents(run.index.values()), `seed ${seed}`).toEqual(reference);
    }

    // One chunk at a time with a pause after each: every batch extracted early, some several times.
    const next = random(9);
    const trickled = await streamed(chunks, {
      polls: chunks.map(() => 1),
      quietAfter: () => true,
      turns: () => Math.floor(next() * 3),
    });
    expect(trickled.started.quiet).toBeGreaterThan(allAtOnce.started.full);
    expect(contents(trickled.index.values())).toEqual(reference);
  });

  it("reaches M2 with a pair's first co-occurring chunk, and cites it", async () => {
    const leto = (i: number) =>
      chunkOf(
        `<e>Doja Cat</e> met <e>Jared Leto</e> at the gala number ${i}.`,
        [
          ['Doja Cat', 'PERSON'],
          ['Jared Leto', 'PERSON'],
        ],
        { t: T0 + i, article: `art-leto-${i}` },
      );
    const prompts: string[] = [];
    const { index } = await streamed(
      [leto(1), leto(2)],
      { polls: [1, 1], quietAfter: () => false, turns: () => 0 },
      prompts,
    );
    const m2Prompts = prompts.filter((p) => p.includes('the interactions between Doja Cat and Jared Leto'));
    expect(m2Prompts).toHaveLength(1);
    expect(m2Prompts[0]).toContain('gala number 1');
    expect(m2Prompts[0]).toContain('gala number 2');
    const m2 = [...index.values()].filter((r) => r.variant === 'M2');
    expect(m2.map((r) => r.chunk_ids)).toContainEqual(['art-leto-1:v1:0']);
  });
});

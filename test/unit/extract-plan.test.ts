import { describe, expect, it } from 'vitest';
import { extractConfigFromEnv } from '../../processors/extract/extract-config.js';
import { ExtractionPlanner, extractFromChunks } from '../../processors/extract/extraction-plan.js';
import { ALL_ENTITIES, ConfiguredTargets, unionTargets } from '../../processors/extract/extraction-targets.js';
import type { ExtractionResult, InteractionExtractor } from '../../processors/extract/interaction-extractor.js';
import { PairBatches } from '../../processors/extract/pair-batches.js';
import { PairSelector } from '../../processors/extract/pair-selection.js';
import { SpikeTargets } from '../../processors/spikes/spike-targets.js';
import type { Chunk, ChunkEntity } from '../../schemas/records.generated.js';
import { chunkOf, DAY, T0 } from './extract-fixtures.js';

/** A chunk that only lists entities: pair selection and planning read nothing else. */
const withEntities = (names: string[], t = T0, id = `${names.join('+')}@${t}`) =>
  chunkOf(names.map((n) => `<e>${n}</e>`).join(' and '), names, { t, id, article: id });

describe('extraction targets', () => {
  it('takes ids or names, adds and removes at run time, and unites with spiking entities in event time', () => {
    const configured = new ConfiguredTargets(['Doja Cat', 'e-tiktok']);
    expect(configured.list()).toEqual(['e-doja-cat', 'e-tiktok']);
    expect(configured.add('Jared Leto')).toBe('e-jared-leto');
    expect(configured.remove('e-tiktok')).toBe(true);
    expect(() => configured.add('  ')).toThrow(/must not be empty/);

    const spiking = new SpikeTargets({ beforeStartMs: DAY, afterEndMs: DAY });
    spiking.apply({
      id: 'spike:e-goma:day:2023-05-02',
      entity_id: 'e-goma',
      state: 'STARTED',
      episode_start: T0 - (T0 % DAY),
      window_start: T0 - 2 * DAY,
      window_end: T0 + DAY,
    } as Parameters<SpikeTargets['apply']>[0]);
    const targets = unionTargets(configured, spiking);
    expect(targets.isTarget('e-goma', T0)).toBe(true);
    expect(targets.isTarget('e-goma', T0 - 5 * DAY)).toBe(false); // before the episode: not a target
    expect(targets.isTarget('e-jared-leto', T0 - 5 * DAY)).toBe(true);
    expect(targets.list(T0)).toEqual(['e-doja-cat', 'e-goma', 'e-jared-leto']);
  });
});

describe('M2 pair selection by co-occurrence TF-IDF', () => {
  it('prefers the objects particular to the subject over the ones in every story', () => {
    const selector = new PairSelector({ maxObjects: 2, minCooccurrences: 2 });
    const stream: Chunk[] = [];
    // The United States is in every chunk; Jared Leto and the Met Gala only with Doja Cat.
    for (let i = 0; i < 6; i++)
      stream.push(withEntities(['Doja Cat', 'United States', i < 4 ? 'Jared Leto' : 'Met Gala'], T0 + i));
    stream.push(withEntities(['Doja Cat', 'United States', 'Met Gala'], T0 + 7));
    for (let i = 0; i < 20; i++) stream.push(withEntities(['United States', `Other ${i}`], T0 + 10 + i));
    for (const chunk of stream) selector.observe(chunk, chunk.entity_ids.includes('e-doja-cat') ? ['e-doja-cat'] : []);

    const scored = selector.scoredObjects('e-doja-cat', T0 + 40);
    expect(scored.map((o) => o.objectId)).toEqual(['e-jared-leto', 'e-met-gala']);
    expect(scored[0]!.cooccurrences).toBe(4);
    expect(
      selector.selectedObjects('e-doja-cat', withEntities(['Doja Cat', 'United States', 'Met Gala'], T0 + 41)),
    ).toEqual(['e-met-gala']);
  });

  it('forgets co-occurrences that fell out of the event-time window', () => {
    const selector = new PairSelector({ windowMs: 3 * DAY, minCooccurrences: 1 });
    selector.observe(withEntities(['Doja Cat', 'Jared Leto'], T0), ['e-doja-cat']);
    selector.observe(withEntities(['Other'], T0), []);
    expect(selector.scoredObjects('e-doja-cat', T0).map((o) => o.objectId)).toEqual(['e-jared-leto']);
    selector.observe(withEntities(['Other'], T0 + 10 * DAY), []);
    expect(selector.scoredObjects('e-doja-cat', T0 + 10 * DAY)).toEqual([]);
  });
});

describe('M2 batches', () => {
  const [s, o] = withEntities(['Doja Cat', 'Jared Leto']).entities as [ChunkEntity, ChunkEntity];
  const [, , p] = withEntities(['Doja Cat', 'Jared Leto', 'Paris']).entities as [ChunkEntity, ChunkEntity, ChunkEntity];
  const chunk = (i: number, t = T0 + i) => withEntities(['Doja Cat', 'Jared Leto', 'Paris'], t, `c${i}`);

  it('closes a batch at k chunks, in time order, and a chunk already in it joins once', () => {
    const batches = new PairBatches({ k: 3 });
    // The earlier chunks of the pair come in with the chunk that opens its batch.
    expect(batches.add(s, o, chunk(2), [chunk(0)]).full).toBe(false);
    expect(batches.add(s, o, chunk(2)).full).toBe(false);
    const { batch, full } = batches.add(s, o, chunk(1));
    expect(full).toBe(true);
    expect(batch.chunks.map((c) => c.id)).toEqual(['c0', 'c1', 'c2']);
    expect(batch.closedBy).toBe('full');
    // The earlier chunk opened nothing and waits for nothing: only arrivals are held.
    expect([...batch.held].sort()).toEqual(['c1', 'c2']);
    expect(batches.size).toBe(0);
    expect(() => new PairBatches({ k: 0 })).toThrow(/positive integer/);
  });

  it('closes by event time: once a chunk of any pair is a span past the chunk that opened the batch', () => {
    const batches = new PairBatches({ k: 10, spanMs: DAY });
    batches.add(s, o, chunk(1, T0));
    batches.add(s, p, chunk(2, T0 + DAY / 2));
    expect(batches.advance(T0 + DAY - 1)).toEqual([]);
    const closed = batches.advance(T0 + DAY);
    expect(closed.map((b) => [b.object.id, b.closedBy])).toEqual([['e-jared-leto', 'event_time']]);
    // Event time never goes back: an older chunk does not reopen what the stream has passed.
    expect(batches.advance(T0)).toEqual([]);
    expect(batches.drain().map((b) => [b.object.id, b.closedBy])).toEqual([['e-paris', 'stop']]);
  });

  it('counts each waiting chunk once, and past the bound closes the batches opened first', () => {
    const batches = new PairBatches({ k: 10, maxHeldChunks: 2 });
    batches.add(s, o, chunk(1));
    batches.add(s, p, chunk(1)); // the same chunk in a second pair: still one held chunk
    batches.add(s, o, chunk(2));
    expect(batches.heldChunks).toBe(2);
    expect(batches.enforceHeldBound()).toEqual([]);
    batches.add(s, p, chunk(3));
    expect(batches.heldChunks).toBe(3);
    expect(batches.enforceHeldBound().map((b) => [b.object.id, b.closedBy])).toEqual([['e-jared-leto', 'held']]);
    expect(batches.heldChunks).toBe(2);
  });

  it('takes a newer version of a chunk it holds (more sources), and ignores the same version', () => {
    const batches = new PairBatches({ k: 10 });
    const { batch } = batches.add(s, o, chunk(1));
    expect(batches.update(chunk(1))).toEqual([]);
    const syndicated = {
      ...chunk(1),
      provenance: [...chunk(1).provenance, { ...chunk(1).provenance[0]!, article_id: 'wire' }],
    };
    expect(batches.update(syndicated)).toEqual([batch]);
    expect(batch.chunks[0]!.provenance.map((q) => q.article_id)).toEqual(['c1', 'wire']);
  });
});

describe('the extraction planner', () => {
  const pairOf = (chunks: Chunk[]) => {
    const planner = new ExtractionPlanner(new ConfiguredTargets(['Doja Cat']), {
      m2: true,
      batching: { k: 4 },
      pairSelection: { minCooccurrences: 2 },
    });
    return chunks.map((c) => planner.plan(c));
  };

  it("puts a pair's first co-occurring chunk in its first batch", () => {
    const chunks = [1, 2].map((i) => withEntities(['Doja Cat', 'Jared Leto'], T0 + i, `c${i}`));
    const [first, second] = pairOf(chunks);
    // Selected only from its second shared chunk on (min co-occurrences 2) …
    expect(first!.joined).toEqual([]);
    // … which opens the pair's batch with the first one in it.
    expect(second!.joined.map((b) => b.chunks.map((c) => c.id))).toEqual([['c1', 'c2']]);
  });

  it('counts a chunk seen again (a survivor re-emitted with more sources) once, and joins it to nothing new', () => {
    const planner = new ExtractionPlanner(new ConfiguredTargets(['Doja Cat']), {
      m2: true,
      pairSelection: { minCooccurrences: 3 },
    });
    const c1 = withEntities(['Doja Cat', 'Jared Leto'], T0 + 1, 'c1');
    planner.plan(c1);
    const again = planner.plan({ ...c1, provenance: [...c1.provenance, { ...c1.provenance[0]!, article_id: 'wire' }] });
    expect(again.firstSight).toBe(false);
    expect(again.joined).toEqual([]);
    expect(planner.selector!.scoredObjects('e-doja-cat', T0 + 10)).toEqual([]); // one shared chunk, not two
    const third = planner.plan(withEntities(['Doja Cat', 'Jared Leto'], T0 + 2, 'c2'));
    expect(third.joined).toEqual([]); // two shared chunks: still below three
    expect(
      planner.plan(withEntities(['Doja Cat', 'Jared Leto'], T0 + 3, 'c3')).joined.map((b) => b.chunks.length),
    ).toEqual([3]);
  });
});

/** An extractor that records its calls and returns one interaction per call. */
function countingExtractor(): InteractionExtractor & { calls: string[] } {
  const calls: string[] = [];
  const result = (
    variant: 'M1' | 'M2',
    subject: ChunkEntity,
    chunks: readonly Chunk[],
    object?: ChunkEntity,
  ): ExtractionResult => ({
    interactions: [
      {
        id: `${variant}/${subject.id}/${object?.id ?? ''}/${chunks.map((c) => c.id).join(',')}`,
        t: chunks[0]!.t,
        subject_id: subject.id,
        subject_name: subject.name,
        object_id: object?.id ?? null,
        object_name: object?.name ?? null,
        text: 'x',
        title: '',
        variant,
        chunk_ids: chunks.map((c) => c.id),
        article_ids: [],
        urls: [],
        model: 'counting',
        extracted_at: 0,
      },
    ],
    rejected: {},
    repaired: 0,
  });
  return {
    calls,
    model: 'counting',
    variants: ['M1', 'M2'],
    m1: (subject, chunk) => {
      calls.push(`M1 ${subject.id} ${chunk.id}`);
      return Promise.resolve(result('M1', subject, [chunk]));
    },
    m2: (subject, object, batch) => {
      calls.push(`M2 ${subject.id} ${object.id} ${batch.length}`);
      return Promise.resolve(result('M2', subject, batch, object));
    },
  };
}

describe('extraction over a finite list of chunks', () => {
  it('calls M1 per targeted chunk and subject, skips untargeted chunks, and batches selected pairs k at a time', async () => {
    const chunks = [
      ...Array.from({ length: 5 }, (_, i) => withEntities(['Doja Cat', 'Jared Leto'], T0 + i * 1000)),
      withEntities(['Paris', 'France'], T0 + 9_000),
      withEntities(['Rome'], T0 + 9_500),
    ];
    const extractor = countingExtractor();
    const report = await extractFromChunks(chunks, {
      extractor,
      targets: new ConfiguredTargets(['Doja Cat']),
      variants: ['M1', 'M2'],
      batching: { k: 2 },
      pairSelection: { minCooccurrences: 2 },
    });
    expect(report.skippedNoTarget).toBe(2);
    expect(report.calls).toEqual({ M1: 5, M2: 3 });
    // The pair is selected at its second co-occurrence, and its first joins that batch: chunks 1–5
    // in batches of k = 2, the last one closed at the end of the list.
    expect(extractor.calls.filter((c) => c.startsWith('M2'))).toEqual([
      'M2 e-doja-cat e-jared-leto 2',
      'M2 e-doja-cat e-jared-leto 2',
      'M2 e-doja-cat e-jared-leto 1',
    ]);
    expect(report.m2BatchSizes).toEqual([2, 2, 1]);
    expect(report.interactions).toHaveLength(8);
  });

  it('plans nothing for a chunk without targets, and everything with ALL_ENTITIES', () => {
    const chunk = withEntities(['Paris', 'France']);
    const subjects = (targets: typeof ALL_ENTITIES) =>
      new ExtractionPlanner(targets, { m2: false }).plan(chunk).subjects.map((e) => e.id);
    expect(subjects(new ConfiguredTargets(['Doja Cat']))).toEqual([]);
    expect(subjects(ALL_ENTITIES)).toEqual(['e-paris', 'e-france']);
  });
});

describe('extraction configuration', () => {
  it('reads the defaults, and reports every problem at once', () => {
    const ok = extractConfigFromEnv({ NEON_EXTRACT_SUBJECTS: 'Doja Cat, e-tiktok', NEON_EXTRACT_VARIANTS: 'm1' });
    expect(ok).toMatchObject({
      ok: true,
      config: {
        variants: ['M1'],
        subjects: ['Doja Cat', 'e-tiktok'],
        targets: undefined,
        batching: { k: 4, spanMs: DAY, quietMs: 30_000 },
      },
    });
    const bad = extractConfigFromEnv({
      NEON_EXTRACT_VARIANTS: 'M3',
      NEON_EXTRACT_M2_K: '0',
      NEON_EXTRACT_TARGETS: 'some',
    });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems.map((p) => p.split(':')[0])).toEqual([
      'NEON_EXTRACT_VARIANTS',
      'NEON_EXTRACT_TARGETS',
      'NEON_EXTRACT_M2_K',
    ]);
  });
});

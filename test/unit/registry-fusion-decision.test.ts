import { describe, expect, it } from 'vitest';
import { decodeRecord } from '../../schemas/avro-codec.js';
import type { RegistryEntity } from '../../schemas/records.generated.js';
import { createEmbeddedTransport } from '../../streams/embedded/embedded-transport.js';
import { localTopicSpecs, TOPICS } from '../../streams/pipeline/topics.js';
import { topicRecord } from '../../streams/runtime/record-codec.js';
import { writeFusionDecision } from '../../streams/views/registry-fusion-decision.js';
import { followRegistryLinker } from '../../streams/views/registry-linker.js';

/** An operator's fusion decision reaches entity.registry as the entity's next record. */

const entity = (id: string, name: string, fusion: RegistryEntity['fusion'] = null): RegistryEntity => ({
  id,
  name,
  type: 'ORGANIZATION',
  aliases: [name],
  first_seen_at: 1000,
  last_seen_at: 2000,
  mentions: 3,
  fusion,
});

describe('writeFusionDecision', () => {
  it('undoes a rule’s fusion and fuses by hand, writing the entity’s new record to the registry topic', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const seed = transport.producer();
    const fusion = {
      into: 'e-icc-cricket',
      rule: 'acronym',
      score: 1,
      evidence: 'initials',
      decided_at: 2000,
      revoked: false,
    };
    await seed.send(TOPICS.registry, [
      topicRecord(TOPICS.registry, 'RegistryEntity', 'e-icc', entity('e-icc', 'ICC', fusion)),
      topicRecord(TOPICS.registry, 'RegistryEntity', 'e-icc-cricket', entity('e-icc-cricket', 'ICC Cricket')),
    ]);
    const lastOf = (id: string): RegistryEntity => {
      const records = transport.broker
        .read(TOPICS.registry, 0, 0n)
        .map((r) => decodeRecord('RegistryEntity', r.value, r.headers))
        .filter((e) => e.id === id);
      return records.at(-1)!;
    };

    const undone = await writeFusionDecision(transport, { kind: 'unfuse', id: 'e-icc' }, { now: 9000 });
    expect(undone.fusion).toMatchObject({ rule: 'operator', revoked: true, decided_at: 9000 });
    expect(lastOf('e-icc')).toEqual(undone);
    expect(lastOf('e-icc')).toMatchObject({ name: 'ICC', mentions: 3, aliases: ['ICC'] });

    const fused = await writeFusionDecision(
      transport,
      { kind: 'fuse', id: 'e-icc', into: 'e-icc-cricket' },
      { now: 9500 },
    );
    expect(lastOf('e-icc').fusion).toMatchObject({ into: 'e-icc-cricket', rule: 'operator', revoked: false });
    expect(fused).toEqual(lastOf('e-icc'));

    await expect(writeFusionDecision(transport, { kind: 'unfuse', id: 'e-nobody' })).rejects.toThrow(/unknown entity/);
    await expect(writeFusionDecision(transport, { kind: 'fuse', id: 'e-icc-cricket', into: 'e-icc' })).rejects.toThrow(
      /cycle/,
    );
  });
});

describe('the query side’s view of a fusion', () => {
  it('links a fused entity’s names to the entity it was fused into, named as that one, and lists it once', async () => {
    const transport = createEmbeddedTransport();
    await transport.ensureTopics(localTopicSpecs(1));
    const fusion = {
      into: 'e-israel-defense-forces',
      rule: 'acronym',
      score: 1,
      evidence: 'initials',
      decided_at: 2000,
      revoked: false,
    };
    await transport
      .producer()
      .send(TOPICS.registry, [
        topicRecord(
          TOPICS.registry,
          'RegistryEntity',
          'e-israel-defense-forces',
          entity('e-israel-defense-forces', 'Israel Defense Forces'),
        ),
        topicRecord(TOPICS.registry, 'RegistryEntity', 'e-idf', entity('e-idf', 'IDF', fusion)),
      ]);
    const { linker, directory, tail } = await followRegistryLinker(transport);
    try {
      expect(linker.link('What did the IDF say?')).toEqual([
        { id: 'e-israel-defense-forces', name: 'Israel Defense Forces', surface: 'IDF' },
      ]);
      expect(directory.search('i', 10).map((e) => e.id)).toEqual(['e-israel-defense-forces']);
      expect(directory.get('e-idf')?.fused_into).toBe('e-israel-defense-forces');
    } finally {
      await tail.stop();
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { entityIdFor, entityKey } from '../../processors/markup/entity-id.js';
import { EntityRegistry, type RegistryEntity } from '../../processors/markup/entity-registry.js';
import { ENTITY_TYPE_SYMBOLS, type EntityType } from '../../schemas/records.generated.js';

const cluster = (name: string, type: EntityType, ...surfaces: string[]) => ({
  name,
  type,
  surfaces: surfaces.length > 0 ? surfaces : [name],
});

describe('entityIdFor', () => {
  it('slugs the folded, lower-cased name', () => {
    expect(entityIdFor('Karl Lagerfeld')).toBe('e-karl-lagerfeld');
    expect(entityIdFor('U.S.')).toBe('e-us');
    expect(entityIdFor("Austrian People's Party")).toBe('e-austrian-peoples-party');
  });

  it('gives one id to case, punctuation and diacritic variants', () => {
    expect(entityIdFor('ZÜRICH')).toBe(entityIdFor('Zurich'));
    expect(entityIdFor('Keller-Sutter')).toBe(entityIdFor('Keller Sutter'));
    expect(entityIdFor('US')).toBe(entityIdFor('U.S.'));
  });

  it('adds a hash when the slug would lose letters or be long', () => {
    const cyrillic = entityIdFor('Владимир Путин');
    expect(cyrillic).toMatch(/^e-[0-9a-f]{10}$/);
    expect(cyrillic).not.toBe(entityIdFor('Владимир Зеленский'));
    const long = entityIdFor('African Union Support and Stabilisation Mission in Somalia and Beyond');
    expect(long).toMatch(/^e-african-union-support-and-stabilisation-mission-[0-9a-f]{10}$/);
    expect(long.length).toBeLessThanOrEqual(2 + 48 + 1 + 10);
  });

  it('keys ignore case, diacritics and punctuation', () => {
    expect(entityKey('  Zoë  O’Brien-Smith ')).toBe('zoe obrien smith');
  });

  it('gives the same key once many other names have passed through its memory', () => {
    expect(entityKey('Zoë O’Brien')).toBe('zoe obrien');
    for (let i = 0; i < 60_000; i++) entityKey(`Name ${i}`);
    expect(entityKey('Zoë O’Brien')).toBe('zoe obrien');
    expect(entityKey('Name 59999')).toBe('name 59999');
    expect(entityKey('x'.repeat(300) + '.É')).toBe('x'.repeat(300) + 'e');
  });
});

describe('EntityRegistry.link', () => {
  it('creates entities with deterministic ids and records them as changes', () => {
    const registry = new EntityRegistry();
    const linked = registry.link([cluster('Karl Lagerfeld', 'PERSON', 'Karl Lagerfeld', 'Karl')], 1000);
    expect(linked).toEqual([{ id: 'e-karl-lagerfeld', name: 'Karl Lagerfeld', type: 'PERSON' }]);
    expect(registry.takeChanges()).toEqual([
      {
        id: 'e-karl-lagerfeld',
        name: 'Karl Lagerfeld',
        type: 'PERSON',
        aliases: ['Karl Lagerfeld', 'Karl'],
        first_seen_at: 1000,
        last_seen_at: 1000,
        mentions: 1,
        fusion: null,
      },
    ]);
    expect(registry.takeChanges()).toEqual([]);
  });

  it('links a later article that only uses a taught alias', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Donald Trump', 'PERSON', 'Donald Trump', 'Trump')], 1000);
    const [linked] = registry.link([cluster('Trump', 'OTHER')], 2000);
    expect(linked).toEqual({ id: 'e-donald-trump', name: 'Donald Trump', type: 'PERSON' });
    const entity = registry.get('e-donald-trump')!;
    expect(entity).toMatchObject({ first_seen_at: 1000, last_seen_at: 2000, mentions: 2 });
  });

  it('prefers the fuller entity even when the short name had an entity of its own', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Trump', 'PERSON')], 1000);
    registry.link([cluster('Donald Trump', 'PERSON', 'Donald Trump', 'Trump')], 2000);
    expect(registry.link([cluster('Trump', 'PERSON')], 3000)[0]!.id).toBe('e-donald-trump');
  });

  it('does not link by an alias two entities share', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Michael Jordan', 'PERSON', 'Michael Jordan', 'Jordan')], 1000);
    registry.link([cluster('Jordan Peterson', 'PERSON', 'Jordan Peterson', 'Jordan')], 1000);
    expect(registry.lookupAlias('jordan').map((e) => e.id)).toEqual(['e-jordan-peterson', 'e-michael-jordan']);
    expect(registry.link([cluster('Jordan', 'PERSON')], 2000)[0]!.id).toBe('e-jordan');
  });

  it('does not link a more specific cluster through one of its surfaces', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Donald Trump', 'PERSON', 'Donald Trump', 'Trump')], 1000);
    const [melania] = registry.link([cluster('Melania Trump', 'PERSON', 'Melania Trump', 'Trump')], 2000);
    expect(melania!.id).toBe('e-melania-trump');
  });

  it('links a new article with a middle initial through a shared surface', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Donald Trump', 'PERSON', 'Donald Trump', 'Trump')], 1000);
    expect(registry.link([cluster('Donald J. Trump', 'PERSON', 'Donald J. Trump', 'Trump')], 2000)[0]!.id).toBe(
      'e-donald-trump',
    );
  });

  it('links acronyms, last names and companies without their legal suffix to the one known entity', () => {
    const registry = new EntityRegistry();
    registry.link(
      [
        cluster('Federal Bureau of Investigation', 'ORGANIZATION'),
        cluster('Marco Rubio', 'PERSON'),
        cluster('Apple Inc.', 'ORGANIZATION'),
        cluster('U.S. Senate', 'ORGANIZATION'),
      ],
      1000,
    );
    const later = [cluster('FBI', 'ORGANIZATION'), cluster('Rubio', 'OTHER'), cluster('Apple', 'OTHER')];
    // Institutions' other short forms do not cross articles.
    later.push(cluster('Senate', 'ORGANIZATION'));
    expect(registry.link(later, 2000).map((l) => l.id)).toEqual([
      'e-federal-bureau-of-investigation',
      'e-marco-rubio',
      'e-apple-inc',
      'e-senate',
    ]);
    expect(registry.lookupAlias('F.B.I.').map((e) => e.id)).toEqual(['e-federal-bureau-of-investigation']);
  });

  it("links an acronym to its expansion when the expansion's other spellings are fused into it", () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Israeli Defense Forces', 'ORGANIZATION')], 1000);
    // Spelled like the first: fused into it, and both have the initials "IDF".
    registry.link([cluster('Israel Defense Forces', 'ORGANIZATION')], 2000);
    expect(registry.canonicalId('e-israel-defense-forces')).toBe('e-israeli-defense-forces');
    expect(registry.link([cluster('IDF', 'ORGANIZATION')], 3000)[0]!.id).toBe('e-israeli-defense-forces');
    // Two entities that are not one sharing the initials: the acronym links neither.
    const two = new EntityRegistry();
    two.link(
      [cluster('Israeli Defense Forces', 'ORGANIZATION'), cluster('Islamic Democratic Front', 'ORGANIZATION')],
      1000,
    );
    expect(two.link([cluster('IDF', 'ORGANIZATION')], 2000)[0]!.id).toBe('e-idf');
  });

  it("links a group named in the plural to its singular's entity and back, for demonym endings only", () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Alawite', 'LOCATION'), cluster('Houthis', 'OTHER')], 1000);
    expect(registry.link([cluster('Alawites', 'OTHER'), cluster('Houthi', 'OTHER')], 2000).map((l) => l.id)).toEqual([
      'e-alawite',
      'e-houthis',
    ]);
    // A final "s" that is part of a name links nothing: "Williams" is not "William".
    registry.link([cluster('William', 'PERSON')], 3000);
    expect(registry.link([cluster('Williams', 'OTHER')], 4000)[0]!.id).toBe('e-williams');
  });

  it('links markup\'s "<X> forces" to the one named force of the country, and fuses them when the name comes later', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Russian forces', 'ORGANIZATION', 'Russian troops')], 1000);
    registry.link([cluster('Russian Armed Forces', 'ORGANIZATION')], 2000);
    expect(registry.get('e-russian-forces')!.fusion).toMatchObject({ into: 'e-russian-armed-forces', rule: 'alias' });
    expect(registry.link([cluster('Israel Defense Forces', 'ORGANIZATION')], 3000)[0]!.id).toBe(
      'e-israel-defense-forces',
    );
    // "Israeli" names Israel: the troops are the Israel Defense Forces.
    expect(registry.link([cluster('Israeli forces', 'ORGANIZATION', 'Israeli soldiers')], 4000)[0]!.id).toBe(
      'e-israel-defense-forces',
    );
    // A branch is not the armed forces; a country's words a letter apart are not one force.
    registry.link([cluster('Israeli Air Force', 'ORGANIZATION'), cluster('Malawian forces', 'ORGANIZATION')], 5000);
    expect(registry.link([cluster('Malian forces', 'ORGANIZATION')], 6000)[0]!.id).toBe('e-malian-forces');
    expect(registry.canonicalId('e-malian-forces')).toBe('e-malian-forces');
  });

  it('links a region named without its generic head to it, never a city to its oblast', () => {
    const registry = new EntityRegistry();
    registry.link(
      [
        cluster('Gaza Strip', 'LOCATION'),
        cluster('South Kivu Province', 'LOCATION'),
        cluster('Kyiv Oblast', 'LOCATION'),
        cluster('Mexico City', 'LOCATION'),
      ],
      1000,
    );
    const later = [
      cluster('Gaza', 'LOCATION'),
      cluster('South Kivu', 'LOCATION'),
      cluster('Kyiv', 'LOCATION'),
      cluster('Mexico', 'LOCATION'),
    ];
    expect(registry.link(later, 2000).map((l) => l.id)).toEqual([
      'e-gaza-strip',
      'e-south-kivu-province',
      'e-kyiv',
      'e-mexico',
    ]);
    // Met first, the short name is fused into the region when its full name arrives.
    const reversed = new EntityRegistry();
    reversed.link([cluster('North Gaza', 'LOCATION')], 1000);
    reversed.link([cluster('North Gaza Governorate', 'LOCATION')], 2000);
    expect(reversed.canonicalId('e-north-gaza')).toBe('e-north-gaza-governorate');
  });

  it('takes a person named by the end of a known fuller name for that person, and back', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Recep Tayyip Erdoğan', 'PERSON')], 1000);
    expect(registry.link([cluster('Tayyip Erdoğan', 'PERSON')], 2000)[0]!.id).toBe('e-recep-tayyip-erdogan');
    // A longer name arriving later is fused into the known one: the longer is as often a kept title.
    const titled = new EntityRegistry();
    titled.link([cluster('Pete Hegseth', 'PERSON')], 1000);
    titled.link([cluster('Defense Pete Hegseth', 'PERSON')], 2000);
    expect(titled.canonicalId('e-defense-pete-hegseth')).toBe('e-pete-hegseth');
    expect(titled.get('e-defense-pete-hegseth')?.fusion?.rule).toBe('short_form');
    // The last name of one person under two fused names is that person's.
    expect(titled.link([cluster('Hegseth', 'OTHER')], 3000)[0]!.id).toBe('e-pete-hegseth');
    // Two people whose names end alike: the shorter name is neither's.
    const two = new EntityRegistry();
    two.link([cluster('Ana María Silva', 'PERSON'), cluster('José María Silva', 'PERSON')], 1000);
    expect(two.link([cluster('María Silva', 'PERSON')], 2000)[0]!.id).toBe('e-maria-silva');
  });

  it('counts an entity once per article, and refines OTHER to a specific type', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Choupette', 'OTHER'), cluster('CHOUPETTE', 'OTHER')], 1000);
    registry.link([cluster('Choupette', 'PERSON')], 2000);
    expect(registry.get('e-choupette')).toMatchObject({ type: 'PERSON', mentions: 2, name: 'Choupette' });
  });

  it('bounds aliases, always keeping the canonical name', () => {
    const registry = new EntityRegistry([], { maxAliasesPerEntity: 3 });
    registry.link(
      [cluster('Karl Lagerfeld', 'PERSON', 'Karl Lagerfeld', 'K', 'KL', 'Karl', 'Lagerfeld', 'Mr Lagerfeld')],
      0,
    );
    const aliases = registry.get('e-karl-lagerfeld')!.aliases;
    expect(aliases).toHaveLength(3);
    expect(aliases[0]).toBe('Karl Lagerfeld');
  });

  it('rejects an invalid alias bound', () => {
    expect(() => new EntityRegistry([], { maxAliasesPerEntity: 0 })).toThrow(RangeError);
  });

  it('round-trips through JSON', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Karl Lagerfeld', 'PERSON', 'Karl Lagerfeld', 'Karl'), cluster('Paris', 'LOCATION')], 5);
    const restored = new EntityRegistry(JSON.parse(JSON.stringify(registry)) as RegistryEntity[]);
    expect([...restored.entities()]).toEqual([...registry.entities()]);
    expect(restored.size).toBe(2);
    expect(restored.takeChanges()).toEqual([]);
  });
});

describe('EntityRegistry.apply', () => {
  const names = ['Karl Lagerfeld', 'KARL LAGERFELD', 'Zürich', 'Zurich', 'Trump', 'Donald Trump'];
  const surfaces = ['Karl', 'Lagerfeld', 'Mr. Lagerfeld', 'Zuri', 'DJT', 'Trump', 'The Donald', 'Zürich'];
  const entity: fc.Arbitrary<RegistryEntity> = fc
    .record({
      name: fc.constantFrom(...names),
      type: fc.constantFrom<EntityType>(...ENTITY_TYPE_SYMBOLS),
      aliases: fc.subarray(surfaces),
      first: fc.integer({ min: 0, max: 1000 }),
      span: fc.integer({ min: 0, max: 1000 }),
      mentions: fc.integer({ min: 0, max: 50 }),
      fusion: fc.option(
        fc.record({
          into: fc.constantFrom(...names.map((n) => entityIdFor(n))),
          rule: fc.constantFrom('acronym', 'spelling', 'operator'),
          score: fc.constantFrom(0.85, 1),
          evidence: fc.constantFrom('one', 'two'),
          decided_at: fc.integer({ min: 0, max: 3 }),
          revoked: fc.boolean(),
        }),
        { nil: null },
      ),
    })
    .map((r) => ({
      id: entityIdFor(r.name),
      name: r.name,
      type: r.type,
      aliases: [r.name, ...r.aliases],
      first_seen_at: r.first,
      last_seen_at: r.first + r.span,
      mentions: r.mentions,
      fusion: r.fusion,
    }));
  const stateOf = (records: readonly RegistryEntity[]): RegistryEntity[] => {
    const registry = new EntityRegistry([], { maxAliasesPerEntity: 4 });
    for (const record of records) registry.apply(record);
    return [...registry.entities()].sort((a, b) => (a.id < b.id ? -1 : 1));
  };

  it('gives the same state for any order of the same records, with duplicates', () => {
    fc.assert(
      fc.property(
        fc
          .array(entity, { maxLength: 12 })
          .chain((records) =>
            fc.tuple(fc.constant(records), fc.shuffledSubarray(records, { minLength: records.length })),
          ),
        ([records, shuffled]) => {
          expect(stateOf(shuffled)).toEqual(stateOf(records));
          expect(stateOf([...records, ...shuffled])).toEqual(stateOf(records));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('merges by union of aliases, min first seen, max last seen and max mentions', () => {
    const registry = new EntityRegistry();
    registry.apply({
      id: 'e-zurich',
      name: 'Zurich',
      type: 'OTHER',
      aliases: ['Zurich', 'Zuri'],
      first_seen_at: 50,
      last_seen_at: 60,
      mentions: 3,
      fusion: null,
    });
    registry.apply({
      id: 'e-zurich',
      name: 'Zürich',
      type: 'LOCATION',
      aliases: ['Zürich', 'ZRH'],
      first_seen_at: 10,
      last_seen_at: 20,
      mentions: 7,
      fusion: null,
    });
    expect(registry.get('e-zurich')).toEqual({
      id: 'e-zurich',
      name: 'Zürich',
      type: 'LOCATION',
      aliases: ['Zürich', 'zrh'.toUpperCase(), 'Zuri'],
      first_seen_at: 10,
      last_seen_at: 60,
      mentions: 7,
      fusion: null,
    });
  });

  it('records a change only when the merged state holds more than the record', () => {
    const registry = new EntityRegistry();
    const record: RegistryEntity = {
      id: 'e-paris',
      name: 'Paris',
      type: 'LOCATION',
      aliases: ['Paris'],
      first_seen_at: 1,
      last_seen_at: 2,
      mentions: 1,
      fusion: null,
    };
    registry.apply(record);
    registry.apply(record);
    expect(registry.takeChanges()).toEqual([]);
    registry.link([cluster('Paris', 'LOCATION', 'Paris', 'City of Light')], 3);
    registry.takeChanges();
    registry.apply(record);
    expect(registry.takeChanges().map((e) => e.aliases)).toEqual([['Paris', 'City of Light']]);
  });

  it('takes back its own record from the changelog without a change, and the next sighting still counts', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Zürich', 'LOCATION', 'Zürich', 'ZURICH')], 5);
    const [own] = registry.takeChanges();
    registry.apply(own!);
    expect(registry.takeChanges()).toEqual([]);
    expect(registry.get(own!.id)).toEqual(own);
    registry.link([cluster('Zurich', 'LOCATION', 'Zurich')], 6);
    expect(registry.takeChanges()).toMatchObject([{ id: own!.id, name: 'Zürich', mentions: 2, last_seen_at: 6 }]);
  });
});

describe('EntityRegistry.forgetIdle', () => {
  const DAY = 86_400_000;
  const t0 = Date.UTC(2025, 0, 1);

  it('forgets rare entities not seen within the idle time, keeps frequent and recent ones', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Numbeo', 'ORGANIZATION')], t0);
    for (let d = 0; d < 3; d++) registry.link([cluster('Maria Lindqvist', 'PERSON', 'Lindqvist')], t0 + d * DAY);
    registry.link([cluster('Reykjavik', 'LOCATION')], t0 + 40 * DAY);
    registry.takeChanges();
    expect(registry.forgetIdle(t0 + 40 * DAY, 30 * DAY, 3)).toBe(1);
    expect(registry.size).toBe(2);
    expect(registry.lookupAlias('Numbeo')).toEqual([]);
    expect(registry.lookupAlias('Lindqvist').map((e) => e.name)).toEqual(['Maria Lindqvist']);
    expect(registry.takeChanges()).toEqual([]);
    // Seen again: the same id as before, learnt afresh.
    const [again] = registry.link([cluster('Numbeo', 'ORGANIZATION')], t0 + 41 * DAY);
    expect(again!.id).toBe(entityIdFor('Numbeo'));
    expect(registry.get(again!.id)?.mentions).toBe(1);
  });
});

describe('EntityRegistry fusion across documents', () => {
  it('fuses an acronym met first into its expansion when that arrives, with the evidence, and links it there', () => {
    const registry = new EntityRegistry();
    expect(registry.link([cluster('IDF', 'ORGANIZATION')], 1000)[0]!.id).toBe('e-idf');
    const [full] = registry.link([cluster('Israel Defense Forces', 'ORGANIZATION')], 2000);
    expect(full!.id).toBe('e-israel-defense-forces');
    expect(registry.get('e-idf')!.fusion).toEqual({
      into: 'e-israel-defense-forces',
      rule: 'acronym',
      score: 1,
      evidence: '"IDF" is the initials of "Israel Defense Forces"',
      decided_at: 2000,
      revoked: false,
    });
    expect(registry.canonicalId('e-idf')).toBe('e-israel-defense-forces');
    expect(registry.link([cluster('IDF', 'ORGANIZATION')], 3000)[0]).toEqual(full);
    expect(registry.lookupAlias('IDF').map((e) => e.id)).toEqual(['e-israel-defense-forces']);
    // The fused entity keeps its own record, so undoing the fusion gives it back as it was.
    expect(registry.get('e-idf')).toMatchObject({ name: 'IDF', mentions: 1, first_seen_at: 1000 });
  });

  it('fuses a new spelling into the one entity of its type it nearly is, and not a short or ambiguous name', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('Khan Younis', 'LOCATION')], 1000);
    expect(registry.link([cluster('Khan Yunis', 'LOCATION')], 2000)[0]!.id).toBe('e-khan-younis');
    expect(registry.get('e-khan-yunis')!.fusion).toMatchObject({ into: 'e-khan-younis', rule: 'spelling' });
    expect(registry.get('e-khan-yunis')!.fusion!.score).toBeGreaterThanOrEqual(0.8);
    // Four letters say too little ("Iran" / "Iraq"); another type is another thing.
    registry.link([cluster('Iran', 'LOCATION')], 1000);
    expect(registry.link([cluster('Iraq', 'LOCATION')], 2000)[0]!.id).toBe('e-iraq');
    registry.link([cluster('Marco Rubio', 'PERSON')], 1000);
    expect(registry.link([cluster('Marco Rubia', 'LOCATION')], 2000)[0]!.id).toBe('e-marco-rubia');
    // Two established entities it could be a spelling of (learned from the changelog, where no rule
    // fused them): it is neither.
    const person = (name: string): RegistryEntity => ({
      id: entityIdFor(name),
      name,
      type: 'PERSON',
      aliases: [name],
      first_seen_at: 1000,
      last_seen_at: 1000,
      mentions: 1,
      fusion: null,
    });
    const replica = new EntityRegistry([person('Mohammed Salman'), person('Muhammed Salmon')]);
    expect(replica.link([cluster('Mohammed Salmon', 'PERSON')], 2000)[0]!.id).toBe('e-mohammed-salmon');
    expect(replica.get('e-mohammed-salmon')!.fusion).toBeNull();
  });

  it('does not take a company’s initials for an acronym, nor a country for the city named after it', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('AI', 'OTHER')], 1000);
    registry.link([cluster('Apple Inc.', 'ORGANIZATION')], 2000);
    expect(registry.get('e-ai')!.fusion).toBeNull();
    registry.link([cluster('Guatemala', 'LOCATION')], 1000);
    registry.link([cluster('Guatemala City', 'LOCATION', 'Guatemala City', 'Guatemala')], 2000);
    expect(registry.get('e-guatemala')!.fusion).toBeNull();
  });

  it('undoes a fusion for good: the acronym stands alone again and no rule fuses it again', () => {
    const registry = new EntityRegistry();
    registry.link([cluster('ICC', 'ORGANIZATION')], 1000);
    registry.link([cluster('International Cricket Council', 'ORGANIZATION')], 2000);
    expect(registry.canonicalId('e-icc')).toBe('e-international-cricket-council');
    registry.revokeFusion('e-icc', 5000);
    expect(registry.canonicalId('e-icc')).toBe('e-icc');
    expect(registry.get('e-icc')!.fusion).toMatchObject({ rule: 'operator', revoked: true });
    // A replica that only saw the rule's decision agrees once it reads the revocation, in any order.
    const replica = new EntityRegistry();
    for (const entity of [...registry.entities()].reverse()) replica.apply(entity);
    replica.apply({
      ...registry.get('e-icc')!,
      fusion: { ...registry.get('e-icc')!.fusion!, rule: 'acronym', revoked: false, decided_at: 2000 },
    });
    expect(replica.canonicalId('e-icc')).toBe('e-icc');
    // An operator may fuse it again later, and fusing into itself or in a circle is refused.
    registry.fuse('e-icc', 'e-international-cricket-council', 6000);
    expect(registry.canonicalId('e-icc')).toBe('e-international-cricket-council');
    expect(() => registry.fuse('e-international-cricket-council', 'e-icc', 7000)).toThrow(/cycle/);
    expect(() => registry.fuse('e-icc', 'e-nobody', 7000)).toThrow(/unknown/);
  });

  it('links rules only when fusion is turned off', () => {
    const registry = new EntityRegistry([], { fusion: false });
    registry.link([cluster('IDF', 'ORGANIZATION')], 1000);
    registry.link([cluster('Israel Defense Forces', 'ORGANIZATION')], 2000);
    expect(registry.get('e-idf')!.fusion).toBeNull();
    expect(() => new EntityRegistry([], { fusion: { spellingThreshold: 1.5 } })).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { RegistryChangeThrottle } from '../../processors/markup/throttle-registry-changes.js';
import type { RegistryEntity } from '../../schemas/records.generated.js';

const HOUR = 3_600_000;
const base: RegistryEntity = {
  id: 'e-maria-lindqvist',
  name: 'Maria Lindqvist',
  type: 'PERSON',
  aliases: ['Maria Lindqvist'],
  first_seen_at: Date.UTC(2025, 2, 3),
  last_seen_at: Date.UTC(2025, 2, 3),
  mentions: 3,
  fusion: null,
};

describe('RegistryChangeThrottle', () => {
  it('writes a new entity, then only changes other replicas or a restart would miss', () => {
    const throttle = new RegistryChangeThrottle();
    expect(throttle.select([base])).toEqual([base]);
    expect(throttle.select([{ ...base, mentions: 4, last_seen_at: base.last_seen_at + 60_000 }])).toEqual([]);
    const alias = { ...base, aliases: [...base.aliases, 'Lindqvist'] };
    expect(throttle.select([alias])).toEqual([alias]);
    const renamed = { ...alias, type: 'ORGANIZATION' as const };
    expect(throttle.select([renamed])).toEqual([renamed]);
    const earlier = { ...renamed, first_seen_at: base.first_seen_at - 1 };
    expect(throttle.select([earlier])).toEqual([earlier]);
    const fusion = {
      into: 'e-maria-lindqvist-berg',
      rule: 'short_form',
      score: 1,
      evidence: 'one person by that name',
      decided_at: base.first_seen_at,
      revoked: false,
    };
    const fused = { ...earlier, fusion };
    expect(throttle.select([fused])).toEqual([fused]);
    const unfused = { ...fused, fusion: { ...fusion, rule: 'operator', revoked: true } };
    expect(throttle.select([unfused])).toEqual([unfused]);
    expect(throttle.select([{ ...unfused, mentions: 4 }])).toEqual([]);
  });

  it('writes counters when last seen moved by an hour or mentions doubled', () => {
    const throttle = new RegistryChangeThrottle();
    throttle.select([base]);
    const later = { ...base, last_seen_at: base.last_seen_at + HOUR };
    expect(throttle.select([later])).toEqual([later]);
    expect(throttle.select([{ ...later, mentions: 5 }])).toEqual([]);
    expect(throttle.select([{ ...later, mentions: 6 }])).toHaveLength(1);
  });

  it('treats what was read back from the changelog as written', () => {
    const throttle = new RegistryChangeThrottle();
    throttle.remember(base);
    expect(throttle.select([{ ...base, mentions: 4 }])).toEqual([]);
    expect(throttle.select([{ ...base, id: 'e-other' }])).toHaveLength(1);
  });

  it('forgets what it wrote for entities the registry no longer holds', () => {
    const throttle = new RegistryChangeThrottle();
    throttle.select([base]);
    throttle.prune((id) => id !== base.id);
    expect(throttle.select([{ ...base, mentions: 4 }])).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { EntityDirectory, type DirectoryEntity } from '../../processors/query/entity-directory.js';

function entity(id: string, name: string, mentions: number, aliases: string[] = [], type = 'PERSON'): DirectoryEntity {
  return { id, name, type, aliases, mentions, first_seen_at: null, last_seen_at: null };
}

describe('entity directory', () => {
  const directory = new EntityDirectory();
  directory.put(entity('e-donald-trump', 'Donald Trump', 50, ['Trump', 'President Trump']));
  directory.put(entity('e-melania-trump', 'Melania Trump', 4, ['Melania']));
  directory.put(entity('e-trumpington', 'Trumpington', 1, [], 'LOCATION'));
  directory.put(entity('e-jose-andres', 'José Andrés', 3, ['Andrés']));

  it('finds names that start with the text first, then other matches, most mentioned first', () => {
    expect(directory.search('trump', 10).map((e) => e.id)).toEqual([
      'e-trumpington',
      'e-donald-trump',
      'e-melania-trump',
    ]);
    expect(directory.search('president', 10).map((e) => e.id)).toEqual(['e-donald-trump']);
  });

  it('ignores case and accents, filters by type, and lists the most mentioned without text', () => {
    expect(directory.search('JOSE andres', 5).map((e) => e.id)).toEqual(['e-jose-andres']);
    expect(directory.search('trump', 10, 'LOCATION').map((e) => e.id)).toEqual(['e-trumpington']);
    expect(directory.search(undefined, 2).map((e) => e.id)).toEqual(['e-donald-trump', 'e-melania-trump']);
    expect(directory.search('nobody', 5)).toEqual([]);
  });

  it('keeps the latest record of an entity', () => {
    directory.put(entity('e-melania-trump', 'Melania Trump', 60));
    expect(directory.get('e-melania-trump')?.mentions).toBe(60);
    expect(directory.search(undefined, 1)[0]!.id).toBe('e-melania-trump');
    expect(directory.size).toBe(4);
  });
});

describe('entity directory with fused entities', () => {
  it('finds a fused entity as the one it was fused into, listed once, and still by its own id', () => {
    const directory = new EntityDirectory();
    directory.put(entity('e-volodymyr-zelenskyy', 'Volodymyr Zelenskyy', 11, ['Zelenskyy']));
    directory.put({ ...entity('e-volodymyr-zelensky', 'Volodymyr Zelensky', 1), fused_into: 'e-volodymyr-zelenskyy' });
    directory.put({ ...entity('e-zelensky-fund', 'Zelensky Fund', 2, [], 'ORGANIZATION'), fused_into: 'e-nowhere' });
    expect(directory.search('zelensky', 10).map((e) => e.id)).toEqual(['e-zelensky-fund', 'e-volodymyr-zelenskyy']);
    expect(directory.search('volodymyr zelensky', 10).map((e) => e.id)).toEqual(['e-volodymyr-zelenskyy']);
    expect(directory.search(undefined, 10).map((e) => e.id)).toEqual(['e-volodymyr-zelenskyy', 'e-zelensky-fund']);
    expect(directory.get('e-volodymyr-zelensky')?.fused_into).toBe('e-volodymyr-zelenskyy');
  });
});

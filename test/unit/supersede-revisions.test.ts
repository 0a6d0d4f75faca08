import { describe, expect, it } from 'vitest';
import {
  chunkRevision,
  revisionQuery,
  revisionsOf,
  supersededIds,
  type RevisedDocument,
} from '../../processors/query/supersede-revisions.js';

const chunk = (id: string, fields: Partial<RevisedDocument> = {}): RevisedDocument => ({
  id,
  kind: 'chunk',
  ...fields,
});
const statement = (id: string, chunkIds: string[]): RevisedDocument => ({
  id,
  kind: 'interaction',
  chunk_ids: chunkIds,
});

describe('superseded article revisions', () => {
  it('reads the article and version a chunk id names, and nothing from other ids', () => {
    expect(chunkRevision('a1b2:v3:12')).toEqual({ articleId: 'a1b2', version: 3 });
    expect(chunkRevision('wire:item:7:v1:0')).toEqual({ articleId: 'wire:item:7', version: 1 });
    expect(chunkRevision('chunk-a')).toBeUndefined();
    expect(chunkRevision('a:v0:1')).toBeUndefined();
  });

  it('takes a chunk’s fields before its id, and a statement’s revisions from its chunks', () => {
    expect(revisionsOf(chunk('x:v1:0', { article_id: 'x', article_version: 2 }))).toEqual([
      { articleId: 'x', version: 2 },
    ]);
    expect(revisionsOf(chunk('legacy-id', { article_id: 'y' }))).toEqual([{ articleId: 'y', version: 1 }]);
    expect(revisionsOf(chunk('legacy-id'))).toEqual([]);
    expect(revisionsOf(statement('s', ['x:v1:0', 'chunk-z', 'y:v2:4']))).toEqual([
      { articleId: 'x', version: 1 },
      { articleId: 'y', version: 2 },
    ]);
  });

  it('supersedes the chunks of an older version and the statements drawn from superseded chunks only', () => {
    const documents = [
      chunk('x:v1:0'),
      chunk('x:v1:1'),
      chunk('x:v2:0'),
      chunk('y:v1:0'),
      statement('from-x', ['x:v1:0']),
      statement('from-x-and-y', ['x:v1:1', 'y:v1:0']),
      statement('unversioned', ['chunk-q']),
    ];
    const later = [
      { articleId: 'x', version: 2 },
      { articleId: 'x', version: 3 },
    ];
    expect([...supersededIds(documents, later)].sort()).toEqual(['from-x', 'x:v1:0', 'x:v1:1', 'x:v2:0']);
    expect([...supersededIds(documents, [{ articleId: 'x', version: 2 }])].sort()).toEqual([
      'from-x',
      'x:v1:0',
      'x:v1:1',
    ]);
    expect(supersededIds(documents, [])).toEqual(new Set());
  });

  it('asks for the candidates’ articles from the version after the oldest one among them', () => {
    expect(revisionQuery([chunk('x:v2:0'), chunk('y:v1:0'), statement('s', ['x:v3:1'])])).toEqual({
      articleIds: ['x', 'y'],
      minVersion: 2,
    });
    expect(revisionQuery([statement('s', ['chunk-q'])])).toBeUndefined();
  });
});

import { DEFAULT_ALPHA } from '../../processors/query/search-request.js';
import { describe, expect, it } from 'vitest';
import {
  CONFIGURATIONS,
  fixedStore,
  requestFor,
  selectConfigurations,
  type Configuration,
} from '../retrieval-configurations.js';

const asked = { q: 'Who won?', tq: Date.parse('2023-03-01T23:59:59.999Z') };

describe('retrieval configurations', () => {
  it('build the product request for the question, with only what the configuration changes', () => {
    expect(requestFor(CONFIGURATIONS['generic+around']!, asked, 10, 'chunks')).toEqual({
      q: 'Who won?',
      tq: asked.tq,
      k: 10,
      strategy: 'generic',
      store: 'chunks',
      constraint: 'around',
      constraintAt: asked.tq,
      windowDays: 7,
      alpha: DEFAULT_ALPHA,
      includeFuture: false,
      hops: 1,
      explicit: { constraint: true },
    });
    // No constraint of its own: the question's time words may set the scope, as in the API.
    expect(requestFor(CONFIGURATIONS.tempralm!, asked, 10, 'interactions').explicit).toEqual({ constraint: false });
    expect(requestFor(CONFIGURATIONS['generic+multihop']!, asked, 5, 'both')).toMatchObject({
      strategy: 'generic',
      hops: 2,
      k: 5,
    });
  });

  it('may be a function of the question, and may fix a store', () => {
    const windowed: Configuration = ({ tq }) => ({ window: { from: tq - 7 * 86_400_000 } });
    const request = requestFor(windowed, asked, 10, 'interactions');
    expect(request.window).toEqual({ from: asked.tq - 7 * 86_400_000 });
    expect(request.explicit).toEqual({ constraint: false, window: true });
    expect(requestFor({ fusion: 'dense', timeWords: false }, asked, 10, 'chunks')).toMatchObject({
      fusion: 'dense',
      timeWords: false,
    });
    expect(fixedStore(windowed)).toBeUndefined();
    expect(fixedStore({ strategy: 'generic', store: 'chunks' })).toBe('chunks');
    expect(fixedStore(CONFIGURATIONS.tempralm!)).toBeUndefined();
  });

  it('are selected by name, in the order asked, and unknown names are reported', () => {
    expect(selectConfigurations(undefined)).toEqual({ ok: true, selected: Object.entries(CONFIGURATIONS) });
    const chosen = selectConfigurations('tempralm, generic');
    expect(chosen.ok && chosen.selected.map(([name]) => name)).toEqual(['tempralm', 'generic']);
    expect(selectConfigurations('tempralm,fancy,other')).toEqual({ ok: false, unknown: ['fancy', 'other'] });
    expect(selectConfigurations(',')).toEqual({ ok: false, unknown: [] });
  });
});

import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../processors/embed/embedder.js';
import { NearDuplicateFilter } from '../../processors/dedupe/drop-near-duplicates.js';
import { chunkDocument, chunkReportTimes, interactionDocument } from '../../processors/index/index-documents.js';
import { DAY_MS } from '../../processors/query/rank-candidates.js';
import { parseSearchRequest, type SearchRequest } from '../../processors/query/search-request.js';
import type { Chunk, Interaction, Provenance } from '../../schemas/records.generated.js';
import {
  latestReportWithin,
  monthBounds,
  REPORT_SPREAD_MS,
  timeIntervals,
  type StoredDocument,
} from '../../streams/datastore/datastore.js';
import { datastoreNames, monthlyIndex } from '../../streams/elasticsearch/datastore-templates.js';
import { EmbeddedDatastore } from '../../streams/embedded/embedded-datastore.js';
import { Retriever } from '../../streams/retrieval/retrieve.js';

const HOUR = 3_600_000;

function report(article: string, t: number): Provenance {
  return { article_id: article, url: `https://${article}.example/`, source: `${article}.example`, published_at: t };
}

function chunk(id: string, t: number, text: string, more: Provenance[] = []): Chunk {
  return {
    id,
    article_id: `art-${id}`,
    index: 0,
    text,
    title: '',
    marked_text: text,
    entity_ids: [],
    entities: [],
    t,
    provenance: [report(`art-${id}`, t), ...more],
  };
}

describe('report times of an indexed chunk', () => {
  const T = Date.UTC(2025, 0, 14, 12);

  it('lists every distinct report, ascending, its own first; an earlier merged report counts as of its own', () => {
    const merged = chunk('s', T, 'text', [
      report('b', T + 2 * DAY_MS),
      report('c', T + 2 * DAY_MS),
      report('d', T - HOUR),
    ]);
    expect(chunkReportTimes(merged)).toEqual([T, T + 2 * DAY_MS]);
    expect(chunkDocument(merged, Float32Array.from([1, 0]), 'm', T)).toMatchObject({
      published_at: T,
      reported_at: [T, T + 2 * DAY_MS],
    });
    expect(chunkReportTimes(chunk('alone', T, 'text'))).toEqual([T]);
    const interaction: Interaction = {
      id: 'i',
      t: T,
      subject_id: 'e-a',
      subject_name: 'A',
      object_id: null,
      object_name: null,
      text: 'A did something',
      title: '',
      variant: 'M1',
      chunk_ids: [],
      article_ids: [],
      urls: [],
      model: 'test',
      extracted_at: T,
    };
    expect(interactionDocument(interaction, Float32Array.from([1, 0]), 'm', T)).toMatchObject({ reported_at: [T] });
  });

  it('never reaches past a survivor’s time by more than the dedupe window, which month selection widens by', () => {
    // The same text reported again and again: each offer merges into the first while it is held.
    const text = 'The harbour storm closes the ferry port for the whole of the coming week, officials said.';
    const filter = new NearDuplicateFilter();
    expect(filter.offer(chunk('first', T, text)).kind).toBe('unique');
    let survivor: Chunk | undefined;
    for (const days of [1, 6, 7]) {
      const decided = filter.offer(chunk(`d${days}`, T + days * DAY_MS, text));
      expect(decided.kind).toBe('duplicate');
      if (decided.kind === 'duplicate') survivor = decided.survivor;
    }
    // A report more than one window later finds the survivor evicted: it starts a document of its own.
    expect(filter.offer(chunk('d8', T + 8 * DAY_MS, text)).kind).toBe('unique');
    expect(survivor!.id).toBe('first');
    expect(Math.max(...chunkReportTimes(survivor!))).toBe(T + 7 * DAY_MS);
    expect(Math.max(...chunkReportTimes(survivor!)) - survivor!.t).toBeLessThanOrEqual(REPORT_SPREAD_MS);
    expect(monthBounds({ day: '2025-02-03' })).toEqual({
      from: Date.UTC(2025, 1, 3) - REPORT_SPREAD_MS,
      to: Date.UTC(2025, 1, 4) - 1,
    });
  });
});

describe('time conditions over report times', () => {
  it('are intervals that one report time must fall in', () => {
    expect(timeIntervals({})).toEqual([{ from: -Infinity, to: Infinity }]);
    expect(timeIntervals({ days: { from: '2025-01-01', to: '2025-01-03', except: '2025-01-02' } })).toEqual([
      { from: Date.UTC(2025, 0, 1), to: Date.UTC(2025, 0, 2) - 1 },
      { from: Date.UTC(2025, 0, 3), to: Date.UTC(2025, 0, 4) - 1 },
    ]);
    expect(timeIntervals({ day: '2025-01-02', publishedTo: Date.UTC(2025, 0, 1) })).toEqual([]);
    const document: StoredDocument = {
      id: 'x',
      kind: 'chunk',
      text: '',
      published_at: Date.UTC(2025, 0, 1, 9),
      reported_at: [Date.UTC(2025, 0, 1, 9), Date.UTC(2025, 0, 2, 9), Date.UTC(2025, 0, 5, 9)],
    };
    expect(latestReportWithin(document, {})).toBe(Date.UTC(2025, 0, 5, 9));
    expect(latestReportWithin(document, { publishedTo: Date.UTC(2025, 0, 4) })).toBe(Date.UTC(2025, 0, 2, 9));
    expect(latestReportWithin(document, { day: '2025-01-03' })).toBeUndefined();
    // Without report times (indexed before they existed): its one time.
    const legacy: StoredDocument = { ...document };
    delete legacy.reported_at;
    expect(latestReportWithin(legacy, {})).toBe(Date.UTC(2025, 0, 1, 9));
  });
});

describe('retrieval of a story reported again', () => {
  // Survivor: first reported on 14 January, reported again by another outlet on the 20th.
  const FIRST = Date.UTC(2025, 0, 14, 12);
  const AGAIN = Date.UTC(2025, 0, 20, 10);
  const TQ = Date.UTC(2025, 0, 21, 12);
  const rows: [Chunk, number][] = [
    [chunk('survivor', FIRST, 'Harbour storm closes the ferry port.', [report('followup', AGAIN)]), 0.8],
    // More relevant, and first reported after the survivor's first report but before its second.
    [chunk('other', Date.UTC(2025, 0, 17, 12), 'Ferry port reopens after repairs.'), 0.85],
    [chunk('older', Date.UTC(2025, 0, 6, 12), 'Storm season forecast for the harbour.'), 0.7],
  ];
  const embedder: Embedder = {
    model: 'fixed',
    dimensions: 2,
    embed: (texts) => Promise.resolve(texts.map(() => Float32Array.from([1, 0]))),
    close: () => Promise.resolve(),
  };

  async function retriever(): Promise<Retriever> {
    const datastore = new EmbeddedDatastore('neon');
    await datastore.prepare({ model: 'fixed', dimensions: 2 });
    const writer = datastore.writer({ stage: 'test' });
    for (const [row, cos] of rows) {
      await writer.write({
        index: monthlyIndex(datastoreNames('chunks'), row.t),
        id: row.id,
        document: chunkDocument(row, Float32Array.from([cos, Math.sqrt(1 - cos * cos)]), 'fixed', TQ),
      });
    }
    return new Retriever({ datastore, embedder });
  }

  function request(input: Record<string, unknown>, more: Partial<SearchRequest> = {}): SearchRequest {
    const parsed = parseSearchRequest(
      {
        q: 'harbour ferry',
        date: new Date(TQ).toISOString(),
        store: 'chunks',
        fusion: 'dense',
        time_words: false,
        ...input,
      },
      0,
    );
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    return { ...parsed.request, ...more };
  }

  it('is ranked by TempRALM as of its latest report, and cited with it', async () => {
    const found = await (await retriever()).search(request({ strategy: 'tempralm', alpha: 1, k: 3 }));
    // By its first report (a week old) it would follow `other` (more relevant, four days old).
    expect(found.items.map((item) => item.id)).toEqual(['survivor', 'other', 'older']);
    expect(found.items[0]).toMatchObject({
      published_at: new Date(AGAIN).toISOString(),
      url: 'https://followup.example/',
    });
    expect(found.items[1]).toMatchObject({ url: 'https://art-other.example/' });
  });

  it('is found in the window of its later report, and as of a time between its reports by its first', async () => {
    const r = await retriever();
    const inWindow = await r.search(
      request({ strategy: 'generic', k: 3 }, { window: { from: Date.UTC(2025, 0, 19), to: Date.UTC(2025, 0, 21) } }),
    );
    expect(inWindow.items.map((item) => [item.id, item.published_at])).toEqual([
      ['survivor', new Date(AGAIN).toISOString()],
    ]);
    const asOfEarlier = await r.search(request({ strategy: 'generic', k: 3, date: '2025-01-18' }));
    expect(asOfEarlier.items.map((item) => [item.id, item.published_at, item.url])).toEqual([
      ['other', new Date(Date.UTC(2025, 0, 17, 12)).toISOString(), 'https://art-other.example/'],
      ['survivor', new Date(FIRST).toISOString(), 'https://art-survivor.example/'],
      ['older', new Date(Date.UTC(2025, 0, 6, 12)).toISOString(), 'https://art-older.example/'],
    ]);
    // The exact-day strategy finds it on the day of its later report.
    const sameDay = await r.search(request({ strategy: 'temporal', k: 1, date: '2025-01-20', window_days: 0 }));
    expect(sameDay.items.map((item) => [item.id, item.day_distance])).toEqual([['survivor', 0]]);
  });
});

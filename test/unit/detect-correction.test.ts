import { describe, expect, it } from 'vitest';
import { comparableUrl, detectCorrection } from '../../processors/index/detect-correction.js';
import { correctedIds, reportedUrls } from '../../processors/query/supersede-revisions.js';

const OWN = 'https://www.news.example/2025/06/04/correction';
const EARLIER = 'https://news.example/2025/06/02/ferry-fares';

describe('a correction named by a later article', () => {
  it('compares URLs without scheme, www., fragment or trailing slash', () => {
    expect(comparableUrl('https://WWW.News.example/a/b/?x=1#top')).toBe('news.example/a/b?x=1');
    expect(comparableUrl('http://news.example/a/b')).toBe('news.example/a/b');
    expect(comparableUrl('ftp://news.example/a')).toBeUndefined();
    expect(comparableUrl('not a url')).toBeUndefined();
  });

  it('is a correction when the headline or the first sentence says so and the text names the article on its own host', () => {
    const named = `The figure in ${EARLIER}. was wrong.`;
    for (const title of ['Correction: ferry fares', 'CLARIFICATION - fares', 'Update: fares', "Editor's note: fares"]) {
      expect(detectCorrection({ title, text: named, ownUrl: OWN, first: false })).toEqual({
        kind: 'correction',
        urls: ['news.example/2025/06/02/ferry-fares'],
      });
    }
    expect(
      detectCorrection({
        title: 'Ferry fares',
        text: `An earlier version of this article (${EARLIER}) gave 20 percent. Fares rise by 12 percent.`,
        ownUrl: OWN,
        first: true,
      }),
    ).toMatchObject({ kind: 'correction' });
  });

  it('is a retraction when it says retracts or withdrawn', () => {
    expect(
      detectCorrection({ title: 'Paper retracts mayor report', text: `See ${EARLIER}`, ownUrl: OWN, first: false }),
    ).toEqual({ kind: 'retraction', urls: ['news.example/2025/06/02/ferry-fares'] });
    expect(
      detectCorrection({
        title: 'Mayor',
        text: `Our report ${EARLIER} has been withdrawn. More.`,
        ownUrl: OWN,
        first: true,
      }),
    ).toMatchObject({ kind: 'retraction' });
  });

  it('is nothing without the words, without a URL on its own host, or when only a later sentence says it', () => {
    expect(
      detectCorrection({ title: 'Ferry fares rise', text: `See ${EARLIER}`, ownUrl: OWN, first: true }),
    ).toBeUndefined();
    expect(
      detectCorrection({
        title: 'Correction: fares',
        text: 'https://other.example/2025/06/02/ferry-fares',
        ownUrl: OWN,
        first: true,
      }),
    ).toBeUndefined();
    expect(
      detectCorrection({ title: 'Correction: fares', text: `Itself: ${OWN}`, ownUrl: OWN, first: true }),
    ).toBeUndefined();
    expect(
      detectCorrection({
        title: 'Fares',
        text: `Fares rose. The minister was withdrawn from ${EARLIER}.`,
        ownUrl: OWN,
        first: true,
      }),
    ).toBeUndefined();
    expect(
      detectCorrection({ title: 'Fares', text: `Correction: ${EARLIER} was wrong.`, ownUrl: OWN, first: false }),
    ).toBeUndefined();
  });

  it('leaves out a report only when every article it comes from is named', () => {
    const documents = [
      { id: 'c1', kind: 'chunk' as const, urls: [EARLIER, 'https://wire.example/copy'] },
      { id: 'c2', kind: 'chunk' as const, urls: ['https://wire.example/copy'] },
      { id: 's1', kind: 'interaction' as const, urls: [EARLIER] },
      { id: 's2', kind: 'interaction' as const, urls: [EARLIER, 'https://news.example/other'] },
      { id: 's3', kind: 'interaction' as const, urls: [] },
    ];
    expect(reportedUrls(documents[0]!)).toEqual(['news.example/2025/06/02/ferry-fares']);
    expect([...correctedIds(documents, [{ corrects_urls: ['news.example/2025/06/02/ferry-fares'] }])].sort()).toEqual([
      'c1',
      's1',
    ]);
  });
});

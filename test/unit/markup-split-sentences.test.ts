import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { readFileSync } from 'node:fs';

import { compromiseCuts, splitSentences, tokenizerCuts } from '../../processors/markup/split-sentences.js';

const texts = (text: string): string[] => splitSentences(text).map((r) => text.slice(r.start, r.end));

/** Hard cases for a news sentence splitter, with the expected sentences. */
const HARD_CASES: [string, string[]][] = [
  ['Mr. Smith went to Washington. He arrived on Monday.', ['Mr. Smith went to Washington.', 'He arrived on Monday.']],
  [
    'Dr. Jones met Sen. Warren in the U.S. Senate. They talked.',
    ['Dr. Jones met Sen. Warren in the U.S. Senate.', 'They talked.'],
  ],
  [
    'The U.S. economy grew 2.5% in Q3. Analysts were surprised.',
    ['The U.S. economy grew 2.5% in Q3.', 'Analysts were surprised.'],
  ],
  ['J. K. Rowling published a new book. It sold well.', ['J. K. Rowling published a new book.', 'It sold well.']],
  [
    'Apple Inc. reported earnings on Jan. 5. Shares rose 3.2 percent.',
    ['Apple Inc. reported earnings on Jan. 5.', 'Shares rose 3.2 percent.'],
  ],
  [
    'He lives on Main St. in Springfield. His neighbour is Gen. Patton.',
    ['He lives on Main St. in Springfield.', 'His neighbour is Gen. Patton.'],
  ],
  ['"We will win," she said. "No doubt."', ['"We will win," she said.', '"No doubt."']],
  ['He said: "It is over." Then he left.', ['He said: "It is over."', 'Then he left.']],
  [
    'What happened? Nobody knows! Police are investigating.',
    ['What happened?', 'Nobody knows!', 'Police are investigating.'],
  ],
  ['The No. 1 seed lost. Fans wept.', ['The No. 1 seed lost.', 'Fans wept.']],
  [
    'Prices rose by 1.5 per cent. The Bank of England held rates at 4.75%.',
    ['Prices rose by 1.5 per cent.', 'The Bank of England held rates at 4.75%.'],
  ],
  ['U.S. President Joe Biden spoke. The U.K. responded.', ['U.S. President Joe Biden spoke.', 'The U.K. responded.']],
  [
    'The company, based in St. Louis, Mo., fired its CEO. The board met.',
    ['The company, based in St. Louis, Mo., fired its CEO.', 'The board met.'],
  ],
  [
    'Gov. Newsom (D-Calif.) signed the bill. It takes effect Jan. 1.',
    ['Gov. Newsom (D-Calif.) signed the bill.', 'It takes effect Jan. 1.'],
  ],
  [
    'Headline without a period\n\nThe first paragraph starts here.',
    ['Headline without a period', 'The first paragraph starts here.'],
  ],
];

describe('splitSentences', () => {
  it.each(HARD_CASES)('splits %j', (text, expected) => {
    expect(texts(text)).toEqual(expected);
  });

  it('beats Intl.Segmenter, the alternative, which splits after abbreviations', () => {
    const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });
    const segmented = (text: string): string[] =>
      [...segmenter.segment(text)].map((s) => s.segment.trim()).filter((s) => s.length > 0);
    const intlRight = HARD_CASES.filter(
      ([text, expected]) => JSON.stringify(segmented(text)) === JSON.stringify(expected),
    );
    const oursRight = HARD_CASES.filter(([text, expected]) => JSON.stringify(texts(text)) === JSON.stringify(expected));
    expect(oursRight.length).toBe(HARD_CASES.length);
    expect(intlRight.length).toBeLessThan(HARD_CASES.length - 4);
  });

  it('always ends a sentence at a blank line, even without punctuation', () => {
    expect(texts('Trump Wins\n\nDonald Trump won the vote\n \nOfficials said so.')).toEqual([
      'Trump Wins',
      'Donald Trump won the vote',
      'Officials said so.',
    ]);
  });

  it('returns offsets into the original text, trimmed', () => {
    const text = '  First one.   Second one.  ';
    expect(splitSentences(text)).toEqual([
      { start: 2, end: 12 },
      { start: 15, end: 26 },
    ]);
  });

  it('handles empty and blank text', () => {
    expect(splitSentences('')).toEqual([]);
    expect(splitSentences(' \n\n \t')).toEqual([]);
  });

  it('counts offsets in UTF-16 code units', () => {
    const text = '😀 Zoë met Ōsaka’s mayor. He left.';
    const ranges = splitSentences(text);
    expect(ranges.map((r) => text.slice(r.start, r.end))).toEqual(['😀 Zoë met Ōsaka’s mayor.', 'He left.']);
  });

  it('gives in-order, non-overlapping, trimmed sentences that cover every non-space character', () => {
    const piece = fc.constantFrom(
      'Mr. Smith',
      'went',
      'to',
      'the U.S.',
      'Senate.',
      'Why?',
      '"Yes."',
      'No. 1',
      '3.5%',
      '\n\n',
      '\n',
      'Jan. 5',
      '!',
      '…',
      'Zoë',
      '😀',
      '  ',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const text = pieces.join(' ');
        const ranges = splitSentences(text);
        let covered = 0;
        let previousEnd = 0;
        for (const r of ranges) {
          expect(r.start).toBeGreaterThanOrEqual(previousEnd);
          expect(r.end).toBeGreaterThan(r.start);
          const sentence = text.slice(r.start, r.end);
          expect(sentence).toBe(sentence.trim());
          covered += sentence.replace(/\s/g, '').length;
          previousEnd = r.end;
        }
        expect(covered).toBe(text.replace(/\s/g, '').length);
      }),
      { numRuns: 200 },
    );
  });

  it("cuts where compromise's full tokenizer does, from its sentence splitter alone", () => {
    // The bundled sample's paragraphs, the hard cases, and random text made of sentence-ish pieces.
    const sample = readFileSync('samples/wikipedia-current-events-2025q1/articles.jsonl', 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .slice(0, 300)
      .map((line) => (JSON.parse(line) as { text: string }).text);
    for (const paragraph of [...sample, ...HARD_CASES.map(([text]) => text)]) {
      expect(compromiseCuts(paragraph), paragraph).toEqual(tokenizerCuts(paragraph));
    }
    const piece = fc.constantFrom(
      'Mr.',
      'U.S.',
      'Smith',
      'said',
      '"No."',
      '(yes!)',
      'No. 5',
      'e.g.',
      '?',
      '...',
      '2.5%',
      'Jan.',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 30 }),
        fc.array(fc.constantFrom(' ', '  ', '\n'), { minLength: 30, maxLength: 30 }),
        (words, gaps) => {
          const paragraph =
            words
              .map((w, i) => w + gaps[i]!)
              .join('')
              .trim() || 'x';
          expect(compromiseCuts(paragraph)).toEqual(tokenizerCuts(paragraph));
        },
      ),
      { numRuns: 300 },
    );
  });
});

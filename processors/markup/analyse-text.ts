/**
 * The part of markup that reads nothing but the text: sentences, entity mentions and date
 * expressions. It is nearly all of markup's time (the tagger) and needs no state, so it can run on
 * worker threads (markup-workers.ts) while linking to the registry stays with the stage.
 * Plain data in, plain data out: it crosses a thread boundary by structured clone.
 */
import { findDateExpressions, type FoundDateExpression } from './find-date-expressions.js';
import { recognizeEntities, type EntitySpan } from './recognize-entities.js';
import { splitSentences, type TextRange } from './split-sentences.js';

export interface TextAnalysis {
  sentences: TextRange[];
  /** In text order, not yet limited to whole sentences or to the article's mention budget. */
  spans: EntitySpan[];
  dates: FoundDateExpression[];
}

export function analyseText(text: string, publishedAt: number): TextAnalysis {
  return {
    sentences: splitSentences(text),
    spans: recognizeEntities(text),
    dates: findDateExpressions(text, publishedAt),
  };
}

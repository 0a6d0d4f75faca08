import { describe, expect, it } from 'vitest';
import { opensOnWhatCameBefore } from '../../processors/query/answer-candidates.js';

describe('a sentence that opens on the one before it', () => {
  it('is one when it opens with a pronoun, a connective or an event noun that points back', () => {
    for (const sentence of [
      'In response to the visit, Danish prime minister Mette Frederiksen states that Greenland belongs to the Greenlanders.',
      'He was sworn in on Monday.',
      'This comes after weeks of protests.',
      'As a result, flights were cancelled.',
      'However, the ceasefire did not hold.',
      'The move drew criticism from Denmark.',
      'The company said it would appeal.',
      'The next day, rebels entered the city.',
      'WASHINGTON (AP) — They voted against the bill.',
    ]) {
      expect(opensOnWhatCameBefore(sentence), sentence).toBe(true);
    }
  });

  it('is none when it names what it is about', () => {
    for (const sentence of [
      'Danish prime minister Mette Frederiksen states that Greenland belongs to the Greenlanders.',
      'Thessaloniki hosts the summit.',
      'Theresa May resigns.',
      'Itamar Ben-Gvir quits the government.',
      'The King of Denmark changes the coat of arms.',
      'Hegseth is confirmed as Secretary of Defense.',
      'Butler wins the final.',
    ]) {
      expect(opensOnWhatCameBefore(sentence), sentence).toBe(false);
    }
  });
});

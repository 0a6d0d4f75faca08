import { describe, expect, it } from 'vitest';
import {
  asksSomething,
  datesIn,
  hasGluedHeadline,
  isBoilerplate,
  looksLikeHeadline,
  namesIn,
  numbersIn,
  withoutDateline,
} from '../../processors/query/answer-candidates.js';
import { askedNouns, expectedAnswerType } from '../../processors/query/answer-type.js';
import {
  chooseAnswerSentences,
  hasVerb,
  rankAnswerSentences,
  rankItemsByAnswerSentence,
  sameWordFamily,
  type SentenceSource,
} from '../../processors/query/choose-answer-sentences.js';
import { contentTerms, stem } from '../../processors/query/question-terms.js';

describe('the kind of answer a question asks for', () => {
  it.each([
    ['Who won the German federal election?', 'person'],
    ['To whom did the prize go?', 'person'],
    ['Whose seat is she filling?', 'person'],
    ['When did the terminal open?', 'date'],
    ['In what year was the treaty signed?', 'date'],
    ['How many seats did Alternative for Germany win?', 'number'],
    ['What percentage of babies were born out of wedlock?', 'number'],
    ['Despite dropping slightly, how much have gas prices increased?', 'number'],
    ['Where did the debate take place?', 'place'],
    ['A new study names which country as the worst for housing?', 'place'],
    ['The US made a deal with which country to free five Americans?', 'place'],
    ['Which former NFL star announced he will become a professor?', 'person'],
    ['Ron DeSantis announced his bid on which social media platform?', 'name'],
    ['Sue Bird played her final game this week. Which team did she play for?', 'name'],
    ['She also appeared in which of these films?', 'name'],
    ["What is the name of Joe Biden's dog?", 'name'],
    ['The new variant has arrived. What is it called?', 'name'],
    ['Why was the park shut down?', 'reason'],
    ['What did the images show?', 'other'],
    ['Doja Cat news', 'other'],
  ])('%s → %s', (question, type) => {
    expect(expectedAnswerType(question)).toBe(type);
  });

  it('reads "who" after a noun or a comma as a relative pronoun, not as the question', () => {
    expect(
      expectedAnswerType(
        'Actress Cindy Williams, who played Shirley, died at 75. She appeared in which of these films?',
      ),
    ).toBe('name');
    expect(expectedAnswerType('How old was the player who scored the winning goal?')).toBe('number');
  });
});

describe('the nouns a "which <noun>" question asks for', () => {
  it.each([
    ['Which city did M23 rebels capture?', ['city']],
    ['Ron DeSantis announced his bid on which social media platform?', ['social', 'media', 'platform']],
    ['She also appeared in which of these films?', ['films']],
    ['What company did the FTC sue this week?', ['company']],
    ["What is the name of Joe Biden's dog?", []],
    ['Who won the German federal election?', []],
    ['Actress Cindy Williams, which studio was it?', []],
  ])('%s → %j', (question, nouns) => {
    expect(askedNouns(question)).toEqual(nouns);
  });
});

describe('question terms', () => {
  it('drops function, question and time words and stems lightly', () => {
    expect(contentTerms('Who won the German federal election this week?')).toEqual([
      'win',
      'german',
      'federal',
      'election',
    ]);
    expect(['ferries', 'ferry'].map(stem)).toEqual(['ferry', 'ferry']);
    expect(['voted', 'voting', 'vote'].map(stem)).toEqual(['vot', 'vot', 'vot']);
    expect(['winning', 'wins', 'won'].map(stem)).toEqual(['win', 'win', 'win']);
    expect(stem('28.5')).toBe('28.5');
  });

  it('takes a country and its adjective for one word family, but not two short words', () => {
    expect(sameWordFamily('german', 'germany')).toBe(true);
    expect(sameWordFamily('russia', 'russian')).toBe(true);
    expect(sameWordFamily('win', 'wind')).toBe(false);
    expect(sameWordFamily('german', 'germanic-speaking')).toBe(false);
  });
});

describe('answer candidates of a sentence', () => {
  const seen = new Set(['merz']);

  it('finds names: capitalised runs cut at a possessive, connectors inside, quoted titles', () => {
    expect(namesIn("Friedrich Merz's CDU/CSU won the election with 28.5% of the vote.", seen)).toEqual([
      'Friedrich Merz',
      'CDU/CSU',
    ]);
    expect(namesIn('Officials said Alternative for Germany finished second.', seen)).toEqual([
      'Alternative for Germany',
    ]);
    expect(namesIn('"Succession" earned the most nominations on Tuesday.', seen)).toEqual(['Succession']);
    expect(namesIn('Merz said so.', seen)).toEqual(['Merz']);
    expect(namesIn('The deal was signed by acme robotics.', seen, ['acme robotics'])).toEqual(['acme robotics']);
  });

  it('leaves a dateline out of what a sentence says', () => {
    expect(withoutDateline('(CNN) President Joe Biden nominated Ketanji Brown Jackson.')).toBe(
      'President Joe Biden nominated Ketanji Brown Jackson.',
    );
    expect(withoutDateline('INDIAN WELLS, Calif. — Novak Djokovic has withdrawn.')).toBe(
      'Novak Djokovic has withdrawn.',
    );
    expect(withoutDateline('The NFL – and the NBA – agreed.')).toBe('The NFL – and the NBA – agreed.');
  });

  it('finds dates and numbers, a bare year being a date', () => {
    expect(datesIn('The terminal opened on March 3, 2024, after two years.')).toEqual(['March 3, 2024']);
    expect(numbersIn('It cost $10 billion in 2022 and 28.5% more, two times over.')).toEqual([
      '$10 billion',
      '28.5%',
      'two',
    ]);
    // The comma or full stop after a figure is the sentence's, not the number's.
    expect(numbersIn('Murdoch, 91, split with Hall, 65.')).toEqual(['91', '65']);
  });

  it('tells statements from headlines, questions, glued links and boilerplate', () => {
    expect(hasVerb('Germans vote to elect the Bundestag')).toBe(true);
    expect(hasVerb('Doja Cat interaction b')).toBe(false);
    expect(looksLikeHeadline('World Happiness Report Country Rankings')).toBe(true);
    expect(looksLikeHeadline('Finland was named the happiest country for the sixth year.')).toBe(false);
    expect(asksSomething('"Who will win?" he asked.')).toBe(true);
    expect(hasGluedHeadline('More:Burmese pythons invaded South Florida')).toBe(true);
    expect(isBoilerplate('Sign up for our newsletter.')).toBe(true);
    expect(isBoilerplate('How relevant is this ad to you?')).toBe(true);
    expect(isBoilerplate('Merz won the election.')).toBe(false);
  });
});

describe('choosing answer sentences', () => {
  const item = (text: string, kind: SentenceSource['kind'] = 'chunk'): SentenceSource => ({
    kind,
    text,
    published_at: '2025-02-23T10:00:00.000Z',
  });

  it('ranks only sentences that share a word with the question, best first, with the answers they hold', () => {
    const { type, ranked } = rankAnswerSentences('Who won the German federal election?', [
      item('Coalition talks take weeks. Germany held a federal election on Sunday.'),
      item("Friedrich Merz's CDU/CSU won the election with 28.5% of the vote."),
    ]);
    expect(type).toBe('person');
    expect(ranked.map((s) => s.text)).toEqual([
      "Friedrich Merz's CDU/CSU won the election with 28.5% of the vote.",
      'Germany held a federal election on Sunday.',
    ]);
    expect(ranked[0]!.answers).toEqual(['Friedrich Merz', 'CDU/CSU']);
    // "Germany" is the question's own "German": no answer.
    expect(ranked[1]!.answers).toEqual([]);
  });

  it('keeps the supporting sentences few, distinct and above half the lead’s score', () => {
    const choice = chooseAnswerSentences(
      'How many seats did Alternative for Germany win?',
      [
        item('Alternative for Germany won 152 seats. Alternative for Germany won 152 seats in all.'),
        item('The far-right party won 152 seats, its best result.'),
        item('Alternative for Germany won seats in every eastern state.'),
        item('The Left won 64 seats.'),
        item('Alternative for Germany held a rally in Berlin.'),
        item('The Greens welcomed the result.'),
      ],
      { support: 2 },
    );
    expect(choice.lead?.text).toBe('Alternative for Germany won 152 seats.');
    expect(choice.support).toHaveLength(2);
    expect(choice.support.map((s) => s.text)).not.toContain('Alternative for Germany won 152 seats in all.');
    for (const s of choice.support) expect(s.score).toBeGreaterThanOrEqual(choice.lead!.score / 2);
  });

  it('leads with the sentence that holds the verb a "who <verb>" question asks about, over one with only its nouns', () => {
    const one = (text: string) => ({ ...item(text), published_at: '2025-02-23T10:00:00.000Z' });
    const choice = chooseAnswerSentences('Who won the German federal election?', [
      one(
        'Germans vote to elect the Bundestag. The opposition CDU/CSU wins a plurality, with 28.5% of the vote and 208 seats.',
      ),
    ]);
    expect(choice.lead?.text).toBe('The opposition CDU/CSU wins a plurality, with 28.5% of the vote and 208 seats.');
    // No predicate of its own after "who": nothing changes.
    const is = rankAnswerSentences('Who is the chancellor?', [item('Olaf Scholz is the chancellor.')]);
    expect(is.ranked[0]!.text).toBe('Olaf Scholz is the chancellor.');
  });

  it('ranks passages by the best sentence each holds, not by their place or date', () => {
    const passages = [
      // The question's words spread over a scene, no answer of the kind asked for.
      item(
        'The German federal election drew a high turnout. Voters queued in Berlin. The election result was announced late.',
      ),
      item('Weather in Hamburg stayed mild.'),
      // One sentence states the fact asked for, with the name.
      {
        ...item("Friedrich Merz's CDU/CSU won the German election with 28.5% of the vote."),
        published_at: '2020-01-01T00:00:00.000Z',
      },
    ];
    const ranked = rankItemsByAnswerSentence('Who won the German federal election?', passages);
    expect(ranked.map((r) => r.item)).toEqual([2, 0]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
    // The same order whatever order they come in: no weight on the place given.
    const reversed = rankItemsByAnswerSentence('Who won the German federal election?', [...passages].reverse());
    expect(reversed.map((r) => r.item)).toEqual([0, 2]);
    // Without a content word to match there is no opinion to give.
    expect(rankItemsByAnswerSentence('Who?', passages)).toEqual([]);
  });

  it("reads an interaction's source passage as its own: the sentence next to the one it restates can answer", () => {
    const statement = {
      ...item('Germany holds a federal election on Sunday.', 'interaction'),
      passage: "Germany held a federal election on Sunday. Friedrich Merz's CDU/CSU won it with 28.5% of the vote.",
    };
    const choice = chooseAnswerSentences('Who won the German federal election?', [statement]);
    expect(choice.lead).toMatchObject({ item: 0, text: "Friedrich Merz's CDU/CSU won it with 28.5% of the vote." });
    // Without its passage the statement alone only sets the scene.
    const alone = chooseAnswerSentences('Who won the German federal election?', [{ ...statement, passage: undefined }]);
    expect(alone.lead?.text).toBe('Germany holds a federal election on Sunday.');
    // A passage two statements share is read once, as the first one's.
    const twice = rankAnswerSentences('Who won the German federal election?', [statement, { ...statement, text: 'x' }]);
    expect(twice.ranked.filter((s) => s.text.startsWith('Friedrich')).map((s) => s.item)).toEqual([0]);
    // Passages rank items too.
    const ranked = rankItemsByAnswerSentence('Who won the German federal election?', [
      item('Germany holds a federal election on Sunday.', 'interaction'),
      statement,
    ]);
    expect(ranked[0]!.item).toBe(1);
  });

  it('gives first the name the sentence puts after the noun a "which <noun>" question asks for', () => {
    const capture = item(
      'M23 rebels claim to have captured the city of Goma in North Kivu Province, Democratic Republic of the Congo.',
    );
    const city = chooseAnswerSentences('Which city did M23 rebels capture?', [capture]);
    expect(city.lead?.answers).toEqual(['Goma']);
    expect(city.leadName).toBe('Goma');
    // Without such a noun every new name stays a candidate, and none is put first.
    const who = chooseAnswerSentences('Who captured land in North Kivu?', [
      item('M23 rebels and Rwandan troops captured the city of Goma.'),
    ]);
    expect(who.lead?.answers.length).toBeGreaterThan(1);
    expect(who.leadName).toBeNull();
    const firm = chooseAnswerSentences('Which companies did the FTC sue?', [
      item('The FTC sued the company Amazon, and Microsoft was fined in Dublin.'),
    ]);
    expect(firm.leadName).toBe('Amazon');
  });

  it('leads a name question with the name most sources give, when its sentence nearly ties the best', () => {
    const question = 'Which team won the Super Bowl?';
    const eagles = 'The Philadelphia Eagles won the Super Bowl parade permit, the city said.';
    const chiefs = 'The Chiefs won the Super Bowl on a late field goal.';
    const items = [
      item(eagles),
      item(chiefs),
      item('The Kansas City Chiefs won the Super Bowl in Glendale.'),
      item('Patrick Mahomes and the Kansas City Chiefs won the Super Bowl again.'),
    ];
    const plain = chooseAnswerSentences(question, items, { corroborate: false });
    expect(plain.lead?.text).toBe(eagles);
    // Three reports back the Chiefs ("Chiefs" counts for "Kansas City Chiefs"), one the Eagles: the
    // best sentence naming the Chiefs leads, as it scores over 0.9 of the best.
    const corroborated = chooseAnswerSentences(question, items);
    expect(corroborated.lead?.text).toBe(chiefs);
    expect(corroborated.lead!.score).toBeGreaterThanOrEqual(plain.lead!.score * 0.9);
    expect(corroborated.support.map((s) => s.text)).toContain(eagles);
    // Only one report of each: nothing to corroborate, the best leads.
    expect(chooseAnswerSentences(question, items.slice(0, 2)).lead?.text).toBe(eagles);
  });

  it('lets only reports of the same days corroborate: older reports of a recurring event never outvote the latest', () => {
    const question = "Who won the Lakeside Open women's final?";
    const on = (day: string, text: string): SentenceSource => ({ ...item(text), published_at: `${day}T10:00:00.000Z` });
    const latest = "Ayla Demir won the Lakeside Open women's final on Saturday.";
    // Three earlier years' reports name another champion, each scoring over 0.9 of the latest:
    // counted as votes, they would put last year's winner first.
    const items = [
      on('2022-01-22', latest),
      on('2021-01-23', "Ines Duarte won the Lakeside Open women's final on Saturday in three sets."),
      on('2020-01-25', "Ines Duarte won the Lakeside Open women's final on Saturday in two sets."),
      on('2019-01-26', "Ines Duarte won the Lakeside Open women's final on Saturday in straight sets."),
    ];
    const asOf = Date.parse('2022-01-23T00:00:00Z');
    const { ranked } = rankAnswerSentences(question, items, asOf);
    expect(ranked[0]!.text).toBe(latest);
    expect(ranked.slice(1).every((s) => s.score >= ranked[0]!.score * 0.9)).toBe(true);
    expect(chooseAnswerSentences(question, items, { asOf }).lead?.text).toBe(latest);
  });

  it('keeps the best sentence when the corroborated one scores well below it, and for questions not asking for a name', () => {
    const question = 'Which team won the Super Bowl?';
    const eagles = 'The Philadelphia Eagles won the Super Bowl parade permit, the city said.';
    const items = [
      item(eagles),
      // Two reports back the Chiefs, together more than the Eagles' one, each scoring under 0.9 of it.
      item('The Kansas City Chiefs won the Super Bowl in Glendale.'),
      item('Patrick Mahomes and the Kansas City Chiefs won the Super Bowl again.'),
    ];
    const { ranked } = rankAnswerSentences(question, items);
    expect(ranked[0]!.text).toBe(eagles);
    expect(ranked[1]!.score + ranked[2]!.score).toBeGreaterThan(ranked[0]!.score);
    expect(ranked[1]!.score).toBeLessThan(ranked[0]!.score * 0.9);
    expect(chooseAnswerSentences(question, items).lead?.text).toBe(eagles);
    // Number questions are never corroborated: the best sentence leads either way.
    const many = [
      item('The far-right party won 152 seats, its best result in the federal election.'),
      item('Reports said 150 seats.'),
      item('Analysts expected 150 seats.'),
    ];
    const seats = 'How many seats did the far-right party win in the federal election?';
    expect(chooseAnswerSentences(seats, many).lead?.text).toBe(
      chooseAnswerSentences(seats, many, { corroborate: false }).lead?.text,
    );
  });

  it('chooses nothing from nothing', () => {
    expect(chooseAnswerSentences('Who won?', [])).toEqual({ type: 'person', lead: null, support: [], leadName: null });
  });
});

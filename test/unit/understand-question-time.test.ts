import { describe, expect, it } from 'vitest';

import { timeFilter } from '../../processors/query/rank-candidates.js';
import type { SearchRequest } from '../../processors/query/search-request.js';
import {
  applyTimeIntent,
  coverageWindow,
  understandQuestionTime,
  type QuestionTimeIntent,
} from '../../processors/query/understand-question-time.js';

/** Wednesday 12 March 2025, 15:00 UTC. */
const TQ = Date.UTC(2025, 2, 12, 15);
/** Monday 3 July 2023, 08:00 UTC. */
const MONDAY = Date.UTC(2023, 6, 3, 8);
/** Sunday 5 January 2025, 20:00 UTC. */
const SUNDAY = Date.UTC(2025, 0, 5, 20);

const start = (day: string): number => Date.parse(`${day}T00:00:00.000Z`);
const end = (day: string): number => Date.parse(`${day}T23:59:59.999Z`);

/** The reading in a line: constraint, window as days (`tq` for the query time), recency. */
function reading(question: string, tq = TQ): string {
  const intent = understandQuestionTime(question, tq);
  const show = (t: number | undefined, side: 'from' | 'to'): string => {
    if (t === undefined) return '…';
    if (t === tq) return 'tq';
    const day = new Date(t).toISOString().slice(0, 10);
    const exact = side === 'from' ? start(day) === t : end(day) === t;
    return exact ? day : new Date(t).toISOString();
  };
  const window = intent.window ? ` ${show(intent.window.from, 'from')}..${show(intent.window.to, 'to')}` : '';
  return `${intent.constraint}${window}${intent.recency ? ' recency' : ''}`;
}

describe('understandQuestionTime: relative words', () => {
  it.each([
    ['What happened in Gaza today?', 'within 2025-03-12..tq'],
    ['What happened in Gaza yesterday?', 'within 2025-03-11..2025-03-11'],
    ['What did Trump say last night?', 'within 2025-03-11..2025-03-11'],
    ['What has happened this week?', 'within 2025-03-10..tq'],
    ['What did Trump say about tariffs last week?', 'within 2025-03-03..2025-03-09'],
    ['What happened in the past week?', 'within 2025-03-05..tq'],
    ['What happened in the last week?', 'within 2025-03-05..tq'],
    ['Which stocks fell in the past 3 days?', 'within 2025-03-09..tq'],
    ['What happened over the last two weeks?', 'within 2025-02-26..tq'],
    ['What happened in the past 2 months?', 'within 2025-01-12..tq'],
    ['What happened in the last 24 hours?', 'within 2025-03-11T15:00:00.000Z..tq'],
    ['What happened this month?', 'within 2025-03-01..tq'],
    ['What happened last month?', 'within 2025-02-01..2025-02-28'],
    ['What happened earlier this month?', 'within 2025-03-01..tq'],
    ['What happened this year?', 'within 2025-01-01..tq'],
    ['What happened last year?', 'within 2024-01-01..2024-12-31'],
    ['What happened 3 days ago?', 'within 2025-03-09..2025-03-09'],
    ['What happened two weeks ago?', 'within 2025-02-24..2025-03-02'],
    ['What happened a month ago?', 'within 2025-02-01..2025-02-28'],
    ['What happened five years ago?', 'within 2020-01-01..2020-12-31'],
    ['What happened a few days ago?', 'within 2025-03-06..2025-03-11'],
    ['What happened over the weekend?', 'within 2025-03-08..2025-03-09'],
    ['What happened last weekend?', 'within 2025-03-08..2025-03-09'],
    ['What happened in recent weeks?', 'within 2025-02-12..tq'],
    ['What happened last summer?', 'within 2024-06-01..2024-08-31'],
    ['What happened in the fall?', 'within 2024-09-01..2024-11-30'],
  ])('%s → %s', (question, expected) => {
    expect(reading(question)).toBe(expected);
  });

  it('reads weekdays as the latest such day not after tq, and "last <weekday>" as the latest before tq', () => {
    expect(reading('Which bill did the Senate pass on Monday?')).toBe('within 2025-03-10..2025-03-10');
    expect(reading('What did the pope say Sunday?')).toBe('within 2025-03-09..2025-03-09');
    expect(reading("What was in Monday's statement?")).toBe('within 2025-03-10..2025-03-10');
    expect(reading('What happened on Wednesday?')).toBe('within 2025-03-12..tq');
    expect(reading('What happened last Wednesday?')).toBe('within 2025-03-05..2025-03-05');
    expect(reading('What happened last Tuesday?')).toBe('within 2025-03-11..2025-03-11');
    expect(reading('What happened on Monday?', MONDAY)).toBe('within 2023-07-03..tq');
    expect(reading('What happened last Monday?', MONDAY)).toBe('within 2023-06-26..2023-06-26');
  });

  it('starts weeks on Monday, also when asked on a Sunday', () => {
    expect(reading('What happened this week?', SUNDAY)).toBe('within 2024-12-30..tq');
    expect(reading('What happened last week?', SUNDAY)).toBe('within 2024-12-23..2024-12-29');
  });
});

describe('understandQuestionTime: dates, months and years', () => {
  it.each([
    ['What caused the collapse of Silicon Valley Bank in March 2023?', 'within 2023-03-01..2023-03-31'],
    ['What happened in February?', 'within 2025-02-01..2025-02-28'],
    ['What happened in March?', 'within 2025-03-01..tq'],
    ['Who led the protests in May?', 'within 2024-05-01..2024-05-31'],
    ['How did the economy do in 2019?', 'within 2019-01-01..2019-12-31'],
    ['What happened on January 20, 2025?', 'within 2025-01-20..2025-01-20'],
    ['What happened on 20 January?', 'within 2025-01-20..2025-01-20'],
    ['What happened on April 2?', 'within 2024-04-02..2024-04-02'],
    ['What did Macron announce on 2025-02-10?', 'within 2025-02-10..2025-02-10'],
    ['What happened on 1/20/2025?', 'within 2025-01-20..2025-01-20'],
    ['What happened on Feb. 5?', 'within 2025-02-05..2025-02-05'],
    ['What did the court rule on the 10th?', 'within 2025-03-10..2025-03-10'],
    ['What happened in early March?', 'within 2025-03-01..2025-03-10'],
    ['What happened in mid-February?', 'within 2025-02-11..2025-02-20'],
    ['What happened at the end of January?', 'within 2025-01-21..2025-01-31'],
    ['What happened in late 2024?', 'within 2024-09-01..2024-12-31'],
    ['What happened in the first week of February?', 'within 2025-02-01..2025-02-07'],
    ['What happened in the first half of 2023?', 'within 2023-01-01..2023-06-30'],
    ['What happened in the summer of 2024?', 'within 2024-06-01..2024-08-31'],
    ['What happened in the winter of 2024?', 'within 2023-12-01..2024-02-29'],
    ['What happened during Q4 2024?', 'within 2024-10-01..2024-12-31'],
    ['What happened in the 1990s?', 'within 1990-01-01..1999-12-31'],
    ['Who died on New Year’s Day?', 'within 2025-01-01..2025-01-01'],
    ['What did the King say over Christmas?', 'within 2024-12-25..2024-12-25'],
  ])('%s → %s', (question, expected) => {
    expect(reading(question)).toBe(expected);
  });

  it('reads a month chrono passes over after a preposition ("during May"), but not the name or the verb', () => {
    expect(reading('How hot was Delhi during May?')).toBe('within 2024-05-01..2024-05-31');
    expect(reading('What happened since May?')).toBe('after 2024-05-01..tq');
    expect(reading('What happened until June?')).toBe('before …..2024-06-30');
    expect(understandQuestionTime('What happened since May resigned?', TQ).window).toBeUndefined();
    expect(understandQuestionTime('What did Theresa May say?', TQ).expressions).toEqual([]);
  });

  it('places a date written without a year in the year named beside it', () => {
    expect(reading('What happened on the 4th of July last year?', MONDAY)).toBe('within 2022-07-04..2022-07-04');
    expect(reading('What happened in March last year?')).toBe('within 2024-03-01..2024-03-31');
  });

  it('unites periods joined by "and" and reads ranges as one', () => {
    expect(reading('What happened in Gaza in January and February?')).toBe('within 2025-01-01..2025-02-28');
    expect(reading('What changed in the years 2018 and 2019?')).toBe('within 2018-01-01..2019-12-31');
    expect(reading('What happened in Syria between January 5 and February 2?')).toBe('within 2025-01-05..2025-02-02');
    expect(reading('What happened from January 5 to January 9?')).toBe('within 2025-01-05..2025-01-09');
    expect(reading('What happened January–February 2025?')).toBe('within 2025-01-01..2025-02-28');
    expect(reading('What happened from November to February?')).toBe('within 2024-11-01..2025-02-28');
    expect(reading('What happened between 2019 and 2021?')).toBe('within 2019-01-01..2021-12-31');
    expect(reading('What happened from 2015 to 2017?')).toBe('within 2015-01-01..2017-12-31');
  });
});

describe('understandQuestionTime: before, after, since, around', () => {
  it.each([
    ['What has the M23 captured since January?', 'after 2025-01-01..tq'],
    ['What happened since last Tuesday?', 'after 2025-03-11..tq'],
    ['How did oil prices move after February 10?', 'after 2025-02-11..tq'],
    ['What happened after 2020?', 'after 2021-01-01..tq'],
    ['What did Zelensky say before March 1?', 'before …..2025-02-28'],
    ['What happened before last week?', 'before …..2025-03-02'],
    ['What happened by June 24?', 'before …..2024-06-24'],
    ['What happened until yesterday?', 'before …..2025-03-11'],
    ['What happened around January 20?', 'around 2025-01-13..2025-01-27'],
  ])('%s → %s', (question, expected) => {
    expect(reading(question)).toBe(expected);
  });

  it('gives "around" a reference at its centre; every window ends by tq and says so in its reference', () => {
    expect(understandQuestionTime('What happened around January 20?', TQ).reference).toBe(start('2025-01-20'));
    expect(understandQuestionTime('What happened last month?', TQ).reference).toBe(end('2025-02-28'));
    expect(understandQuestionTime('What happened this week?', TQ).reference).toBe(TQ);
    expect(understandQuestionTime('Who leads Syria?', TQ).reference).toBe(TQ);
  });

  it('never gives a window after tq: a future period means the latest coverage instead', () => {
    for (const question of [
      'What will happen next week?',
      "Who will win tomorrow's match?",
      'What climate targets are set for 2030?',
      'What happened since next Monday?',
      'What is planned this weekend?',
    ]) {
      const intent = understandQuestionTime(question, TQ);
      expect(intent.window, question).toBeUndefined();
      expect(intent.constraint, question).toBe('none');
      expect(intent.recency, question).toBe(true);
    }
    const before = understandQuestionTime('What happened before 2030?', TQ);
    expect(before.window?.to).toBe(TQ);
  });

  it('leaves "before/after <named event>" to a lookup instead of guessing a date', () => {
    const intent = understandQuestionTime('What did Merz promise before the election?', TQ);
    expect(intent.eventAnchor).toEqual({ relation: 'before', phrase: 'the election' });
    expect(intent.window).toBeUndefined();
    expect(intent.constraint).toBe('before');
    expect(understandQuestionTime("What happened after Trump's inauguration?", TQ).eventAnchor).toEqual({
      relation: 'after',
      phrase: "Trump's inauguration",
    });
    expect(understandQuestionTime('What happened in Gaza since the ceasefire?', TQ).eventAnchor).toEqual({
      relation: 'after',
      phrase: 'the ceasefire',
    });
    expect(understandQuestionTime('What did Israel do ahead of the ceasefire?', TQ).eventAnchor?.relation).toBe(
      'before',
    );
    // A date inside the phrase is read as that date.
    const dated = understandQuestionTime('What happened before the January 20 inauguration?', TQ);
    expect(dated.eventAnchor).toBeUndefined();
    expect(dated.window).toEqual({ to: end('2025-01-19') });
  });
});

describe('understandQuestionTime: recency', () => {
  it.each([
    'What is the latest on the war in Sudan?',
    'Who is the current prime minister of Canada?',
    'What is happening now in Sudan?',
    'Is Yoon Suk Yeol still in custody?',
    'What are the most recent polls?',
    'Who is the new pope?',
    'What happened recently in Congo?',
  ])('recency words: %s', (question) => {
    const intent = understandQuestionTime(question, TQ);
    expect(intent.recency).toBe(true);
    expect(intent.window).toBeUndefined();
    expect(intent.expressions.map((e) => e.kind)).toContain('recency');
  });

  it('asks for the newest of several with "latest", "current", "now" or a recurring event, not with "recently"', () => {
    const asksLatest = (q: string): boolean => understandQuestionTime(q, TQ).asksLatest;
    expect(asksLatest('What is the latest on the war in Sudan?')).toBe(true);
    expect(asksLatest('Who is the current prime minister of Canada?')).toBe(true);
    expect(asksLatest('What is happening now in Sudan?')).toBe(true);
    expect(asksLatest('Who won the Super Bowl?')).toBe(true);
    expect(asksLatest('What happened recently in Congo?')).toBe(false);
    expect(asksLatest('Is Yoon Suk Yeol still in custody?')).toBe(false);
    expect(asksLatest('Who leads Syria?')).toBe(false);
    expect(understandQuestionTime('What happened recently in Congo?', TQ).explanation).toBe(
      'recent coverage preferred: about the present (“recently”)',
    );
  });

  it.each([
    "Who won the Australian Open women's final?",
    'Who won the election?',
    'What did the G20 summit agree?',
    'What were the quarterly results of Tesla?',
    'Who won the Oscar for best actress?',
    'What did the weekly jobless claims report show?',
    'Who won the Super Bowl?',
    'What did the Fed decide at its policy meeting?',
    'Who won the presidential debate?',
  ])('a recurring event without a year: %s', (question) => {
    const intent = understandQuestionTime(question, TQ);
    expect(intent.recency).toBe(true);
    expect(intent.constraint).toBe('none');
    expect(intent.explanation).toMatch(/recurs/);
  });

  it.each([
    'What is the history of the Super Bowl?',
    'Who won the first Super Bowl?',
    'How do elections work in Germany?',
    'How many times has Spain won the World Cup?',
    'Who won the 2024 election in Ghana?',
    'Who won the Super Bowl in February?',
    'What happened with the current account deficit?',
    'What was the final decision of the court?',
  ])('no recency: %s', (question) => {
    expect(understandQuestionTime(question, TQ).recency).toBe(false);
  });
});

describe('understandQuestionTime: false positives', () => {
  it.each([
    'What did Theresa May say about Brexit?',
    'May I ask who leads the M23?',
    'What did Brian May play at the concert?',
    'What happened since May resigned?',
    'What was the March on Washington about?',
    'Did protesters march on parliament in Belgrade?',
    'Did the fall of Assad change Syria?',
    'Why did 2019 people sign the petition?',
    'How did 2000 troops reach the border?',
    'What went wrong with the Boeing 737 MAX?',
    'What does the 3/4 majority rule require?',
    'Who testified before the committee?',
    'Who spoke before Congress?',
    'Who was the ship named after?',
    'Who looked after the hostages?',
    'What did Musk do after that?',
    'Why did Marchand resign?',
    'What did April Ryan ask the press secretary?',
    'What is the Summer Palace?',
    'What did the score of 2-1 mean?',
  ])('no window: %s', (question) => {
    const intent = understandQuestionTime(question, TQ);
    expect(intent.window).toBeUndefined();
    expect(intent.expressions.filter((e) => e.kind !== 'event')).toEqual([]);
  });

  it('does not take "May" the name or "since May resigned" for a month, nor an anchor for a person', () => {
    expect(understandQuestionTime('What happened since May resigned?', TQ).window).toBeUndefined();
    expect(understandQuestionTime('Who testified before the committee?', TQ).eventAnchor).toBeUndefined();
    expect(understandQuestionTime('Who was the ship named after?', TQ).eventAnchor).toBeUndefined();
  });

  it('reads a year naming an occurrence as an event, not a window', () => {
    for (const [question, text] of [
      ['Who won the 2024 election?', '2024'],
      ['What did the 2025 budget include?', '2025'],
      ['Who won Euro 2024?', '2024'],
      ['Who won the 2024–25 Champions League?', '2024–25'],
      ['Who won the 2024 presidential election?', '2024'],
    ] as const) {
      const intent = understandQuestionTime(question, TQ);
      expect(intent.window, question).toBeUndefined();
      expect(intent.recency, question).toBe(false);
      expect(intent.expressions, question).toEqual([
        expect.objectContaining({ text, kind: 'event' }) as TimeExpressionMatcher,
      ]);
      expect(intent.topic).toBe(question);
    }
  });
});

type TimeExpressionMatcher = QuestionTimeIntent['expressions'][number];

describe('understandQuestionTime: words that look like time and are not, and background periods', () => {
  it.each([
    // A month's letters joined to a lower-case word are a name.
    ['What did the FBI find at Mar-a-Lago this week?', 'within 2025-03-10..tq'],
    ['What did the FBI find on the floor of Mar-a-Lago?', 'none'],
    ['What happened in Mar 2024?', 'within 2024-03-01..2024-03-31'],
    // Capitals in a question that is not: a name ("USA TODAY"), not "today".
    ['What did USA TODAY find about rents?', 'none'],
    ['WHO WON TODAY?', 'within 2025-03-12..tq'],
    // The baseline of a comparison is no period of the news.
    ['Food prices are far higher than they were a year ago. Which item rose most?', 'none'],
    ['Rents are up 8% from a year ago. Where?', 'none'],
    ['Rents are up from a year ago. Where?', 'none'],
    ['What happened more than a year ago?', 'within 2024-01-01..2024-12-31'],
    ['What did the report from two weeks ago say?', 'within 2025-02-24..2025-03-02'],
  ])('%s → %s', (question, expected) => {
    expect(reading(question)).toBe(expected);
  });

  it('reads a question set in a recent period as that period, the earlier ones it names as background', () => {
    const question = 'This week marked the anniversary of the evacuation. How many left in August last year?';
    expect(reading(question)).toBe('within 2025-03-10..tq');
    const intent = understandQuestionTime(question, TQ);
    expect(intent.explanation).toBe(
      'published 2025-03-10 – the query time (“This week”); the story’s background, not a window: “in August”, “last year”'.replace(
        '’',
        "'",
      ),
    );
    // The background stays in the words matched: it is what the story is about.
    expect(intent.topic).toContain('August');
    expect(reading('Which network aired false depictions of the January 6, 2021, attack this week?')).toBe(
      'within 2025-03-10..tq',
    );
    expect(reading('Raquel Welch, a 1960s sex symbol, died today. Which film was she not in?')).toBe(
      'within 2025-03-12..tq',
    );
    // Without a recent period up to now, periods named together are still united.
    expect(reading('What happened in 2019 or in 2021?')).toBe('within 2019-01-01..2021-12-31');
    expect(reading('Who won in March this year?')).toBe('within 2025-03-01..tq');
  });

  it('reads a month without a year in a sentence about the future as the coming one', () => {
    // Asked on 12 March 2025: "in November" alone is November 2024; "will … in November" is 2025's.
    expect(reading('What happened in November?')).toBe('within 2024-11-01..2024-11-30');
    const future = understandQuestionTime('By how much will Delmarva cut its gas charges beginning in November?', TQ);
    expect(future.window).toBeUndefined();
    expect(future.recency).toBe(true);
    expect(future.explanation).toContain('asks about a time after 2025-03-12');
    // The future word after the date belongs to another clause.
    expect(reading('What did the company say in November that it will do?')).toBe('within 2024-11-01..2024-11-30');
  });
});

describe('understandQuestionTime: expressions, topic and explanation', () => {
  it('gives the time words as written, with their offsets and preposition, in text order', () => {
    const question = 'Since January, what did the latest talks in Gaza decide last week?';
    const intent = understandQuestionTime(question, TQ);
    expect(intent.expressions.map((e) => [e.text, e.kind])).toEqual([
      ['Since January', 'date'],
      ['the latest', 'recency'],
      ['last week', 'relative'],
    ]);
    for (const e of intent.expressions) expect(question.slice(e.start, e.end)).toBe(e.text);
    expect(intent.window).toEqual({ from: start('2025-03-03'), to: end('2025-03-09') });
    expect(intent.recency).toBe(true);
  });

  it('gives the question without its time words as the topic', () => {
    expect(understandQuestionTime('What happened in Gaza yesterday?', TQ).topic).toBe('What happened in Gaza?');
    expect(understandQuestionTime('What did Trump say last week about tariffs?', TQ).topic).toBe(
      'What did Trump say about tariffs?',
    );
    expect(understandQuestionTime('How many died in 2024 and 2025?', TQ).topic).toBe('How many died?');
    expect(understandQuestionTime('Who leads Syria?', TQ).topic).toBe('Who leads Syria?');
  });

  it('explains the reading in one line', () => {
    expect(understandQuestionTime('What happened in March 2023?', TQ).explanation).toBe(
      'published 2023-03-01 – 2023-03-31 (“in March 2023”)',
    );
    expect(understandQuestionTime('What happened since January?', TQ).explanation).toBe(
      'published since 2025-01-01 (“since January”)',
    );
    expect(understandQuestionTime('What is the latest on Syria?', TQ).explanation).toMatch(
      /^the most recent matching coverage before 2025-03-12: asks for the latest/,
    );
    expect(understandQuestionTime('Who leads Syria?', TQ).explanation).toBe('no time words: as of 2025-03-12');
    expect(understandQuestionTime('What happened before the election?', TQ).explanation).toMatch(
      /published before the election \(its date needs a lookup\)/,
    );
    for (const question of ['What happened yesterday?', 'Who won the final?', 'What happened?']) {
      expect(understandQuestionTime(question, TQ).explanation).not.toMatch(/\n/);
    }
  });

  it('is pure: the same question and tq give the same reading', () => {
    const question = 'What happened in early March and since last Tuesday?';
    expect(understandQuestionTime(question, TQ)).toEqual(understandQuestionTime(question, TQ));
  });
});

describe('applyTimeIntent', () => {
  const request: SearchRequest = {
    q: 'What happened in March 2023?',
    tq: TQ,
    k: 10,
    strategy: 'tempralm',
    store: 'chunks',
    constraint: 'none',
    constraintAt: TQ,
    windowDays: 7,
    alpha: 1,
    includeFuture: false,
  };

  it('puts the window and recency on the request; timeFilter then bounds the search by them', () => {
    const intent = understandQuestionTime('What is the latest from March 2023?', TQ);
    const applied = applyTimeIntent(request, intent, {});
    expect(applied.window).toEqual({ from: start('2023-03-01'), to: end('2023-03-31') });
    expect(applied.recency).toBe(true);
    expect(applied.constraint).toBe('none');
    expect(timeFilter(applied)).toEqual({ from: start('2023-03-01'), to: end('2023-03-31') });
    expect(request.window).toBeUndefined();
  });

  it('names before and after as META does, at the window bound', () => {
    const since = applyTimeIntent(request, understandQuestionTime('What happened since January?', TQ), {});
    expect(since).toMatchObject({ constraint: 'after', constraintAt: start('2025-01-01') });
    expect(timeFilter(since)).toEqual({ from: start('2025-01-01'), to: TQ });
    const before = applyTimeIntent(request, understandQuestionTime('What happened before March 1?', TQ), {});
    expect(before).toMatchObject({ constraint: 'before', constraintAt: end('2025-02-28') });
    expect(timeFilter(before)).toEqual({ to: end('2025-02-28') });
  });

  it('keeps the caller’s explicit constraint or window, and with it the time scope as a whole', () => {
    const intent = understandQuestionTime('What happened since January?', TQ);
    const explicitConstraint = { ...request, constraint: 'before' as const, constraintAt: start('2025-02-01') };
    const kept = applyTimeIntent(explicitConstraint, intent, { constraint: true });
    expect(kept).toMatchObject({ constraint: 'before', constraintAt: start('2025-02-01') });
    expect(kept.window).toBeUndefined();
    const explicitWindow = { ...request, window: { from: start('2024-01-01'), to: end('2024-01-31') } };
    expect(applyTimeIntent(explicitWindow, intent, { window: true }).window).toEqual(explicitWindow.window);
    expect(applyTimeIntent(explicitWindow, intent, { window: true }).constraint).toBe('none');
  });

  it('keeps an explicit recency, and applies the intent’s otherwise', () => {
    const latest = understandQuestionTime('What is the latest on Syria?', TQ);
    expect(applyTimeIntent({ ...request, recency: false }, latest, {}).recency).toBe(false);
    expect(applyTimeIntent(request, latest, { recency: true }).recency).toBeUndefined();
    expect(applyTimeIntent(request, latest, {}).recency).toBe(true);
    expect(applyTimeIntent(request, understandQuestionTime('Who leads Syria?', TQ), {}).recency).toBe(false);
  });

  it('dates an event anchor only with a looked-up time, and never after tq', () => {
    const intent = understandQuestionTime('What did Merz promise before the election?', TQ);
    expect(applyTimeIntent(request, intent, {})).toMatchObject({ constraint: 'none', constraintAt: TQ });
    expect(applyTimeIntent(request, intent, {}).window).toBeUndefined();
    const election = start('2025-02-23');
    expect(applyTimeIntent(request, intent, {}, election)).toMatchObject({
      constraint: 'before',
      constraintAt: election,
      window: { to: election },
    });
    expect(applyTimeIntent(request, intent, {}, TQ + 86_400_000).window).toBeUndefined();
  });
});

describe('the window searched: when the news the question names is reported', () => {
  const window = (q: string, tq: number) => {
    const intent = understandQuestionTime(q, tq);
    return coverageWindow(intent.window!, intent.constraint, tq);
  };

  it('reads the reports of the days before "this week" began', () => {
    // Wednesday's "this week" is Monday to now; the weekend's reports of it come first.
    expect(window('Which city removed its statue this week?', TQ)).toEqual({ from: start('2025-03-07'), to: TQ });
  });

  it("follows a period's news for a week after it, never past the query time", () => {
    expect(window('Who won the election in March 2023?', TQ)).toEqual({
      from: start('2023-02-26'),
      to: end('2023-03-31') + 7 * 86_400_000,
    });
    expect(window('What happened on January 20, 2025?', TQ)).toEqual({
      from: start('2025-01-17'),
      to: end('2025-01-27'),
    });
    expect(window('How many babies were born last year?', TQ)).toEqual({
      from: start('2023-12-29'),
      to: end('2025-01-07'),
    });
  });

  it('keeps "before <date>" as said: it dates the reporting', () => {
    const intent = understandQuestionTime('What did the papers say before March 2023?', TQ);
    expect(intent.constraint).toBe('before');
    expect(coverageWindow(intent.window!, intent.constraint, TQ)).toEqual(intent.window);
  });
});

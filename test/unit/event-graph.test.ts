import { describe, expect, it } from 'vitest';
import {
  buildEvents,
  eventHolding,
  eventIdOf,
  firstReportOf,
  storyOf,
  type EventInteraction,
} from '../../processors/events/event-graph.js';

const DAY = 86_400_000;
const T0 = Date.parse('2025-01-20T08:00:00Z');

function statement(
  n: number,
  t: number,
  text: string,
  pair: [string, string | null] = ['Donald Trump', 'Greenland'],
  url = `https://news${n}.example/a`,
): EventInteraction {
  const id = (name: string): string => `e-${name.toLowerCase().replace(/ /g, '-')}`;
  return {
    id: `i-${n.toString(16).padStart(32, '0')}`,
    text,
    published_at: t,
    subject_id: id(pair[0]),
    subject_name: pair[0],
    object_id: pair[1] === null ? null : id(pair[1]),
    object_name: pair[1],
    article_ids: [`a${n}`],
    urls: [url],
  };
}

describe('the event graph', () => {
  const reports = [
    statement(1, T0, 'Donald Trump said the United States should buy Greenland from Denmark.'),
    statement(2, T0 + 3_600_000, 'Greenland should be bought by the United States, Donald Trump says.'),
    // The same participants on the same day, another event: nothing in common beyond the names.
    statement(3, T0 + 7_200_000, 'Donald Trump invited the premier of Greenland to the White House.'),
    // The object first: the same pair, the same event as 1 and 2.
    statement(
      4,
      T0 + 9_000_000,
      'Greenland rejects the offer: Donald Trump wants the United States to buy the island.',
      ['Greenland', 'Donald Trump'],
    ),
    // The next day: another event, although it says the same.
    statement(5, T0 + DAY, 'Donald Trump again said the United States should buy Greenland.'),
    statement(6, T0 + 2 * DAY, 'Donald Trump met Mette Frederiksen in Copenhagen.', [
      'Donald Trump',
      'Mette Frederiksen',
    ]),
  ];

  it('gathers the reports of one event from many sources, whatever their order or direction', () => {
    const events = buildEvents(reports);
    const shuffled = buildEvents([...reports].reverse());
    expect(shuffled).toEqual(events);
    const purchase = eventHolding(events, reports[0]!.id)!;
    expect(purchase.reports.map((r) => r.interaction_id)).toEqual([reports[0]!.id, reports[1]!.id, reports[3]!.id]);
    expect(purchase.sources).toEqual(['https://news1.example/a', 'https://news2.example/a', 'https://news4.example/a']);
    expect(purchase.articles).toBe(3);
    expect(purchase.day).toBe('2025-01-20');
    expect(purchase.when).toBe(T0);
    expect(purchase.last_reported).toBe(T0 + 9_000_000);
    expect(purchase.who).toEqual([
      { id: 'e-donald-trump', name: 'Donald Trump' },
      { id: 'e-greenland', name: 'Greenland' },
    ]);
    expect(events.map((e) => e.reports.length)).toEqual([3, 1, 1, 1]);
  });

  it('names an event by its first report, and finds the report from the name', () => {
    const [first] = buildEvents(reports);
    expect(first!.id).toBe(eventIdOf(reports[0]!.id));
    expect(first!.id).toMatch(/^ev-[0-9a-f]{32}$/);
    expect(firstReportOf(first!.id)).toBe(reports[0]!.id);
    expect(firstReportOf('i-00')).toBeUndefined();
    expect(firstReportOf('ev-../../x')).toBeUndefined();
  });

  it("says what happened with the statement closest to the event's other reports", () => {
    const many = [
      statement(10, T0, 'Trump offers to buy Greenland.'),
      statement(11, T0 + 1, 'Trump offers Denmark money to buy Greenland, an island of 56,000 people.'),
      statement(12, T0 + 2, 'Denmark says Greenland is not for sale after Trump offers money to buy it.'),
    ].map((s) => ({ ...s, subject_name: 'Donald Trump' }));
    const [event] = buildEvents(many);
    // 10 and 11 share too little to be linked directly (offer, buy of 8 words); 12 links both.
    expect(event!.reports).toHaveLength(3);
    expect(event!.what).toBe(many[2]!.text);
  });

  it('tells the places among the participants', () => {
    const events = buildEvents(reports, { isPlace: (id) => id === 'e-greenland' });
    expect(events[0]!.where).toEqual([{ id: 'e-greenland', name: 'Greenland' }]);
    expect(events.at(-1)!.where).toEqual([]);
  });

  it("links an entity's events in time order: its story", () => {
    const story = storyOf('e-greenland', buildEvents(reports));
    expect(story.map((e) => e.day)).toEqual(['2025-01-20', '2025-01-20', '2025-01-21']);
    expect(story[0]!.before).toBeNull();
    expect(story[0]!.after).toBe(story[1]!.id);
    expect(story[1]!.before).toBe(story[0]!.id);
    expect(story[2]!.after).toBeNull();
    // Mette Frederiksen's story has one event, which Greenland's does not.
    expect(storyOf('e-mette-frederiksen', buildEvents(reports)).map((e) => e.id)).toEqual([eventIdOf(reports[5]!.id)]);
  });

  it('leaves out interactions with no subject, and counts a repeated interaction once', () => {
    const events = buildEvents([reports[0]!, reports[0]!, { ...reports[1]!, subject_id: '' }]);
    expect(events).toHaveLength(1);
    expect(events[0]!.reports).toHaveLength(1);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import {
  currentEventArticleInput,
  loadWikipediaCurrentEvents,
  parseCurrentEventsDay,
  type CurrentEventItem,
} from '../../streams/archives/load-wikipedia-current-events.js';

const W = 'https://en.wikipedia.org/wiki';

/** A made-up daily page in the portal's markdown shape. */
const DAY = `---
layout: post
title: 2031 April 02
date: 2031-04-02
published: true
---


#### Sports

* [Lunar Games](${W}/Lunar_Games "Lunar Games")
  * [Mare Tranquillitatis](${W}/Mare_Tranquillitatis "Mare Tranquillitatis") hosts the first [relay race](${W}/Relay_race "Relay race") on the [Moon](${W}/Moon "Moon"). [(*Selene Times*)](https://selene.example/relay) [(Orbit News)](https://orbit.example/a?b=1)
  * [Ada Quill](${W}/Ada_Quill "Ada Quill")'s team wins, beating [Zoë Brandt](${W}/Zo%C3%AB_Brandt?action=edit&redlink=1 "Zoë Brandt (page does not exist)") [[de](https://de.wikipedia.org/wiki/Zo%C3%AB_Brandt "de:Zoë Brandt")] by a *hair*. [(Orbit News)](https://orbit.example/b)

#### Science and technology

* [Comet Vela](${W}/Comet_Vela "Comet Vela"), [Deep Space Radar](${W}/Deep_Space_Radar "Deep Space Radar")
  * [Kepler Station](${W}/Kepler_Station "Kepler Station")
    + Astronomers track [Comet Vela](${W}/Comet_Vela "Comet Vela") past [Mars](${W}/Mars).[*[citation needed](${W}/Wikipedia%3ACitation_needed "Wikipedia:Citation needed")*]
* A probe lands on [Titan](${W}/Titan_(moon) "Titan (moon)") without a cited source.
`;

const linked = (item: CurrentEventItem): string[] =>
  item.links.map((l) => `${item.text.slice(l.start, l.end)}→${l.title}`);

describe('parseCurrentEventsDay', () => {
  const items = parseCurrentEventsDay(DAY, '1999-01-01');

  it('yields one item per event bullet with the date from the front matter', () => {
    expect(items.map((i) => [i.date, i.category, i.topic])).toEqual([
      ['2031-04-02', 'Sports', 'Lunar Games'],
      ['2031-04-02', 'Sports', 'Lunar Games'],
      ['2031-04-02', 'Science and technology', 'Kepler Station'],
      ['2031-04-02', 'Science and technology', 'Science and technology'],
    ]);
  });

  it('replaces links by their surface text and removes outlet citations', () => {
    expect(items[0]!.text).toBe('Mare Tranquillitatis hosts the first relay race on the Moon.');
    expect(items[0]!.citations).toEqual([
      { outlet: 'Selene Times', url: 'https://selene.example/relay' },
      { outlet: 'Orbit News', url: 'https://orbit.example/a?b=1' },
    ]);
    expect(linked(items[0]!)).toEqual([
      'Mare Tranquillitatis→Mare Tranquillitatis',
      'relay race→Relay race',
      'Moon→Moon',
    ]);
  });

  it('drops interlanguage and maintenance links, emphasis and the red-link note', () => {
    expect(items[1]!.text).toBe("Ada Quill's team wins, beating Zoë Brandt by a hair.");
    expect(linked(items[1]!)).toEqual(['Ada Quill→Ada Quill', 'Zoë Brandt→Zoë Brandt']);
    expect(items[2]!.text).toBe('Astronomers track Comet Vela past Mars.');
    expect(linked(items[2]!)).toEqual(['Comet Vela→Comet Vela', 'Mars→Mars']);
  });

  it('keeps items without a citation and titles with parentheses', () => {
    expect(items[3]!.citations).toEqual([]);
    expect(linked(items[3]!)).toEqual(['Titan→Titan (moon)']);
  });

  it('falls back to the given date without front matter', () => {
    expect(
      parseCurrentEventsDay('* Something happens in [Mars](https://en.wikipedia.org/wiki/Mars).', '2031-05-05'),
    ).toEqual([
      {
        date: '2031-05-05',
        category: '',
        topic: '',
        text: 'Something happens in Mars.',
        links: [{ start: 21, end: 25, title: 'Mars' }],
        citations: [],
      },
    ]);
  });
});

describe('loadWikipediaCurrentEvents', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the daily files of a folder in date order, ignoring other files', () => {
    dir = mkdtempSync(join(tmpdir(), 'neon-wce-'));
    writeFileSync(join(dir, '2031-04-02-index.md'), DAY);
    writeFileSync(
      join(dir, '2031-04-01-index.md'),
      `* A quiet day on [Mars](${W}/Mars). [(AP)](https://ap.example/1)\n`,
    );
    writeFileSync(join(dir, 'README.md'), '* not a day');
    const items = loadWikipediaCurrentEvents(dir);
    expect(items.map((i) => i.date)).toEqual(['2031-04-01', '2031-04-02', '2031-04-02', '2031-04-02', '2031-04-02']);
  });
});

describe('currentEventArticleInput', () => {
  it('uses the first citation as url and a stable id', () => {
    const [item] = parseCurrentEventsDay(DAY, '1999-01-01');
    const input = currentEventArticleInput(item!);
    expect(input).toMatchObject({
      url: 'https://selene.example/relay',
      title: 'Lunar Games',
      text: item!.text,
      published_at: '2031-04-02',
      language: 'en',
    });
    expect(input.id).toMatch(/^wce-2031-04-02-[0-9a-f]{16}$/);
    expect(currentEventArticleInput(item!)).toEqual(input);
  });

  it('gives an uncited item a synthetic stable URL', () => {
    const items = parseCurrentEventsDay(DAY, '1999-01-01');
    const input = currentEventArticleInput(items[3]!);
    expect(input.url).toMatch(/^https:\/\/en\.wikipedia\.org\/wiki\/Portal:Current_events\/2031-04-02#[0-9a-f]{16}$/);
    expect(input.url).not.toBe(currentEventArticleInput(items[2]!).url);
  });
});

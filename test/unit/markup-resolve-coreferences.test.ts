import { describe, expect, it } from 'vitest';

import {
  initials,
  institutionShortForms,
  resolveCoreferences,
  type TypedMention,
} from '../../processors/markup/resolve-coreferences.js';
import type { EntityType } from '../../schemas/records.generated.js';

const m = (surface: string, type: EntityType = 'OTHER'): TypedMention => ({ surface, type });
/** Cluster name of each mention, in input order. */
const nameOf = (mentions: TypedMention[]): string[] => {
  const names: string[] = [];
  for (const cluster of resolveCoreferences(mentions)) for (const i of cluster.members) names[i] = cluster.name;
  return names;
};

describe('resolveCoreferences', () => {
  it('maps first and last names to the full name of a person', () => {
    const mentions = [m('Karl Lagerfeld', 'PERSON'), m('Choupette'), m('Karl', 'PERSON'), m('Lagerfeld', 'OTHER')];
    expect(nameOf(mentions)).toEqual(['Karl Lagerfeld', 'Choupette', 'Karl Lagerfeld', 'Karl Lagerfeld']);
  });

  it('resolves a short form that comes before the full one', () => {
    expect(nameOf([m('Trump', 'PERSON'), m('Donald Trump', 'PERSON')])).toEqual(['Donald Trump', 'Donald Trump']);
  });

  it('leaves a short form that fits two people on its own', () => {
    expect(nameOf([m('Donald Trump', 'PERSON'), m('Melania Trump', 'PERSON'), m('Trump', 'PERSON')])).toEqual([
      'Donald Trump',
      'Melania Trump',
      'Trump',
    ]);
  });

  it('links acronyms to their expansion in either order', () => {
    expect(
      nameOf([
        m('FBI', 'ORGANIZATION'),
        m('Federal Bureau of Investigation', 'ORGANIZATION'),
        m('United States', 'LOCATION'),
        m('U.S.', 'LOCATION'),
      ]),
    ).toEqual(['Federal Bureau of Investigation', 'Federal Bureau of Investigation', 'United States', 'United States']);
  });

  it('does not take a longer acronym-led name for the acronym', () => {
    expect(nameOf([m('U.S. Steel', 'ORGANIZATION'), m('U.S.', 'LOCATION')])).toEqual(['U.S. Steel', 'U.S.']);
  });

  it('merges spelling variants with one key and short forms of institutions', () => {
    expect(
      nameOf([
        m('Zürich', 'LOCATION'),
        m('Zurich', 'LOCATION'),
        m('Chanel Inc.', 'ORGANIZATION'),
        m('Chanel', 'ORGANIZATION'),
        m('U.S. Senate', 'ORGANIZATION'),
        m('Senate', 'ORGANIZATION'),
        m('Gaza Strip', 'LOCATION'),
        m('Gaza', 'LOCATION'),
      ]),
    ).toEqual([
      'Zürich',
      'Zürich',
      'Chanel Inc.',
      'Chanel Inc.',
      'U.S. Senate',
      'U.S. Senate',
      'Gaza Strip',
      'Gaza Strip',
    ]);
  });

  it('never merges incompatible types', () => {
    expect(nameOf([m('Jordan', 'LOCATION'), m('Michael Jordan', 'PERSON'), m('Jordan', 'PERSON')])).toEqual([
      'Jordan',
      'Michael Jordan',
      'Michael Jordan',
    ]);
  });

  it('does not read "Africa" as "South Africa"', () => {
    expect(nameOf([m('South Africa', 'LOCATION'), m('Africa', 'LOCATION')])).toEqual(['South Africa', 'Africa']);
  });

  it('returns clusters in order of first mention with the most specific type and distinct surfaces', () => {
    const clusters = resolveCoreferences([
      m('Lagerfeld'),
      m('Paris', 'LOCATION'),
      m('Karl Lagerfeld', 'PERSON'),
      m('Lagerfeld'),
    ]);
    expect(clusters).toEqual([
      { name: 'Karl Lagerfeld', type: 'PERSON', surfaces: ['Lagerfeld', 'Karl Lagerfeld'], members: [0, 2, 3] },
      { name: 'Paris', type: 'LOCATION', surfaces: ['Paris'], members: [1] },
    ]);
  });

  it('handles no mentions', () => {
    expect(resolveCoreferences([])).toEqual([]);
  });
});

describe('initials and institution short forms', () => {
  it('spells out the initials of multi-word names', () => {
    expect(initials('Federal Bureau of Investigation')).toBe('fbi');
    expect(initials('U.S. Steel')).toBe('uss');
    expect(initials('Democratic Republic of the Congo')).toBe('drc');
    expect(initials('Paris')).toBeUndefined();
  });

  it('lists only qualifier-free forms that still name an institution', () => {
    expect(institutionShortForms(['un', 'security', 'council'])).toEqual(['security council', 'council']);
    expect(institutionShortForms(['kursk', 'oblast'])).toEqual(['kursk', 'oblast']);
    expect(institutionShortForms(['south', 'africa'])).toEqual([]);
    expect(institutionShortForms(['us', 'district'])).toEqual(['district']);
  });
});

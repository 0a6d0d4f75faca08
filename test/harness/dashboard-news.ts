/**
 * News written for the dashboard's browser test (not taken from any dataset): ordinary daily
 * coverage of a fictional region, where every name is mentioned about as often every day, and
 * bursts of articles about one name, which the real spike stage turns into episodes.
 *
 * Every article is composed from independently drawn phrases, so no two share many word trigrams
 * and near-duplicate removal keeps them all: each article counts.
 */
import type { ArticleInput } from '../../processors/intake/article-input.js';

export const DAY = 86_400_000;
const HOUR = 3_600_000;
export const dayOf = (iso: string): number => Date.parse(`${iso}T00:00:00Z`);
export const isoDay = (t: number): string => new Date(t).toISOString().slice(0, 10);

/** A deterministic stream of numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = Math.abs(Math.floor(seed)) % 2_147_483_648;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

function hashOf(text: string): number {
  let h = 2_166_136_261;
  for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 16_777_619) >>> 0;
  return h;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

// Lower-case phrases only: a capitalised word could be taken for a name.
const TOPICS = [
  'the tram line',
  'a fishing quota',
  'the winter budget',
  'a bridge repair',
  'the school reform',
  'a wind farm',
  'the water tariff',
  'a hospital wing',
  'the ferry timetable',
  'the grain harvest',
  'a mining licence',
  'the coastal road',
  'the flood barrier',
  'a housing plan',
  'the night trains',
  'a dairy subsidy',
];
const VERBS = [
  'met',
  'criticised',
  'praised',
  'thanked',
  'visited',
  'warned',
  'funded',
  'consulted',
  'challenged',
  'supported',
  'questioned',
  'hosted',
];
const PLACES_PHRASES = [
  'near the old mill',
  'by the harbour wall',
  'outside the town hall',
  'along the river path',
  'at the grain market',
  'beside the rail depot',
  'under the north bridge',
  'in a crowded school gym',
  'at a roadside cafe',
  'on the ferry quay',
];
const WITNESSES = [
  'a local teacher',
  'two farmers',
  'a retired nurse',
  'the night porter',
  'several shop owners',
  'a bus driver',
  'one fisherman',
  'a young engineer',
  'three students',
  'an elderly couple',
];
const WHEN = [
  'early in the morning',
  'late on a windy evening',
  'just after lunch',
  'before dawn',
  'during a long afternoon',
  'at nightfall',
  'around noon',
  'in heavy rain',
];
const OBJECTS = [
  'a new supply convoy',
  'the disputed checkpoint',
  'several empty warehouses',
  'a shipment of medicine',
  'the main pumping station',
  'dozens of fishing boats',
  'a field hospital',
  'the eastern ring road',
  'two radio masts',
  'the regional archive',
  'a long column of trucks',
  'the customs office',
];
const FILLERS: readonly ((r: () => number) => string)[] = [
  (r) =>
    `Prices of bread rose by ${2 + Math.floor(r() * 40)} cents ${pick(r, PLACES_PHRASES)}, ${pick(r, WITNESSES)} noticed.`,
  (r) => `Talks about ${pick(r, TOPICS)} resume in ${2 + Math.floor(r() * 9)} weeks, officials added ${pick(r, WHEN)}.`,
  (r) =>
    `${cap(pick(r, WITNESSES))} described queues of ${10 + Math.floor(r() * 300)} people ${pick(r, PLACES_PHRASES)}.`,
  (r) =>
    `The weather turned ${pick(r, ['cold', 'mild', 'stormy', 'foggy', 'bright'])} ${pick(r, WHEN)} and ${pick(r, TOPICS)} was postponed.`,
  (r) => `About ${20 + Math.floor(r() * 900)} residents signed a letter on ${pick(r, TOPICS)} ${pick(r, WHEN)}.`,
];

function cap(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One sentence naming `name` alone, drawn from independent phrases. */
function aboutOne(r: () => number, name: string): string {
  switch (Math.floor(r() * 5)) {
    case 0:
      return `${name} took over ${pick(r, OBJECTS)} ${pick(r, PLACES_PHRASES)} ${pick(r, WHEN)}, ${pick(r, WITNESSES)} said.`;
    case 1:
      return `${cap(pick(r, WITNESSES))} watched ${name} secure ${pick(r, OBJECTS)} ${pick(r, WHEN)}.`;
    case 2:
      return `Reporters counted ${10 + Math.floor(r() * 990)} people ${pick(r, PLACES_PHRASES)} as ${name} made headlines over ${pick(r, TOPICS)}.`;
    case 3:
      return `Nobody expected ${name} to matter this much for ${pick(r, TOPICS)}, ${pick(r, WITNESSES)} wrote ${pick(r, WHEN)}.`;
    default:
      return `The fate of ${pick(r, OBJECTS)} now depends on ${name}, according to ${pick(r, WITNESSES)}.`;
  }
}

/**
 * Who the region's ordinary news is about: each trio in one article a day, so every name is
 * mentioned as often every day and none of them stands out.
 */
export const STEADY_TRIOS: readonly (readonly [string, string, string])[] = [
  ['Anna Berglund', 'Norland Rail', 'Norland'],
  ['Marta Voss', 'Tarsk Energy', 'Brenmoor'],
  ['Kestrel Front', 'Port Essar', 'Valdor'],
  ['Ilse Varga', 'Helio Transit', 'Lake Orrin'],
  ['Tomas Reyes', 'Orrin Fisheries', 'Sela Bay'],
  ['Lisa Okafor', 'Brenmoor Council', 'Minden Pass'],
];

const FIRST_NAMES = ['Jana', 'Piet', 'Oskar', 'Mila', 'Radu', 'Elif', 'Sven', 'Noor', 'Ivo', 'Kaja', 'Lior', 'Ines'];
const LAST_NAMES = [
  'Holm',
  'Brandt',
  'Kowal',
  'Dunne',
  'Aalto',
  'Moreau',
  'Stein',
  'Rossi',
  'Falk',
  'Lund',
  'Novak',
  'Berg',
];

/** The i-th of 144 different people, each quoted once: how new names usually start in this feed. */
function passerBy(i: number): string {
  const k = Math.floor(i / 12) % 12;
  return `${FIRST_NAMES[i % 12]!} ${LAST_NAMES[(i + k) % 12]!}`;
}

/**
 * One article a day per steady trio, from `from` to `to` (inclusive): the first sentence links the
 * trio, and a person quoted nowhere else says something.
 */
export function steadyNews(from: string, to: string): ArticleInput[] {
  const inputs: ArticleInput[] = [];
  for (let day = dayOf(from); day <= dayOf(to); day += DAY) {
    STEADY_TRIOS.forEach(([first, second, place], n) => {
      const r = seeded(hashOf(`${isoDay(day)}/${n}`));
      const topic = pick(r, TOPICS);
      const sentences = [
        `${first} ${pick(r, VERBS)} ${second} in ${place} over ${topic} ${pick(r, WHEN)}.`,
        pick(r, FILLERS)(r),
        `"We will see," said ${passerBy((day / DAY) * STEADY_TRIOS.length + n)}, who lives nearby.`,
        pick(r, FILLERS)(r),
      ];
      inputs.push({
        url: `https://daily.example/${isoDay(day)}/story-${n}`,
        title: `${first} and ${topic}`,
        text: sentences.join(' '),
        published_at: day + (6 + n * 2) * HOUR,
        source: 'Daily Example',
      });
    });
  }
  return inputs;
}

/**
 * `perDay[i]` articles about `name` on the i-th day from `from`, each naming only it (so no other
 * name's count moves), spread over 07:00–23:00 UTC of that day.
 */
export function burstAbout(name: string, from: string, perDay: readonly number[]): ArticleInput[] {
  const slug = name.toLowerCase().replace(/\W+/g, '-');
  const inputs: ArticleInput[] = [];
  perDay.forEach((count, d) => {
    const day = dayOf(from) + d * DAY;
    for (let n = 0; n < count; n++) {
      const r = seeded(hashOf(`${slug}/${isoDay(day)}/${n}`));
      inputs.push({
        url: `https://news.example/${slug}/${isoDay(day)}/${n}`,
        title: `${name}: ${pick(r, TOPICS)}`,
        text: [aboutOne(r, name), pick(r, FILLERS)(r), aboutOne(r, name), pick(r, FILLERS)(r)].join(' '),
        published_at: day + 7 * HOUR + Math.floor((n * 16 * HOUR) / count),
        source: 'News Example',
      });
    }
  });
  return inputs;
}

/**
 * Nationality words ("Israeli", "Turkish", "South Korean") and the country each one names. In news
 * a nationality adjective says what a sentence is about as surely as the country's name does:
 * "Israeli airstrikes" and "a Lebanese delegation" are news about Israel and Lebanon, and editors
 * link them so. Marked as mentions of the country, they count towards its coverage (spike
 * detection) and name it in the text it is searched by. Before a force noun ("Turkish forces",
 * "the Lebanese army") the word names the country's armed forces instead (recognize-entities.ts).
 *
 * The words come from the world-countries dataset (mledoze/countries, ODbL 1.0). A word shared by
 * two UN members ("Congolese", "Dominican") names neither; a word shared by a UN member and a
 * territory ("French", "Indian") names the member.
 */
import countries from 'world-countries';

interface CountryEntry {
  name: { common: string; official: string };
  altSpellings: readonly string[];
  unMember: boolean;
  demonyms?: Record<string, { f: string; m: string }>;
}

/** Nationality words the dataset lacks or spells otherwise, as news writes them. */
const EXTRA_NATIONALITY_WORDS: Readonly<Record<string, string>> = {
  saudi: 'Saudi Arabian',
  argentinian: 'Argentine',
  kyrgyz: 'Kirghiz',
  tajik: 'Tadzhik',
  uzbek: 'Uzbekistani',
  kazakh: 'Kazakhstani',
  'cape verdean': 'Cape Verdian',
  ecuadorian: 'Ecuadorean',
};

/**
 * The country's name as news text writes it, so that "Turkish" joins the mentions of "Turkey":
 * the first of its English names that the lexicon knows as a country ("Republic of Turkey" read
 * as "Turkey"), else its common name.
 */
function nameAsWritten(country: CountryEntry, isCountryName: (lower: string) => boolean): string {
  const names = [country.name.common, ...country.altSpellings, country.name.official];
  const forms = names.flatMap((n) => [n, n.replace(/^(?:[\p{L}-]+ )*of (?:the )?/u, '')]);
  return forms.find((n) => /^[A-Z][A-Za-z .'-]+$/.test(n) && isCountryName(n.toLowerCase())) ?? country.name.common;
}

/** lower-case nationality word → the country's name; built once per lexicon check. */
export function nationalityTable(isCountryName: (lower: string) => boolean): ReadonlyMap<string, string> {
  const candidates = new Map<string, CountryEntry[]>();
  for (const country of countries as unknown as CountryEntry[]) {
    const english = country.demonyms?.eng;
    if (english === undefined) continue;
    const words = new Set([english.m, english.f].flatMap((w) => w.split(/, | or /)).map((w) => w.trim().toLowerCase()));
    for (const word of words) {
      if (word === '' || word === country.name.common.toLowerCase()) continue;
      candidates.set(word, [...(candidates.get(word) ?? []), country]);
    }
  }
  const table = new Map<string, string>();
  for (const [word, entries] of candidates) {
    const members = entries.length === 1 ? entries : entries.filter((c) => c.unMember);
    if (members.length === 1) table.set(word, nameAsWritten(members[0]!, isCountryName));
  }
  for (const [word, known] of Object.entries(EXTRA_NATIONALITY_WORDS)) {
    const country = table.get(known.toLowerCase());
    if (country !== undefined && !table.has(word)) table.set(word, country);
  }
  return table;
}

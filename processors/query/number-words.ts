/**
 * English number words, for reading figures and counts written out ("twelve killed", "forty-two
 * seats", "three weeks ago").
 */

/** The cardinals below twenty, by value. */
export const CARDINALS_BELOW_TWENTY: Readonly<Record<string, number>> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};

/** The tens from twenty to ninety. */
export const TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};

/** The words of one to nine, the second part of "forty-two". */
export const DIGIT_WORDS: readonly string[] = Object.keys(CARDINALS_BELOW_TWENTY).slice(0, 9);

/** The value of a number word below a hundred ("twelve", "forty", "forty-two"); undefined otherwise. */
export function cardinalValue(word: string): number | undefined {
  const [head, unit] = word.toLowerCase().split('-');
  const base = TENS[head!] ?? CARDINALS_BELOW_TWENTY[head!];
  if (base === undefined) return undefined;
  if (unit === undefined) return base;
  const digit = DIGIT_WORDS.indexOf(unit);
  return TENS[head!] === undefined || digit < 0 ? undefined : base + digit + 1;
}

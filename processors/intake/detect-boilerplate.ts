/**
 * Pages that are not articles but were fetched as if they were: a video ad's feedback form, a
 * newsletter sign-up notice, a cookie-consent wall, a paywall, an error page. They would enter the
 * graph as "news" with real entities (the publisher's brand, "Privacy Policy") and real dates, so
 * they are recognised and rejected; the same phrases at the edge of a real article are stripped.
 *
 * The rule: a text is boilerplate when lines matching these phrases make up at least half of a
 * short text (up to 2,000 characters) or 80% of a longer one. A long article that merely ends with
 * "Sign up for our newsletter" is not boilerplate; {@link stripBoilerplateLines} removes that line.
 */

export const BOILERPLATE_KINDS = ['consent_wall', 'ad_prompt', 'newsletter_signup', 'paywall', 'error_page'] as const;
export type BoilerplateKind = (typeof BOILERPLATE_KINDS)[number];

export interface BoilerplateVerdict {
  kind: BoilerplateKind;
  /** The phrase that decided it, at most 80 characters. */
  evidence: string;
}

/** `notice`: data-protection small print that accompanies sign-ups and consent walls alike. */
type PhraseKind = BoilerplateKind | 'notice';

interface Phrase {
  readonly kind: PhraseKind;
  /** Lower-case substrings one of which every match contains: a cheap test before the pattern. */
  readonly keywords: readonly string[];
  readonly pattern: RegExp;
}

function phrase(kind: PhraseKind, keywords: string | readonly string[], pattern: RegExp): Phrase {
  return { kind, keywords: typeof keywords === 'string' ? [keywords] : keywords, pattern };
}

const PHRASES: readonly Phrase[] = [
  // Video-ad feedback widgets.
  phrase('ad_prompt', 'relevant is this ad', /\bhow relevant is this ad to you\b/i),
  phrase('ad_prompt', 'video player', /\bvideo player was slow to load\b/i),
  phrase('ad_prompt', 'ad froze', /\bad froze or did not finish loading\b/i),
  phrase('ad_prompt', 'video content', /\bvideo content (?:never loaded|did not start after ad)\b/i),
  phrase('ad_prompt', 'audio on ad', /\baudio on ad was too loud\b/i),
  phrase('ad_prompt', '', /^(?:advertisement|ad feedback|sponsored content|scroll to continue with content)$/i),
  // Newsletter sign-up blocks.
  phrase(
    'newsletter_signup',
    'newsletter',
    /\bsign(?:ing)? up (?:here |now |today )?(?:for|to) (?:[^.\n]{0,80}?\s)?(?:e-?mail )?newsletters?\b/i,
  ),
  phrase('newsletter_signup', 'newsletter', /\bsubscribe to (?:our|the|a) (?:[^.\n]{0,60}?\s)?newsletters?\b/i),
  phrase('newsletter_signup', 'newsletter', /\bwould you like to receive\b[^.\n]{0,80}\bnewsletter/i),
  phrase('newsletter_signup', 'newsletter', /\bnewsletter (?:provides|gives|brings) you\b/i),
  phrase('newsletter_signup', 'inbox', /\bget [^.\n]{1,60}\b(?:in|into|delivered to) your inbox\b/i),
  phrase('newsletter_signup', 'signing up', /\bthank you for signing up\b/i),
  phrase('newsletter_signup', 'verification', /\byou will (?:shortly )?receive a verification e-?mail\b/i),
  phrase('newsletter_signup', 'manage your', /\bmanage your (?:newsletter )?(?:registration|subscription)\b/i),
  phrase('newsletter_signup', 'sign up', /\byour e-?mail address\b[^.\n]{0,40}\bsign up\b/i),
  // Consent walls.
  phrase('consent_wall', 'cookies', /\b(?:we|this (?:site|website)) uses? cookies\b/i),
  phrase(
    'consent_wall',
    ['cookie', 'consent'],
    /\b(?:accept|reject|allow) all(?: cookies)?\b[^.\n]{0,40}\b(?:cookies|consent)\b/i,
  ),
  phrase('consent_wall', 'cookie', /\baccept (?:all )?cookies\b/i),
  phrase('consent_wall', 'cookie', /\bcookie (?:policy|settings|preferences|consent)\b/i),
  phrase('consent_wall', 'we and our', /\bwe and our (?:\d+ )?(?:partners|vendors) (?:use|store|process|and)\b/i),
  phrase(
    'consent_wall',
    ['privacy choices', 'consent'],
    /\b(?:your privacy choices|manage (?:your )?consent|consent preferences)\b/i,
  ),
  // Paywalls and registration walls.
  phrase('paywall', 'subscribe', /\bsubscribe (?:now )?to (?:continue|keep) reading\b/i),
  phrase(
    'paywall',
    ['subscribers', 'members'],
    /\b(?:this|the) (?:article|story|content) is (?:only )?(?:available|reserved|exclusive) (?:to|for) (?:paying )?(?:subscribers|members)\b/i,
  ),
  phrase(
    'paywall',
    'free',
    /\byou(?:'ve|’ve| have) (?:reached|used) (?:your|all of your|all your)\b[^.\n]{0,40}\bfree\b/i,
  ),
  phrase('paywall', 'already a', /\balready an? (?:subscriber|member)\?/i),
  phrase('paywall', 'free account', /\bcreate a free account to (?:continue|read|keep)\b/i),
  phrase('paywall', 'free account', /\ba free account gives you\b/i),
  phrase('paywall', 'unlimited', /\bunlimited (?:digital )?access to all\b/i),
  phrase('paywall', ' save', /\bsubscribe (?:&|and) save\b/i),
  phrase('paywall', 'journalism', /\bsupport (?:local|quality|independent) journalism\b[^\n]{0,40}\bsubscribe\b/i),
  // Error and bot-check pages.
  phrase('error_page', 'looking for', /\b(?:the )?page you(?:'re|’re| are) looking for\b/i),
  phrase(
    'error_page',
    'page',
    /\b(?:this|the) page (?:(?:could|can) ?not be found|(?:does not|doesn't|doesn’t) exist|has been removed)\b/i,
  ),
  phrase('error_page', '', /^(?:404|403|500)?[\s:-]*(?:page not found|not found|access denied|forbidden)\b/i),
  phrase('error_page', 'javascript', /\b(?:please )?enable javascript\b|\bjavascript is (?:disabled|required)\b/i),
  phrase('error_page', ['robot', 'human'], /\bare you a robot\b|\bverify (?:that )?you are (?:a )?human\b/i),
  // The small print under sign-up forms and consent walls.
  phrase('notice', 'storage', /\bprocessing, storage, sharing and use of\b/i),
  phrase('notice', 'you have shared', /\bwe will use the (?:details|information) you have shared\b/i),
  phrase('notice', 'legitimate', /\blegitimate (?:interest|case)\b/i),
  phrase('notice', 'your data', /\bobject to the use of your data\b/i),
  phrase('notice', 'by submitting', /\bby submitting your (?:information|e-?mail|details)\b/i),
  phrase(
    'notice',
    'privacy policy',
    /\bagree to (?:our|the) (?:terms (?:&|and) conditions|terms of (?:use|service)) and (?:our |the )?privacy policy\b/i,
  ),
];

/** Page furniture lines stripped from articles but never evidence of a non-article page. */
const CHROME_LINE =
  /^(?:read more|read next|related|advertisement|ad feedback|share this(?: article| story)?|skip to (?:main )?content|scroll to continue with content|story continues below(?: advertisement)?)[.:]?$/i;

/** Error titles: a page whose headline says this and that has little text is an error page. */
const ERROR_TITLE =
  /^(?:error\b|oops\b|(?:404|403|410|500|503)\b|page not found\b|not found\b|access denied\b|forbidden\b|just a moment\b|attention required\b)/i;

/** Paragraphs longer than this are prose even when they contain a phrase above. */
const MAX_BOILERPLATE_PARAGRAPH = 800;
/** Stripping is stricter than detection: only short lines are removed from a real article. */
const MAX_STRIPPED_LINE = 600;
const SHORT_TEXT_CHARS = 2000;
const SHORT_TEXT_SHARE = 0.5;
const LONG_TEXT_SHARE = 0.8;
const ERROR_TITLE_MAX_TEXT = 1000;

function firstMatch(line: string, kinds?: ReadonlySet<PhraseKind>): { kind: PhraseKind; evidence: string } | undefined {
  const lower = line.toLowerCase();
  for (const { kind, keywords, pattern } of PHRASES) {
    if (kinds && !kinds.has(kind)) continue;
    if (!keywords.some((keyword) => lower.includes(keyword))) continue;
    const match = pattern.exec(line);
    if (match) return { kind, evidence: match[0].slice(0, 80) };
  }
  return undefined;
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * Whether a page's title and main text are a non-article (an ad prompt, a newsletter or consent
 * notice, a paywall, an error page), with the phrase that shows it; undefined for an article.
 */
export function detectBoilerplate(title: string, text: string): BoilerplateVerdict | undefined {
  const paragraphs = lines(text);
  const total = paragraphs.reduce((sum, line) => sum + line.length, 0);
  const titleLine = title.trim();
  if (ERROR_TITLE.test(titleLine) && total <= ERROR_TITLE_MAX_TEXT) {
    return { kind: 'error_page', evidence: titleLine.slice(0, 80) };
  }
  if (total === 0) return undefined;
  const weight = new Map<BoilerplateKind, { chars: number; evidence: string }>();
  let boilerplate = 0;
  for (const line of paragraphs) {
    if (line.length > MAX_BOILERPLATE_PARAGRAPH) continue;
    const match = firstMatch(line);
    if (match === undefined) continue;
    boilerplate += line.length;
    if (match.kind === 'notice') continue;
    const entry = weight.get(match.kind) ?? { chars: 0, evidence: match.evidence };
    entry.chars += line.length;
    weight.set(match.kind, entry);
  }
  const share = boilerplate / total;
  if (share < (total <= SHORT_TEXT_CHARS ? SHORT_TEXT_SHARE : LONG_TEXT_SHARE)) return undefined;
  let best: BoilerplateVerdict | undefined;
  let bestChars = 0;
  for (const [kind, { chars, evidence }] of weight) {
    if (chars > bestChars) {
      best = { kind, evidence };
      bestChars = chars;
    }
  }
  if (best) return best;
  // Only data-protection small print: a consent or registration wall without its button text.
  const notice = paragraphs.map((line) => firstMatch(line)).find((match) => match !== undefined);
  return { kind: 'consent_wall', evidence: notice?.evidence ?? '' };
}

/** Everything but error-page phrases: those ("something went wrong") also occur in quoted speech. */
const STRIPPED_KINDS: ReadonlySet<PhraseKind> = new Set([
  'ad_prompt',
  'newsletter_signup',
  'consent_wall',
  'paywall',
  'notice',
]);

/**
 * The text without short lines that are sign-up prompts, ad prompts, subscription pitches,
 * consent notices or page furniture ("Read more"); paragraph breaks are kept.
 */
export function stripBoilerplateLines(text: string): string {
  return text
    .split('\n')
    .filter((line) => {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.length > MAX_STRIPPED_LINE) return true;
      return !CHROME_LINE.test(trimmed) && firstMatch(trimmed, STRIPPED_KINDS) === undefined;
    })
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

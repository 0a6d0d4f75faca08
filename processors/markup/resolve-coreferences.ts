/**
 * In-document alias resolution: mentions that name the same entity are put in one cluster, named
 * by its most complete form. Rules, most specific first:
 *
 * - same key ("U.S." = "US", "Zürich" = "Zurich");
 * - an acronym of a longer name in the document ("FBI" ↔ "Federal Bureau of Investigation",
 *   "U.S." ↔ "United States"), in either order;
 * - a person's last name(s) ("Lagerfeld", "Trump"), or first name ("Karl"), of a longer person name;
 * - a shorter form of an organisation, place or event ("Chanel" ↔ "Chanel Inc.", "Senate" ↔
 *   "U.S. Senate", "Gaza" ↔ "Gaza Strip"; see institutionShortForms).
 *
 * Precision first: a short form that fits two different longer names ("Trump" with "Donald Trump"
 * and "Melania Trump") stays a cluster of its own, and the registry decides. Pronouns are not
 * resolved: a wrong pronoun link puts a false entity into the extraction prompts.
 */
import type { EntityType } from '../../schemas/records.generated.js';
import { entityKey, keyTokens } from './entity-id.js';
import { LEGAL_SUFFIXES, LOCATION_HEADS, ORGANIZATION_HEADS } from './entity-vocabulary.js';

export interface TypedMention {
  surface: string;
  type: EntityType;
}

export interface MentionCluster {
  /** Canonical name: the most complete surface form (most words, then most characters, then first seen). */
  name: string;
  /** Most frequent specific type among the members (OTHER only when every member is OTHER). */
  type: EntityType;
  /** Distinct surface forms, in order of first appearance. */
  surfaces: string[];
  /** Indices of the member mentions in the input, ascending. */
  members: number[];
}

const PLACE_GENERIC_HEADS: ReadonlySet<string> = new Set([
  'strip',
  'city',
  'province',
  'region',
  'county',
  'oblast',
  'krai',
  'governorate',
  'district',
  'prefecture',
]);
const INITIALS_SKIPPED: ReadonlySet<string> = new Set(['of', 'the', 'and', 'for', 'de', 'on', 'in', 'to', 'at']);

interface Candidate {
  index: number;
  key: string;
  tokens: string[];
  type: EntityType;
}

interface Building {
  members: Candidate[];
  /** The longest member: what shorter forms are compared with. */
  full: Candidate;
  keys: Set<string>;
  /** clusterType of the members so far, kept up to date as they join (every lookup reads it). */
  type: EntityType;
  /** initials and institutionShortForms of `full`, worked out the first time a mention asks. */
  initials?: string | null;
  shortForms?: string[];
}

/** Clusters in order of their first mention; every input mention is in exactly one. */
export function resolveCoreferences(mentions: readonly TypedMention[]): MentionCluster[] {
  const candidates = mentions.map((m, index): Candidate => ({
    index,
    key: entityKey(m.surface),
    tokens: keyTokens(m.surface),
    type: m.type,
  }));
  // Long forms first, so every short form meets all the names it could abbreviate.
  const order = [...candidates].sort((a, b) => b.tokens.length - a.tokens.length || a.index - b.index);
  const clusters: Building[] = [];
  for (const candidate of order) {
    const home = findCluster(clusters, candidate, mentions);
    if (home === undefined) {
      clusters.push({ members: [candidate], full: candidate, keys: new Set([candidate.key]), type: candidate.type });
    } else {
      home.members.push(candidate);
      home.keys.add(candidate.key);
      home.type = clusterType(home);
    }
  }
  return clusters.map((cluster) => finish(cluster, mentions)).sort((a, b) => (a.members[0] ?? 0) - (b.members[0] ?? 0));
}

function findCluster(
  clusters: readonly Building[],
  m: Candidate,
  mentions: readonly TypedMention[],
): Building | undefined {
  const surface = mentions[m.index]!.surface;
  const compatible = clusters.filter((c) => compatibleTypes(c.type, m.type));
  const exact = compatible.filter((c) => c.keys.has(m.key));
  if (exact.length > 0) return unique(exact);
  const acronym = acronymLetters(surface);
  if (acronym !== undefined) {
    const expanded = compatible.filter((c) => {
      if (c.initials === undefined) c.initials = initials(mentions[c.full.index]!.surface) ?? null;
      return c.initials === acronym;
    });
    if (expanded.length > 0) return unique(expanded);
  }
  const lastNames = compatible.filter((c) => isPersonLike(c, m) && endsWith(c.full.tokens, m.tokens));
  if (lastNames.length > 0) return unique(lastNames);
  const firstNames = compatible.filter(
    (c) => c.type === 'PERSON' && m.tokens.length === 1 && c.full.tokens[0] === m.tokens[0],
  );
  if (firstNames.length > 0) return unique(firstNames);
  if (acronym !== undefined) return undefined;
  const shorter = compatible.filter(
    (c) =>
      c.type !== 'PERSON' &&
      m.type !== 'PERSON' &&
      (c.shortForms ??= institutionShortForms(c.full.tokens)).includes(m.key),
  );
  return unique(shorter);
}

/** The one cluster a short form fits, or undefined when it fits none or several. */
function unique(clusters: readonly Building[]): Building | undefined {
  return clusters.length === 1 ? clusters[0] : undefined;
}

function compatibleTypes(a: EntityType, b: EntityType): boolean {
  return a === b || a === 'OTHER' || b === 'OTHER';
}

function isPersonLike(cluster: Building, m: Candidate): boolean {
  const type = cluster.type;
  const personish = (t: EntityType): boolean => t === 'PERSON' || t === 'OTHER';
  if (!personish(type) || !personish(m.type)) return false;
  const n = cluster.full.tokens.length;
  if (type === 'OTHER' && m.type === 'OTHER') return n <= 3 && m.tokens.length === 1;
  return n >= 2 && n <= 5 && m.tokens.length < n;
}

/** Whether `tail` is the last words of `tokens` (all of them, when as long). */
export function endsWith(tokens: readonly string[], tail: readonly string[]): boolean {
  if (tail.length === 0 || tail.length > tokens.length) return false;
  const offset = tokens.length - tail.length;
  return tail.every((t, i) => tokens[offset + i] === t);
}

/** Upper-case letters of an all-caps surface of 2–6 letters ("F.B.I." → "fbi"), else undefined. */
export function acronymLetters(surface: string): string | undefined {
  const letters = surface.replace(/[.\s]/g, '');
  if (!/^\p{Lu}{2,6}$/u.test(letters)) return undefined;
  return letters.toLowerCase();
}

/**
 * Initials of a multi-word name, lower-cased: one letter per word, every letter of a word that is
 * itself an acronym ("U.S. Steel" → "uss"), connectors skipped; undefined for a single word.
 */
export function initials(name: string): string | undefined {
  const words = name.split(/[\s\-–]+/u).filter((w) => w.length > 0 && !INITIALS_SKIPPED.has(w.toLowerCase()));
  if (words.length < 2) return undefined;
  return words
    .map((w) => {
      const letters = w.replace(/[.'’]/g, '');
      return /^\p{Lu}{2,6}$/u.test(letters) ? letters : letters.charAt(0);
    })
    .join('')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/**
 * Keys of the shorter forms an organisation, place or event may be called by once named in full:
 * without its legal suffix ("Chanel" for "Chanel Inc."), without a place's generic head ("Gaza" for
 * "Gaza Strip", "Kursk" for "Kursk Oblast"), and without one or two qualifying words in front
 * ("Senate" for "U.S. Senate", "Security Council" for "UN Security Council").
 */
export function institutionShortForms(tokens: readonly string[]): string[] {
  const forms: string[] = [];
  if (tokens.length < 2) return forms;
  const last = tokens.at(-1)!;
  if (LEGAL_SUFFIXES.has(last) || PLACE_GENERIC_HEADS.has(last)) forms.push(tokens.slice(0, -1).join(' '));
  // Only qualifiers are dropped: what is left must itself read as an institution ("Senate") or be
  // two words long ("Security Council"), so "Africa" never stands for "South Africa".
  for (let drop = 1; drop <= 2 && drop < tokens.length; drop++) {
    const rest = tokens.slice(drop);
    if (rest.length >= 2 || ORGANIZATION_HEADS.has(last) || LOCATION_HEADS.has(last)) forms.push(rest.join(' '));
  }
  // A form of three letters or fewer would read as an acronym ("U.S." for "U.S. District").
  return forms.filter((f) => (f.includes(' ') || f.length > 3) && !INITIALS_SKIPPED.has(f.split(' ')[0]!));
}

/**
 * Generic heads of a region that news drops in any article once the region is known: "Gaza" is the
 * Gaza Strip, "South Kivu" the province. Across articles only where the rest cannot be the
 * region's capital city: a strip, or a name of two words or more ("South Kivu", "North Gaza").
 * "Kyiv", "Sumy" and "Mandalay" are cities as well as their oblast's or region's names; "Mexico City"
 * and "Los Angeles County" other places than their first words name.
 */
const CROSS_DOCUMENT_PLACE_HEADS: ReadonlySet<string> = new Set([
  'strip',
  'province',
  'region',
  'oblast',
  'krai',
  'governorate',
  'prefecture',
]);

/**
 * The short form that may stand for a full name in another article: a person's last name (for two
 * to five words), a company's name without its legal suffix ("Apple" for "Apple Inc."), a region's
 * name without its generic head ("Gaza" for "Gaza Strip", "South Kivu" for "South Kivu Province").
 * Undefined for other names: their short forms are too often another entity's.
 */
export function crossDocumentShortForm(tokens: readonly string[], type: EntityType): string | undefined {
  if (type === 'PERSON') return tokens.length >= 2 && tokens.length <= 5 ? tokens.at(-1) : undefined;
  if (tokens.length < 2) return undefined;
  const head = tokens.at(-1)!;
  if (LEGAL_SUFFIXES.has(head)) return tokens.slice(0, -1).join(' ');
  if (type !== 'LOCATION' || !CROSS_DOCUMENT_PLACE_HEADS.has(head)) return undefined;
  const rest = tokens.slice(0, -1);
  if (head !== 'strip' && rest.length < 2) return undefined;
  // "The Region" or "West Region" leaves no name; a short form must still name something.
  if (INITIALS_SKIPPED.has(rest[0]!) || (rest.length === 1 && COMPASS_POINTS.has(rest[0]!))) return undefined;
  return rest.join(' ');
}

const COMPASS_POINTS: ReadonlySet<string> = new Set(['north', 'south', 'east', 'west', 'central', 'capital']);

function clusterType(cluster: Building): EntityType {
  return majorityType(
    cluster.members.map((m) => m.type),
    cluster.full.type,
  );
}

function majorityType(types: readonly EntityType[], fallback: EntityType): EntityType {
  const counts = new Map<EntityType, number>();
  for (const t of types) if (t !== 'OTHER') counts.set(t, (counts.get(t) ?? 0) + 1);
  let best: EntityType = 'OTHER';
  let bestCount = 0;
  for (const [t, n] of counts) {
    if (n > bestCount || (n === bestCount && t === fallback)) {
      best = t;
      bestCount = n;
    }
  }
  return best;
}

function finish(cluster: Building, mentions: readonly TypedMention[]): MentionCluster {
  const members = cluster.members.map((m) => m.index).sort((a, b) => a - b);
  const surfaces: string[] = [];
  for (const i of members) {
    const surface = mentions[i]!.surface;
    if (!surfaces.includes(surface)) surfaces.push(surface);
  }
  let name = surfaces[0] ?? '';
  for (const surface of surfaces) {
    const words = keyTokens(surface).length - keyTokens(name).length;
    if (words > 0 || (words === 0 && surface.length > name.length)) name = surface;
  }
  return { name, type: cluster.type, surfaces, members };
}

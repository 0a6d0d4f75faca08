/**
 * A faster, identical sweep for compromise's tagger. compromise tags words in passes that match a
 * net of hundreds of patterns ("sweep"). To pick the patterns worth trying on each sentence it
 * walks the net's hook table (word or tag → patterns) and grows the sentence's list by
 * `concat`, copying the list once per hook the sentence has (`getHooks`): quadratic in the
 * candidates, and on long news articles, with many tags per sentence, most of markup's time.
 *
 * Here each sentence's candidate list is built once, in linear time — the patterns of the hooks its
 * words and tags hit, in the table's order, each pattern once (the first time it comes, as
 * compromise keeps it) — and compromise's own sweep then runs on that sentence with a one-entry
 * table holding exactly that list. Needs, exclusions, word counts, the matching itself and the
 * tagging afterwards are compromise's, unchanged; results come back in the same order with their
 * sentence index restored. The tags — and so markup — are exactly what they were
 * (test/unit/markup-tagger-sweep.test.ts compares both on the bundled sample).
 *
 * Installed through compromise's method table (`nlp.methods().one.bulkMatch`), which its views look
 * up on every sweep; no file of the package is changed.
 */
import nlp from 'compromise';

/** A pattern of the net, as far as this file looks into it. */
interface NetMatch {
  match: string;
}
type Hooks = Record<string, readonly NetMatch[]>;
interface Net {
  hooks: Hooks;
  always: readonly NetMatch[];
}
interface Found {
  pointer: number[];
}
type Sentence = unknown[];
type BulkMatch = (document: Sentence[], net: Net, methods: CompromiseMethods, opts?: { matchOne?: boolean }) => Found[];
interface CompromiseMethods {
  one: { bulkMatch: BulkMatch; cacheDoc: (document: Sentence[]) => Set<string>[] };
}

/** Position of each hook key in its table's own order, per table (a net is built once and reused). */
const keyOrder = new WeakMap<Hooks, Map<string, number>>();

function orderOf(hooks: Hooks): Map<string, number> {
  let order = keyOrder.get(hooks);
  if (order === undefined) {
    order = new Map(Object.keys(hooks).map((key, i) => [key, i]));
    keyOrder.set(hooks, order);
  }
  return order;
}

/**
 * The patterns compromise's `getHooks` would list for a sentence with this cache: for each hook key
 * the sentence holds, in the table's order, its patterns, each pattern (by its `match` text) once.
 * Also returns one key the sentence holds, under which the list can be handed over.
 */
export function candidatesOf(hooks: Hooks, cache: ReadonlySet<string>): { key: string; list: NetMatch[] } | undefined {
  const order = orderOf(hooks);
  const present: [string, number][] = [];
  for (const key of cache) {
    const position = order.get(key);
    if (position !== undefined) present.push([key, position]);
  }
  if (present.length === 0) return undefined;
  present.sort((a, b) => a[1] - b[1]);
  const seen = new Set<string>();
  const list: NetMatch[] = [];
  for (const [key] of present) {
    for (const pattern of hooks[key]!) {
      if (seen.has(pattern.match)) continue;
      seen.add(pattern.match);
      list.push(pattern);
    }
  }
  return { key: present[0]![0], list };
}

const methods = nlp.methods() as unknown as CompromiseMethods;
const original = methods.one.bulkMatch;

const sentenceBySentence: BulkMatch = (document, net, viewMethods, opts = {}) => {
  const caches = viewMethods.one.cacheDoc(document);
  const results: Found[] = [];
  for (const [n, sentence] of document.entries()) {
    const candidates = candidatesOf(net.hooks, caches[n]!);
    if (candidates === undefined && net.always.length === 0) continue;
    const hooks: Hooks = candidates === undefined ? {} : { [candidates.key]: candidates.list };
    const found = original([sentence], { ...net, hooks }, viewMethods, opts);
    for (const result of found) {
      result.pointer[0] = n;
      results.push(result);
    }
    if (opts.matchOne === true && results.length > 0) return [results[0]!];
  }
  return results;
};

/** Turns the faster sweep on (the default once this module is loaded) or off (for the equality test). */
export function useSentenceBySentenceSweep(on: boolean): void {
  methods.one.bulkMatch = on ? sentenceBySentence : original;
}

useSentenceBySentenceSweep(true);

/**
 * Bursts as people judged them, and the product's alerts held against them. Wikipedia's Current
 * Events editors link every entity a summary is about to its Wikipedia article: per title, the
 * number of summaries linking it per day is a human coverage count, and a day is a human burst for
 * that title when NEON's rule fires on those counts (3-day rolling sum above the mean + 1 std of
 * the previous 28, at least 3 stories, as `NEON_DAY_RULE`). A run of consecutive burst days is one
 * human burst episode, dated by its first day.
 *
 * Only titles that are names take part: those linked mostly from a capitalised surface ("Goma"),
 * not common nouns ("ceasefire", "drone warfare"). A title is *reachable* when markup found an
 * entity whose mentions are linked to it at least once: the spike detector cannot alert on a name
 * markup never finds, so recall is reported on reachable bursts, and on all of them beside it.
 */
import type { CurrentEventItem } from '../streams/archives/load-wikipedia-current-events.js';
import { DAY_MS, evaluateRule, NEON_DAY_RULE } from '../processors/spikes/spike-rule.js';
import type { MarkedArticle } from '../schemas/records.generated.js';
import { seededRandom, wilsonInterval, type Interval } from '../devkit/interval-statistics.js';

export interface HumanBurst {
  title: string;
  /** First burst day of the episode (UTC ms). */
  start: number;
  days: number;
  /** Linked stories in the rolling window on the first day. */
  stories: number;
}

export const dayString = (t: number): string => new Date(t).toISOString().slice(0, 10);

/** Human burst episodes of the named titles, in date order. */
export function humanBursts(items: readonly CurrentEventItem[]): HumanBurst[] {
  const counts = new Map<string, Map<number, number>>();
  const capitalised = new Map<string, number>();
  for (const item of items) {
    const day = Date.parse(`${item.date}T00:00:00Z`);
    for (const link of item.links) {
      const surface = item.text.slice(link.start, link.end);
      capitalised.set(link.title, (capitalised.get(link.title) ?? 0) + (/^\p{Lu}/u.test(surface) ? 1 : -1));
    }
    for (const title of new Set(item.links.map((l) => l.title))) {
      const byDay = counts.get(title) ?? new Map<number, number>();
      byDay.set(day, (byDay.get(day) ?? 0) + 1);
      counts.set(title, byDay);
    }
  }
  const days = items.map((i) => Date.parse(`${i.date}T00:00:00Z`));
  const first = Math.min(...days);
  const last = Math.max(...days);
  const bursts: HumanBurst[] = [];
  for (const [title, byDay] of counts) {
    if ((capitalised.get(title) ?? 0) <= 0) continue;
    let open: HumanBurst | undefined;
    for (let d = first; d <= last; d += DAY_MS) {
      const verdict = evaluateRule(byDay, d, first, NEON_DAY_RULE, 'DAY');
      if (verdict.spike) {
        if (open) open.days += 1;
        else {
          open = { title, start: d, days: 1, stories: verdict.observed };
          bursts.push(open);
        }
      } else open = undefined;
    }
  }
  return bursts.sort((a, b) => a.start - b.start || a.title.localeCompare(b.title));
}

/**
 * The Wikipedia title each entity id stands for: the title its mentions' spans overlap most often
 * in the linked summaries (ties by title). Entities never overlapping a link have none: the humans
 * never linked them.
 */
export function entityTitles(
  marked: readonly MarkedArticle[],
  itemsById: ReadonlyMap<string, CurrentEventItem>,
): Map<string, string> {
  const votes = new Map<string, Map<string, number>>();
  for (const article of marked) {
    const item = itemsById.get(article.article.id);
    if (!item) continue;
    for (const m of article.mentions) {
      for (const link of item.links) {
        if (link.start >= m.end || m.start >= link.end) continue;
        const byTitle = votes.get(m.entity_id) ?? new Map<string, number>();
        byTitle.set(link.title, (byTitle.get(link.title) ?? 0) + 1);
        votes.set(m.entity_id, byTitle);
      }
    }
  }
  const titles = new Map<string, string>();
  for (const [id, byTitle] of votes) {
    const best = [...byTitle].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    titles.set(id, best[0]);
  }
  return titles;
}

/**
 * The bursts the product's own counts could show: at least `minimum` articles in the burst's
 * window (its first day and the two before) mention an entity linked to the title. The others are
 * markup's misses (a demonym, "Israeli", linked to Israel; a role, "President", to its holder),
 * beyond what spike detection can see.
 */
export function detectableBursts(
  bursts: readonly HumanBurst[],
  marked: readonly MarkedArticle[],
  titles: ReadonlyMap<string, string>,
  minimum = 3,
): HumanBurst[] {
  const counts = new Map<string, Map<number, number>>();
  for (const article of marked) {
    const day = Math.floor(article.article.published_at / DAY_MS) * DAY_MS;
    const linked = new Set(article.mentions.flatMap((m) => titles.get(m.entity_id) ?? []));
    for (const title of linked) {
      const byDay = counts.get(title) ?? new Map<number, number>();
      byDay.set(day, (byDay.get(day) ?? 0) + 1);
      counts.set(title, byDay);
    }
  }
  return bursts.filter((b) => {
    const byDay = counts.get(b.title);
    let sum = 0;
    for (let d = b.start - 2 * DAY_MS; d <= b.start; d += DAY_MS) sum += byDay?.get(d) ?? 0;
    return sum >= minimum;
  });
}

/** One day's alerts as the product ranks them: each with the entity ids it covers (lead first). */
export interface RankedAlert {
  lead: string;
  name: string;
  entities: string[];
  significance: number;
}

export interface SpikeFigures {
  human_bursts: number;
  recalled: number;
  recall: number;
  recall_interval: Interval;
  /** Recall counting only the story's lead entity, not the names folded into it. */
  recall_lead_only: number;
  median_rank: number | null;
  median_rank_interval: Interval | null;
  top5: number;
  top5_share: number;
  top5_interval: Interval;
  days: number;
  alerts: number;
  alerts_per_day_median: number;
  alerts_per_day_median_interval: Interval;
  alerts_per_day_max: number;
  unlinked: number;
  unlinked_share: number;
  unlinked_interval: Interval;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Percentile bootstrap 95% interval of a median. */
function bootstrapMedian(values: readonly number[], resamples = 2_000, seed = 7): Interval {
  if (values.length === 0) return { low: 0, high: 0 };
  const random = seededRandom(seed);
  const medians: number[] = [];
  for (let r = 0; r < resamples; r++) {
    const sample = values.map(() => values[Math.floor(random() * values.length)]!);
    medians.push(median(sample));
  }
  medians.sort((a, b) => a - b);
  return { low: medians[Math.floor(0.025 * resamples)]!, high: medians[Math.floor(0.975 * resamples)]! };
}

/**
 * Where the product's alerts meet a burst: the rank of the first alert covering an entity of its
 * title on a day from two days before its first day (its rolling window) to one day after, with
 * whether that alert's lead is such an entity; undefined when none does.
 */
export function burstHit(
  burst: HumanBurst,
  alertsByDay: ReadonlyMap<number, readonly RankedAlert[]>,
  titles: ReadonlyMap<string, string>,
): { rank: number; lead: boolean } | undefined {
  for (let d = burst.start - 2 * DAY_MS; d <= burst.start + DAY_MS; d += DAY_MS) {
    const alerts = alertsByDay.get(d) ?? [];
    const at = alerts.findIndex((a) => a.entities.some((id) => titles.get(id) === burst.title));
    if (at >= 0) return { rank: at + 1, lead: titles.get(alerts[at]!.lead) === burst.title };
  }
  return undefined;
}

/** Distinct articles per entity id and UTC day (ms) in the product's marked articles. */
export function articlesPerEntityDay(marked: readonly MarkedArticle[]): Map<string, Map<number, number>> {
  const counts = new Map<string, Map<number, number>>();
  for (const article of marked) {
    const day = Math.floor(article.article.published_at / DAY_MS) * DAY_MS;
    for (const id of new Set(article.mentions.map((m) => m.entity_id))) {
      const byDay = counts.get(id) ?? new Map<number, number>();
      byDay.set(day, (byDay.get(day) ?? 0) + 1);
      counts.set(id, byDay);
    }
  }
  return counts;
}

/** One episode of the product's, as far as explaining a miss needs it. */
export interface ProductEpisode {
  entity_id: string;
  /** First and last day (UTC ms) the episode was judged on. */
  start: number;
  last: number;
  /** The day of the story it was filed under (a story of the day before when it joined one). */
  storyDay: number;
}

/**
 * Why a missed burst was missed:
 * - `few_articles`: the product's own articles name the title fewer than 3 times in its window
 *   (markup did not find or link the name; see `detectableBursts`);
 * - `split_names`: they do, but spread over names markup did not fuse ("Alawite", "Alawites"), no
 *   one of them in 3 articles of a 3-day window, the least any alert needs;
 * - `earlier_story`: an entity of the title was already in an episode, or filed under a story,
 *   that began before the burst's window: alerted, but not as a new story of those days;
 * - `not_listed`: an episode began in the window, but its story did not make the day's digest;
 * - `below_bar`: the product saw the articles and raised nothing: its counts were within what the
 *   entity's baseline expects.
 */
export type MissReason = 'few_articles' | 'split_names' | 'earlier_story' | 'not_listed' | 'below_bar';

export function explainMiss(
  burst: HumanBurst,
  detectable: ReadonlySet<HumanBurst>,
  episodes: readonly ProductEpisode[],
  titles: ReadonlyMap<string, string>,
  articlesPerDay: ReadonlyMap<string, ReadonlyMap<number, number>>,
): MissReason {
  if (!detectable.has(burst)) return 'few_articles';
  const from = burst.start - 2 * DAY_MS;
  const to = burst.start + DAY_MS;
  let most = 0;
  for (const [id, title] of titles) {
    if (title !== burst.title) continue;
    const perDay = articlesPerDay.get(id);
    for (let d = from; d <= to; d += DAY_MS) {
      let sum = 0;
      for (let i = 0; i < 3; i++) sum += perDay?.get(d - i * DAY_MS) ?? 0;
      most = Math.max(most, sum);
    }
  }
  if (most < 3) return 'split_names';
  const overlapping = episodes.filter(
    (e) => titles.get(e.entity_id) === burst.title && e.start <= to && e.last >= from,
  );
  if (overlapping.some((e) => e.start < from || e.storyDay < from)) return 'earlier_story';
  return overlapping.length > 0 ? 'not_listed' : 'below_bar';
}

/**
 * The product's alerts (per day, ranked) against the human bursts: a burst is recalled when an
 * alert covering an entity of its title is among the alerts of a day from two days before its
 * first day (its rolling window) to one day after; its rank is that alert's place on the first
 * such day. Alerts per day count every day of the period, quiet ones as 0.
 */
export function scoreAgainstHumans(
  alertsByDay: ReadonlyMap<number, readonly RankedAlert[]>,
  bursts: readonly HumanBurst[],
  titles: ReadonlyMap<string, string>,
  period: { first: number; last: number },
): SpikeFigures {
  const ranks: number[] = [];
  let recalled = 0;
  let recalledLead = 0;
  for (const burst of bursts) {
    const hit = burstHit(burst, alertsByDay, titles);
    if (hit !== undefined) {
      recalled += 1;
      ranks.push(hit.rank);
      if (hit.lead) recalledLead += 1;
    }
  }
  const perDay: number[] = [];
  let alerts = 0;
  let unlinked = 0;
  for (let d = period.first; d <= period.last; d += DAY_MS) {
    const list = alertsByDay.get(d) ?? [];
    perDay.push(list.length);
    alerts += list.length;
    unlinked += list.filter((a) => !titles.has(a.lead)).length;
  }
  const top5 = ranks.filter((r) => r <= 5).length;
  const n = bursts.length;
  return {
    human_bursts: n,
    recalled,
    recall: n === 0 ? 0 : recalled / n,
    recall_interval: wilsonInterval(recalled, n),
    recall_lead_only: n === 0 ? 0 : recalledLead / n,
    median_rank: ranks.length === 0 ? null : median(ranks),
    median_rank_interval: ranks.length === 0 ? null : bootstrapMedian(ranks),
    top5,
    top5_share: n === 0 ? 0 : top5 / n,
    top5_interval: wilsonInterval(top5, n),
    days: perDay.length,
    alerts,
    alerts_per_day_median: median(perDay),
    alerts_per_day_median_interval: bootstrapMedian(perDay),
    alerts_per_day_max: Math.max(0, ...perDay),
    unlinked,
    unlinked_share: alerts === 0 ? 0 : unlinked / alerts,
    unlinked_interval: wilsonInterval(unlinked, alerts),
  };
}

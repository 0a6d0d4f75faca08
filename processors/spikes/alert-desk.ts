/**
 * The alert desk: where every entity's spike alerts meet and become what a newsroom reads. The
 * detector judges one entity at a time, on its own partition; only here are they compared:
 *
 * - **One alert per story.** An alert joins a story of the same day when its entity is another
 *   name of one already in it — a person's last name ("Baker" for "James Baker"), an acronym of
 *   the full name ("EC" for "European Community"), the name without a legal suffix or a qualifier
 *   (rules shared with markup's alias resolution), or an alias the entity registry knows — or when
 *   it is co-mentioned: most of its articles are a member's (Jaccard ≥ 0.5 over the alerts'
 *   contributing articles, at least two shared). A short name several stories could own goes to
 *   the one it shares most articles with. Limits: without shared articles or a name rule, two ids
 *   of one entity stay apart (cross-document fusion is the entity registry's job); an alert's
 *   articles are capped at 20, so a very large story shows less overlap than it has.
 * - **Generic words never alert on their own.** A one-word name that is a legal suffix, an
 *   institution's head noun or a title ("Ltd", "Inc", "Council", "Community", "Ministry") is what
 *   markup takes for a name at the start of a sentence: it may join a story, never lead one.
 * - **Ranking.** Stories of a day rank by significance times volume: −log10 p × log2(1 + the
 *   articles above what the baseline expected), at the member's strongest alert (`newsWeight`). How
 *   sure and how much: a known entity whose coverage jumps by forty articles at p = 0.01 leads a
 *   new name's three at p = 0.001, and a big entity's ordinary wobble (a few articles over a large
 *   baseline) stays below a small story that is plainly new. Ties go by significance, then by
 *   distinct articles, then by who came first.
 * - **Budget.** The digest of a day is its `perDay` best stories above `minSignificance`, whether
 *   or not they were pushed; the rest stay queryable. A story is delivered (pushed: the stream's
 *   `story` events, the terminal) the moment it reaches `pushSignificance`, while its day has
 *   delivered fewer than `perDay` stories and, for a story an hourly alert opened, its hour fewer
 *   than `perHour`. The detector updates an open episode as its count grows, so a story that
 *   started weak is pushed when it has become strong.
 *
 * Pure and deterministic for a given order of alerts; bounded (old days are dropped).
 */
import type { SpikeAlert, SpikeGranularity } from '../../schemas/records.generated.js';
import { entityKey, keyTokens } from '../markup/entity-id.js';
import { LEGAL_SUFFIXES, ORGANIZATION_HEADS, TITLE_WORDS } from '../markup/entity-vocabulary.js';
import {
  acronymLetters,
  crossDocumentShortForm,
  initials,
  institutionShortForms,
} from '../markup/resolve-coreferences.js';

export interface AlertBudget {
  /** New stories delivered per UTC day (default 10). */
  perDay: number;
  /** New stories opened by an hourly alert delivered per hour (default 3). */
  perHour: number;
  /** Significance (−log10 p) a story must reach to be listed in a digest (default 0.5, the day rule's bar). */
  minSignificance: number;
  /** Significance a story must reach to be pushed (default 2, p < 0.01): fewer, surer, at once. */
  pushSignificance: number;
}

export const DEFAULT_ALERT_BUDGET: AlertBudget = Object.freeze({
  perDay: 10,
  perHour: 3,
  minSignificance: 0.5,
  pushSignificance: 2,
});

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** How a member came to be in its story. */
export type StoryRelation = 'lead' | 'alias' | 'co-mention';

export interface StoryMember {
  entity_id: string;
  entity_name: string;
  entity_type: SpikeAlert['entity_type'];
  spike_id: string;
  granularity: SpikeGranularity;
  relation: StoryRelation;
  generic: boolean;
  /** Peak significance and articles of the member's episode. */
  significance: number;
  articles: number;
  /** Peak `newsWeight` of the member's alerts: what its story ranks by. */
  weight: number;
  open: boolean;
  /** The member's latest alert state. */
  latest: SpikeAlert;
  /** Its most significant state before it ended: the window and counts a digest shows. */
  peak: SpikeAlert;
  /**
   * Its most significant state whose window closed by the end of the story's day (else its first):
   * the sources a digest of that day links, so a day's digest never cites the days after it.
   */
  dayPeak: SpikeAlert;
}

export interface Story {
  /** The spike id of the alert that opened it. */
  id: string;
  /** UTC day (start, ms) the story started on. */
  day: number;
  /** Hour (start, ms) of the hourly alert that opened it; null when a daily one did. */
  hour: number | null;
  /** The most significant member that is not a generic word (else the first). */
  lead: StoryMember;
  members: StoryMember[];
  significance: number;
  /** The largest `newsWeight` of its named members: what the day's stories rank by. */
  weight: number;
  /** Distinct contributing articles over the members' alerts (as far as alerts list them). */
  articles: number;
  article_ids: string[];
  /** Only generic words: never delivered, never in a digest's budget. */
  generic: boolean;
  /** Pushed within the budget, and when (the detected_at of the alert that pushed it). */
  delivered: boolean;
  delivered_at: number | null;
  open: boolean;
  first_detected_at: number;
}

/** What an alert changed at the desk. */
export interface DeskUpdate {
  story: Story;
  /** The alert made the story delivered just now. */
  delivered: boolean;
  /** The alert opened a new story (rather than joining one). */
  created: boolean;
}

export interface Digest {
  /** YYYY-MM-DD */
  date: string;
  budget: AlertBudget;
  /** The day's best stories within the budget, ranked. */
  stories: Story[];
  /** Stories above the bar beyond the budget (with `all`), or every other story of the day. */
  more: Story[];
  /** Stories of earlier days still open on this day. */
  developing: Story[];
  /** Counts of the day: stories, above the bar, delivered live, generic ones held back. */
  totals: { stories: number; above_bar: number; delivered: number; generic: number };
}

/** Whether a story was still open on a day: some member open, or ended only after the day. */
export function storyOpenOn(story: Story, day: number): boolean {
  return story.members.some((m) => m.open || (m.latest.state === 'ENDED' && m.latest.window_end > day + DAY_MS));
}

export interface AlertDeskOptions {
  budget?: Partial<AlertBudget>;
  /** Names the entity registry knows for an entity id (its aliases), when a registry is followed. */
  aliasesOf?: (entityId: string) => readonly string[] | undefined;
  /** Days of stories kept (default 120). */
  keepDays?: number;
}

/** One-word names that are never news on their own: legal suffixes, institutions' head nouns, titles. */
const GENERIC_WORDS: ReadonlySet<string> = new Set([
  ...LEGAL_SUFFIXES,
  ...[...ORGANIZATION_HEADS].filter((w) => !['congress', 'senate', 'parliament', 'cabinet', 'nato'].includes(w)),
  ...TITLE_WORDS,
  'community',
  'communities',
  'companies',
  'corp',
  'holding',
  'international',
  'national',
  'federal',
  'central',
  'state',
  'states',
  'government',
  'people',
  'city',
  'county',
  'province',
  'region',
  'district',
  'world',
  'group',
  'unit',
  'division',
  'industries',
  'industry',
  'trust',
  'bancorp',
  'financial',
  'capital',
  'investment',
  'investments',
  'resources',
  'energy',
  'the',
]);

/** Whether markup's name is a generic word that must not alert on its own ("Ltd", "Council", "The Community"). */
export function isGenericName(name: string): boolean {
  const tokens = keyTokens(name).filter((t) => t !== 'the');
  return tokens.length === 1 && GENERIC_WORDS.has(tokens[0]!);
}

/** Whether `short` is another name of `full` by the alias rules markup uses across documents. */
export function isShortFormOf(short: string, full: { name: string; type: SpikeAlert['entity_type'] }): boolean {
  const shortKey = entityKey(short);
  const tokens = keyTokens(full.name);
  if (shortKey.length === 0 || tokens.length < 2 || shortKey === tokens.join(' ')) return false;
  if (crossDocumentShortForm(tokens, full.type === 'OTHER' ? 'PERSON' : full.type) === shortKey) return true;
  if (full.type !== 'PERSON' && institutionShortForms(tokens).includes(shortKey)) return true;
  const letters = acronymLetters(short);
  return letters !== undefined && initials(full.name) === letters;
}

function jaccard(a: readonly string[], b: ReadonlySet<string>): { shared: number; index: number } {
  let shared = 0;
  for (const id of a) if (b.has(id)) shared += 1;
  const union = a.length + b.size - shared;
  return { shared, index: union === 0 ? 0 : shared / union };
}

function peakOf(alert: SpikeAlert): number {
  return alert.method === 'surprise' || alert.significance > 0 ? alert.significance : alert.score;
}

export function dayOf(t: number): number {
  return Math.floor(t / DAY_MS) * DAY_MS;
}

/**
 * How much an alert is news: its significance times log2(1 + the articles above what its
 * baseline expected). The significance says how sure the desk is that something happened, the
 * excess how much happened; the logarithm keeps a very large entity's modest jump from burying
 * everything else.
 */
export function newsWeight(alert: Pick<SpikeAlert, 'observed' | 'baseline_mean'>, significance: number): number {
  return significance * Math.log2(1 + Math.max(0, alert.observed - alert.baseline_mean));
}

function weightOf(alert: SpikeAlert): number {
  return alert.state === 'ENDED' ? 0 : newsWeight(alert, peakOf(alert));
}

/** Ranking: significance times volume (`newsWeight`), then significance, then volume, then who came first. */
export function compareStories(a: Story, b: Story): number {
  return (
    b.weight - a.weight ||
    b.significance - a.significance ||
    b.articles - a.articles ||
    a.first_detected_at - b.first_detected_at ||
    a.id.localeCompare(b.id)
  );
}

export class AlertDesk {
  readonly budget: AlertBudget;
  private readonly aliasesOf: AlertDeskOptions['aliasesOf'];
  private readonly keepDays: number;
  /** day → stories that started on it. */
  private readonly byDay = new Map<number, Story[]>();
  /** spike id → the story its episode belongs to. */
  private readonly bySpike = new Map<string, Story>();
  private readonly articleSets = new WeakMap<StoryMember, Set<string>>();
  private readonly deliveredPerDay = new Map<number, number>();
  private readonly deliveredPerHour = new Map<number, number>();

  constructor(options: AlertDeskOptions = {}) {
    this.budget = { ...DEFAULT_ALERT_BUDGET, ...options.budget };
    this.aliasesOf = options.aliasesOf;
    this.keepDays = options.keepDays ?? 120;
  }

  /** Files one alert state; returns the story it belongs to and whether it was just delivered. */
  apply(alert: SpikeAlert): DeskUpdate {
    const known = this.bySpike.get(alert.id);
    if (known) return this.update(known, alert);
    const start = alert.episode_start ?? alert.window_end - (alert.granularity === 'DAY' ? DAY_MS : HOUR_MS);
    const day = dayOf(start);
    const member: StoryMember = {
      entity_id: alert.entity_id,
      entity_name: alert.entity_name,
      entity_type: alert.entity_type,
      spike_id: alert.id,
      granularity: alert.granularity,
      relation: 'lead',
      generic: isGenericName(alert.entity_name),
      significance: alert.state === 'ENDED' ? 0 : peakOf(alert),
      articles: alert.state === 'ENDED' ? 0 : Math.max(alert.articles, alert.article_ids.length),
      weight: weightOf(alert),
      open: alert.state !== 'ENDED',
      latest: alert,
      peak: alert,
      dayPeak: alert,
    };
    this.articleSets.set(member, new Set(alert.article_ids));
    const home = this.storyFor(member, day);
    if (home) {
      home.story.members.push({ ...member, relation: home.relation });
      const joined = home.story.members.at(-1)!;
      this.articleSets.set(joined, new Set(alert.article_ids));
      this.bySpike.set(alert.id, home.story);
      return this.refresh(home.story, alert, false);
    }
    const story: Story = {
      id: alert.id,
      day,
      hour: alert.granularity === 'HOUR' ? Math.floor(start / HOUR_MS) * HOUR_MS : null,
      lead: member,
      members: [member],
      significance: 0,
      weight: 0,
      articles: 0,
      article_ids: [],
      generic: member.generic,
      delivered: false,
      delivered_at: null,
      open: member.open,
      first_detected_at: alert.detected_at,
    };
    const stories = this.byDay.get(day) ?? [];
    stories.push(story);
    this.byDay.set(day, stories);
    this.bySpike.set(alert.id, story);
    this.evict(day);
    return this.refresh(story, alert, true);
  }

  /** The story an episode belongs to. */
  storyOf(spikeId: string): Story | undefined {
    return this.bySpike.get(spikeId);
  }

  /** Every story that started on the day, ranked. */
  storiesOn(day: number): Story[] {
    return [...(this.byDay.get(dayOf(day)) ?? [])].sort(compareStories);
  }

  /** The days that have stories, newest first. */
  days(): number[] {
    return [...this.byDay.keys()].sort((a, b) => b - a);
  }

  /**
   * The digest of a day: its best stories within the budget (above the bar, generic words left
   * out), ranked; `all` lists every other story of the day under `more`.
   */
  digest(day: number, options: { all?: boolean; limit?: number } = {}): Digest {
    const start = dayOf(day);
    const ranked = this.storiesOn(start);
    const perDay = options.limit ?? this.budget.perDay;
    const eligible = ranked.filter((s) => !s.generic && s.significance >= this.budget.minSignificance);
    const stories = eligible.slice(0, perDay);
    const chosen = new Set(stories);
    const more = options.all ? ranked.filter((s) => !chosen.has(s)) : eligible.slice(perDay);
    const developing: Story[] = [];
    for (const [d, list] of this.byDay) {
      if (d >= start || d < start - 14 * DAY_MS) continue;
      for (const story of list) {
        if (story.generic || !story.delivered) continue;
        if (storyOpenOn(story, start)) developing.push(story);
      }
    }
    developing.sort(compareStories);
    return {
      date: new Date(start).toISOString().slice(0, 10),
      budget: { ...this.budget, perDay },
      stories,
      more,
      developing,
      totals: {
        stories: ranked.length,
        above_bar: eligible.length,
        delivered: ranked.filter((s) => s.delivered).length,
        generic: ranked.filter((s) => s.generic).length,
      },
    };
  }

  // ---------------------------------------------------------------------------------------------

  private update(story: Story, alert: SpikeAlert): DeskUpdate {
    const member = story.members.find((m) => m.spike_id === alert.id)!;
    member.latest = alert;
    member.open = alert.state !== 'ENDED';
    if (alert.state !== 'ENDED') {
      if (peakOf(alert) >= peakOf(member.peak) || member.peak.state === 'ENDED') member.peak = alert;
      const onStoryDay = alert.window_end <= story.day + DAY_MS;
      if (onStoryDay && (peakOf(alert) >= peakOf(member.dayPeak) || member.dayPeak.state === 'ENDED')) {
        member.dayPeak = alert;
      }
      member.significance = Math.max(member.significance, peakOf(alert));
      member.weight = Math.max(member.weight, weightOf(alert));
      member.articles = Math.max(member.articles, alert.articles, alert.article_ids.length);
      const ids = this.articleSets.get(member) ?? new Set<string>();
      for (const id of alert.article_ids) ids.add(id);
      this.articleSets.set(member, ids);
    }
    return this.refresh(story, alert, false);
  }

  /** Which story of the day (or the day before, still open) a new member belongs to, and why. */
  private storyFor(member: StoryMember, day: number): { story: Story; relation: StoryRelation } | undefined {
    const candidates = [...(this.byDay.get(day) ?? []), ...(this.byDay.get(day - DAY_MS) ?? []).filter((s) => s.open)];
    const articles = [...(this.articleSets.get(member) ?? [])];
    let best: { story: Story; relation: StoryRelation; strength: number } | undefined;
    const registryNames = (id: string): readonly string[] => this.aliasesOf?.(id) ?? [];
    for (const story of candidates) {
      for (const other of story.members) {
        if (other.entity_id === member.entity_id) return { story, relation: 'alias' };
        const overlap = jaccard(articles, this.articleSets.get(other) ?? new Set());
        // A full name joins through a short one only if the story holds no other full name for it
        // ("Howard Baker" does not join the story where "Baker" is "James Baker").
        const fullOfShort =
          isShortFormOf(other.entity_name, { name: member.entity_name, type: member.entity_type }) &&
          !story.members.some(
            (m) => m !== other && isShortFormOf(other.entity_name, { name: m.entity_name, type: m.entity_type }),
          );
        const alias =
          isShortFormOf(member.entity_name, { name: other.entity_name, type: other.entity_type }) ||
          fullOfShort ||
          registryNames(other.entity_id).some((a) => entityKey(a) === entityKey(member.entity_name)) ||
          registryNames(member.entity_id).some((a) => entityKey(a) === entityKey(other.entity_name));
        // An alias is the strongest tie; among several, the one sharing most articles wins.
        const strength = alias ? 2 + overlap.index : overlap.shared >= 2 && overlap.index >= 0.5 ? overlap.index : 0;
        if (strength > 0 && (!best || strength > best.strength)) {
          best = { story, relation: alias ? 'alias' : 'co-mention', strength };
        }
      }
    }
    return best;
  }

  /** Recomputes a story's lead and figures after a change, and delivers it when the budget allows. */
  private refresh(story: Story, alert: SpikeAlert, created: boolean): DeskUpdate {
    const named = story.members.filter((m) => !m.generic);
    const lead = [...(named.length > 0 ? named : story.members)].sort(
      (a, b) => b.weight - a.weight || b.significance - a.significance || b.articles - a.articles,
    )[0]!;
    for (const m of story.members) if (m.relation === 'lead' && m !== lead) m.relation = 'co-mention';
    story.lead = lead;
    if (lead.relation !== 'lead') lead.relation = 'lead';
    story.generic = named.length === 0;
    story.significance = Math.max(0, ...named.map((m) => m.significance));
    story.weight = Math.max(0, ...named.map((m) => m.weight));
    const ids = new Set<string>();
    for (const m of story.members) for (const id of this.articleSets.get(m) ?? []) ids.add(id);
    story.article_ids = [...ids];
    story.articles = Math.max(ids.size, ...story.members.map((m) => m.articles));
    story.open = story.members.some((m) => m.open);
    let delivered = false;
    if (
      !story.delivered &&
      !story.generic &&
      alert.state !== 'ENDED' &&
      story.significance >= Math.max(this.budget.minSignificance, this.budget.pushSignificance) &&
      (this.deliveredPerDay.get(story.day) ?? 0) < this.budget.perDay &&
      (story.hour === null || (this.deliveredPerHour.get(story.hour) ?? 0) < this.budget.perHour)
    ) {
      story.delivered = true;
      story.delivered_at = alert.detected_at;
      this.deliveredPerDay.set(story.day, (this.deliveredPerDay.get(story.day) ?? 0) + 1);
      if (story.hour !== null) this.deliveredPerHour.set(story.hour, (this.deliveredPerHour.get(story.hour) ?? 0) + 1);
      delivered = true;
    }
    return { story, delivered, created };
  }

  private evict(latestDay: number): void {
    const horizon = latestDay - this.keepDays * DAY_MS;
    for (const [day, stories] of this.byDay) {
      if (day >= horizon) continue;
      this.byDay.delete(day);
      this.deliveredPerDay.delete(day);
      for (const story of stories) for (const m of story.members) this.bySpike.delete(m.spike_id);
    }
    for (const hour of this.deliveredPerHour.keys()) if (hour < horizon) this.deliveredPerHour.delete(hour);
  }
}

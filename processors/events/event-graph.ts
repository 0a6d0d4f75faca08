/**
 * The event graph (EventRAG §2): events as nodes — who, what, when, where, and the sources that
 * reported them — built from the stored interactions, with edges in time order between events that
 * share an entity, and the reports of one event (many sources) gathered on its node.
 *
 * An event is a set of interactions with the same participants (the subject and, for M2, the object,
 * in either role) first reported on the same UTC day whose statements say the same thing: two
 * statements belong together when their content words overlap by at least `SAME_EVENT_JACCARD`,
 * and an event is a connected group of such statements (single link, so the grouping does not depend
 * on the order the statements are read in). The graph is derived at read time from the interactions
 * as of the asked-for date, so an event as of an earlier date never holds a later report, and a
 * superseded statement (a revised or corrected article) leaves the events as it leaves the answers.
 *
 * An event's id is its first report's interaction id with `ev-` for `i-`: stable while later reports
 * join it, and enough to find it again (the first report names the participants and the day).
 */
import { contentTerms } from '../query/question-terms.js';

/** The fields of a stored interaction the graph reads (the datastores' `StoredDocument` has them). */
export interface EventInteraction {
  id: string;
  text: string;
  /** First report, ms since the epoch: the day the interaction belongs to. */
  published_at: number;
  subject_id?: string;
  subject_name?: string;
  object_id?: string | null;
  object_name?: string | null;
  chunk_ids?: string[];
  article_ids?: string[];
  urls?: string[];
}

export interface EventParticipant {
  id: string;
  name: string;
}

/** One source's statement of the event. */
export interface EventReport {
  interaction_id: string;
  statement: string;
  published_at: number;
  urls: string[];
}

export interface NewsEvent {
  /** `ev-` and its first report's interaction id without `i-`. */
  id: string;
  /** UTC day of its first report, `YYYY-MM-DD`. */
  day: string;
  /** Its first report, ms. */
  when: number;
  /** Its latest report, ms. */
  last_reported: number;
  /** Subject first, then the object, as its first report names them. */
  who: EventParticipant[];
  /** The participants that are places (when the caller says which entities are places). */
  where: EventParticipant[];
  /** The statement that shares most words with the others (the earliest among equals). */
  what: string;
  /** Every report, earliest first. */
  reports: EventReport[];
  /** Distinct source URLs, in the order they first reported it. */
  sources: string[];
  /** Distinct articles behind the reports. */
  articles: number;
}

/** Two statements of the same participants on one day report one event at this word overlap or more. */
export const SAME_EVENT_JACCARD = 0.3;

const DAY_MS = 86_400_000;
const EVENT_PREFIX = 'ev-';
const INTERACTION_PREFIX = 'i-';

export const utcDay = (t: number): string => new Date(Math.floor(t / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

/** The event id of the event whose first report is this interaction. */
export function eventIdOf(interactionId: string): string {
  return interactionId.startsWith(INTERACTION_PREFIX)
    ? `${EVENT_PREFIX}${interactionId.slice(INTERACTION_PREFIX.length)}`
    : `${EVENT_PREFIX}${interactionId}`;
}

/** The interaction id an event id names (its first report), undefined for what is not an event id. */
export function firstReportOf(eventId: string): string | undefined {
  if (!/^ev-[0-9a-f]{32}$/.test(eventId)) return undefined;
  return `${INTERACTION_PREFIX}${eventId.slice(EVENT_PREFIX.length)}`;
}

/** Participants, order-free: an M2 statement of (A, B) and one of (B, A) concern the same pair. */
function participantsKey(interaction: EventInteraction): string {
  return [interaction.subject_id ?? '', interaction.object_id ?? ''].sort().join(' ');
}

/**
 * The words a statement says beyond naming its participants: stemmed content words without those of
 * the participants' names, which every statement of the group shares by construction.
 */
function statementTerms(interaction: EventInteraction): Set<string> {
  const names = new Set(contentTerms(`${interaction.subject_name ?? ''} ${interaction.object_name ?? ''}`));
  return new Set(contentTerms(interaction.text).filter((term) => !names.has(term)));
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const term of a) if (b.has(term)) shared += 1;
  return shared / (a.size + b.size - shared);
}

const byTime = (a: EventInteraction, b: EventInteraction): number =>
  a.published_at - b.published_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Connected groups of statements that say the same thing (union–find over the pairs that do). */
function sameEventGroups(members: EventInteraction[], threshold: number): EventInteraction[][] {
  const terms = members.map(statementTerms);
  const parent = members.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  for (let i = 0; i < members.length; i++) {
    for (let j = i + 1; j < members.length; j++) {
      if (root(i) !== root(j) && jaccard(terms[i]!, terms[j]!) >= threshold) parent[root(j)] = root(i);
    }
  }
  const groups = new Map<number, EventInteraction[]>();
  members.forEach((member, i) => groups.set(root(i), [...(groups.get(root(i)) ?? []), member]));
  return [...groups.values()];
}

/** The statement closest to all the others (summed overlap), the earliest among equals. */
function representative(reports: EventInteraction[]): EventInteraction {
  if (reports.length <= 2) return reports[0]!;
  const terms = reports.map(statementTerms);
  let best = 0;
  let bestScore = -1;
  terms.forEach((own, i) => {
    const score = terms.reduce((sum, other, j) => (i === j ? sum : sum + jaccard(own, other)), 0);
    if (score > bestScore) [best, bestScore] = [i, score];
  });
  return reports[best]!;
}

export interface BuildEventsOptions {
  /** Whether an entity is a place (its registry type is LOCATION): those participants are `where`. */
  isPlace?: (entityId: string) => boolean;
  /** Default `SAME_EVENT_JACCARD`. */
  sameEventJaccard?: number;
}

/** The events the interactions make, earliest first. Interactions without a subject are left out. */
export function buildEvents(interactions: readonly EventInteraction[], options: BuildEventsOptions = {}): NewsEvent[] {
  const threshold = options.sameEventJaccard ?? SAME_EVENT_JACCARD;
  const unique = new Map<string, EventInteraction>();
  for (const interaction of interactions) if (interaction.subject_id) unique.set(interaction.id, interaction);
  const byParticipantsAndDay = new Map<string, EventInteraction[]>();
  for (const interaction of unique.values()) {
    const key = `${utcDay(interaction.published_at)} ${participantsKey(interaction)}`;
    byParticipantsAndDay.set(key, [...(byParticipantsAndDay.get(key) ?? []), interaction]);
  }
  const events: NewsEvent[] = [];
  for (const members of byParticipantsAndDay.values()) {
    for (const group of sameEventGroups(members.sort(byTime), threshold)) {
      events.push(eventOf(group.sort(byTime), options.isPlace));
    }
  }
  return events.sort((a, b) => a.when - b.when || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function eventOf(reports: EventInteraction[], isPlace: ((id: string) => boolean) | undefined): NewsEvent {
  const first = reports[0]!;
  const who: EventParticipant[] = [{ id: first.subject_id!, name: first.subject_name ?? first.subject_id! }];
  if (first.object_id) who.push({ id: first.object_id, name: first.object_name ?? first.object_id });
  const sources: string[] = [];
  for (const report of reports) for (const url of report.urls ?? []) if (!sources.includes(url)) sources.push(url);
  return {
    id: eventIdOf(first.id),
    day: utcDay(first.published_at),
    when: first.published_at,
    last_reported: reports[reports.length - 1]!.published_at,
    who,
    where: isPlace ? who.filter((p) => isPlace(p.id)) : [],
    what: representative(reports).text,
    reports: reports.map((r) => ({
      interaction_id: r.id,
      statement: r.text,
      published_at: r.published_at,
      urls: r.urls ?? [],
    })),
    sources,
    articles: new Set(reports.flatMap((r) => r.article_ids ?? [])).size,
  };
}

/** An event a story continues from or to, through one shared participant. */
export interface EventLink {
  event_id: string;
  /** The participant both events share. */
  via: EventParticipant;
  when: number;
  what: string;
}

/** The story of one entity: its events in time order, each linked to the one before and after it. */
export interface StoryEvent extends NewsEvent {
  before: string | null;
  after: string | null;
}

export function storyOf(entityId: string, events: readonly NewsEvent[]): StoryEvent[] {
  const own = events.filter((e) => e.who.some((p) => p.id === entityId));
  return own.map((event, i) => ({
    ...event,
    before: i > 0 ? own[i - 1]!.id : null,
    after: i + 1 < own.length ? own[i + 1]!.id : null,
  }));
}

/**
 * Whether two statements report one event: the same participants, first reported on the same UTC
 * day, saying the same thing (the pairwise test the events are grouped by).
 */
export function reportSameEvent(a: EventInteraction, b: EventInteraction, threshold = SAME_EVENT_JACCARD): boolean {
  return (
    participantsKey(a) === participantsKey(b) &&
    utcDay(a.published_at) === utcDay(b.published_at) &&
    jaccard(statementTerms(a), statementTerms(b)) >= threshold
  );
}

/** The event that holds a report (an interaction id), if any does. */
export function eventHolding(events: readonly NewsEvent[], interactionId: string): NewsEvent | undefined {
  return events.find((e) => e.reports.some((r) => r.interaction_id === interactionId));
}

/** A link to `event` through `via`, for the neighbours of another event. */
export function linkTo(event: NewsEvent, via: EventParticipant): EventLink {
  return { event_id: event.id, via, when: event.when, what: event.what };
}

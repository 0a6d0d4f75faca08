/**
 * The event graph read from the interactions datastore (see processors/events/event-graph.ts): an
 * entity's story as of a date, and one event with the events before and after it through each of
 * its participants. Events are derived from the interactions as of the date on every read, so they
 * follow the as-of bound and supersession exactly as answers do.
 */
import {
  buildEvents,
  eventHolding,
  firstReportOf,
  linkTo,
  reportSameEvent,
  storyOf,
  utcDay,
  type BuildEventsOptions,
  type EventLink,
  type NewsEvent,
  type StoryEvent,
} from '../../processors/events/event-graph.js';
import type { DocumentFilter, StoredDocument } from '../datastore/datastore.js';
import type { Retriever } from './retrieve.js';

const DAY_MS = 86_400_000;

/**
 * At most this many interactions are read for one story: the newest, so a long-covered entity's
 * story is its latest events (`complete: false` says older ones were left out).
 */
export const STORY_READ_LIMIT = 2_000;
/** Interactions read on each side of an event to find the events before and after it. */
const NEIGHBOUR_READ_LIMIT = 300;
/** Neighbours are looked for up to this far from the event. */
const NEIGHBOUR_SPAN_MS = 365 * DAY_MS;

export interface StoryOptions {
  /** Only events first reported at or after this time. */
  from?: number;
  /** The latest this many events. */
  limit: number;
  isPlace?: (entityId: string) => boolean;
}

export interface Story {
  events: StoryEvent[];
  /** False when the entity had more interactions than a story reads: its oldest events are missing. */
  complete: boolean;
}

export interface EventWithNeighbours {
  event: NewsEvent;
  /** For each participant, the event of its story just before this one (the same day's included). */
  before: EventLink[];
  /** For each participant, the event of its story just after this one, as of the date. */
  after: EventLink[];
}

export class EventGraphReader {
  constructor(
    private readonly retriever: Retriever,
    private readonly timeoutMs = 5_000,
  ) {}

  /** The entity's events as of `tq`, earliest first, each linked to the one before and after it. */
  async story(entityId: string, tq: number, options: StoryOptions): Promise<Story> {
    const filter: DocumentFilter = {
      entityId,
      publishedTo: tq,
      ...(options.from === undefined ? {} : { publishedFrom: options.from }),
    };
    const read = await this.interactions(filter, 'newest', STORY_READ_LIMIT, tq);
    let interactions = read;
    const complete = read.length < STORY_READ_LIMIT;
    if (!complete) {
      // The oldest day read may be cut short: its events would be missing reports.
      const oldestDay = utcDay(read[read.length - 1]!.published_at);
      interactions = read.filter((i) => utcDay(i.published_at) !== oldestDay);
    }
    const events = storyOf(entityId, buildEvents(interactions, placesOption(options.isPlace)));
    return { events: events.slice(-options.limit), complete: complete && events.length <= options.limit };
  }

  /** The event `eventId` as of `tq`, undefined when there is no such event by then. */
  async event(
    eventId: string,
    tq: number,
    isPlace?: (entityId: string) => boolean,
  ): Promise<EventWithNeighbours | undefined> {
    const anchorId = firstReportOf(eventId);
    if (anchorId === undefined) return undefined;
    // Read even when superseded: its participants and day still name the event its other reports make.
    const [anchor] = await this.retriever.datastore.list({
      kind: 'interactions',
      filter: { ids: [anchorId], publishedTo: tq },
      order: 'none',
      limit: 1,
      timeoutMs: this.timeoutMs,
    });
    if (!anchor?.subject_id) return undefined;
    const dayStart = Math.floor(anchor.published_at / DAY_MS) * DAY_MS;
    const dayEnd = dayStart + DAY_MS - 1;
    const sameDay = await this.interactions(
      { entityId: anchor.subject_id, publishedFrom: dayStart, publishedTo: Math.min(dayEnd, tq) },
      'none',
      STORY_READ_LIMIT,
      tq,
    );
    const options = placesOption(isPlace);
    const events = buildEvents(sameDay, options);
    // A superseded first report (a revised or corrected article) leaves the event to its other
    // reports, under the id of the first of those.
    const event =
      eventHolding(events, anchor.id) ??
      events.find((e) =>
        e.reports.some((r) =>
          reportSameEvent(
            anchor,
            sameDay.find((i) => i.id === r.interaction_id)!,
          ),
        ),
      );
    if (!event) return undefined;
    const neighbours = await Promise.all(
      event.who.map(async (participant) => {
        const [ownDay, earlier, later] = await Promise.all([
          participant.id === anchor.subject_id
            ? sameDay
            : this.interactions(
                { entityId: participant.id, publishedFrom: dayStart, publishedTo: Math.min(dayEnd, tq) },
                'none',
                STORY_READ_LIMIT,
                tq,
              ),
          this.interactions(
            { entityId: participant.id, publishedFrom: dayStart - NEIGHBOUR_SPAN_MS, publishedTo: dayStart - 1 },
            'newest',
            NEIGHBOUR_READ_LIMIT,
            tq,
          ),
          dayEnd >= tq
            ? Promise.resolve([])
            : this.interactions(
                {
                  entityId: participant.id,
                  publishedFrom: dayEnd + 1,
                  publishedTo: Math.min(tq, dayEnd + NEIGHBOUR_SPAN_MS),
                },
                'oldest',
                NEIGHBOUR_READ_LIMIT,
                tq,
              ),
        ]);
        // The participant's story around the event: the event's own day whole, and whole days on
        // either side (a capped read's farthest day may hold more than was read).
        const story = storyOf(
          participant.id,
          buildEvents([...wholeDays(earlier), ...ownDay, ...wholeDays(later)], options),
        );
        const at = story.findIndex((e) => e.id === event.id);
        const before = at > 0 ? story[at - 1] : undefined;
        const after = at >= 0 && at + 1 < story.length ? story[at + 1] : undefined;
        return {
          before: before ? [linkTo(before, participant)] : [],
          after: after ? [linkTo(after, participant)] : [],
        };
      }),
    );
    return { event, before: neighbours.flatMap((n) => n.before), after: neighbours.flatMap((n) => n.after) };
  }

  /** Interactions that pass the filter, without those superseded as of `tq`. */
  private async interactions(
    filter: DocumentFilter,
    order: 'newest' | 'oldest' | 'none',
    limit: number,
    tq: number,
  ): Promise<StoredDocument[]> {
    const found = await this.retriever.datastore.list({
      kind: 'interactions',
      filter,
      order,
      limit,
      timeoutMs: this.timeoutMs,
    });
    if (found.length === 0) return found;
    const superseded = await this.retriever.supersededAsOf(found, { publishedTo: tq });
    return superseded.size === 0 ? found : found.filter((d) => !superseded.has(d.id));
  }
}

/** `isPlace` as buildEvents takes it (an optional property is left out, not set to undefined). */
function placesOption(isPlace: ((entityId: string) => boolean) | undefined): BuildEventsOptions {
  return isPlace ? { isPlace } : {};
}

/** A read in time order (either way) capped at its limit: drops its last day, which may hold more than was read. */
function wholeDays(read: StoredDocument[]): StoredDocument[] {
  if (read.length < NEIGHBOUR_READ_LIMIT) return read;
  const lastDay = utcDay(read[read.length - 1]!.published_at);
  const kept = read.filter((d) => utcDay(d.published_at) !== lastDay);
  return kept.length > 0 ? kept : read;
}

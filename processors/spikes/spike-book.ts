import type { SpikeAlert, SpikeGranularity } from '../../schemas/records.generated.js';
import type { Story } from './alert-desk.js';

/** One spike episode as users see it: its latest state and every state it went through. */
export interface SpikeEpisode {
  id: string;
  entity_id: string;
  entity_name: string;
  granularity: SpikeGranularity;
  open: boolean;
  started_at: number;
  ended_at: number | null;
  latest: SpikeAlert;
  /** Highest observed window count and score over the episode. */
  peak_observed: number;
  peak_score: number;
  states: { state: SpikeAlert['state']; window_end: number; observed: number; detected_at: number }[];
}

/** A new alert state, numbered in arrival order (the SSE event id). */
export interface SpikeEvent {
  seq: number;
  alert: SpikeAlert;
  /** The alert desk's story the state belongs to, and whether this state got it delivered (pushed). */
  story?: Story;
  delivered?: boolean;
}

export interface SpikeQuery {
  state?: 'open' | 'ended' | 'all';
  entityId?: string;
  granularity?: SpikeGranularity;
  /** Episodes still open at, or ended after, this time (ms). */
  since?: number;
  limit?: number;
}

/**
 * The same state of the same episode about the same window with the same count: a redelivered
 * record (the count model updates an episode ONGOING within a bucket as its count grows).
 */
export function alertKey(alert: Pick<SpikeAlert, 'id' | 'state' | 'window_end' | 'observed'>): string {
  return `${alert.id}/${alert.state}/${alert.window_end}/${alert.observed}`;
}

const STATE_RANK: Readonly<Record<SpikeAlert['state'], number>> = { STARTED: 0, ONGOING: 1, ENDED: 2 };

/**
 * Whether `alert` is a later state about the same window as `held`: the count model updates an open
 * episode within its bucket as the count grows (STARTED, then ONGOING with more), and the episode's
 * latest state must be what it has become, as the stream told its followers.
 */
function grewWithin(alert: SpikeAlert, held: SpikeAlert): boolean {
  if (alert.window_end !== held.window_end || held.state === 'ENDED') return false;
  const rank = STATE_RANK[alert.state] - STATE_RANK[held.state];
  return rank > 0 || (rank === 0 && alert.observed > held.observed);
}

/**
 * Current and past spikes, built from the alert states of `entity.spikes` (in any number of
 * replays: a state already seen changes nothing). Bounded: past episodes beyond `maxEpisodes` are
 * dropped oldest first, and the recent-event log kept for reconnecting SSE clients is bounded too.
 */
export class SpikeBook {
  private readonly episodes = new Map<string, SpikeEpisode>();
  private readonly seen = new Set<string>();
  private readonly events: SpikeEvent[] = [];
  private seq = 0;

  constructor(
    private readonly maxEpisodes = 5_000,
    private readonly maxEvents = 1_000,
  ) {}

  /** Records a state; returns the new event, or undefined for a state already seen. */
  apply(alert: SpikeAlert): SpikeEvent | undefined {
    const key = alertKey(alert);
    if (this.seen.has(key)) return undefined;
    this.seen.add(key);
    let episode = this.episodes.get(alert.id);
    if (!episode) {
      episode = {
        id: alert.id,
        entity_id: alert.entity_id,
        entity_name: alert.entity_name,
        granularity: alert.granularity,
        open: true,
        started_at: alert.episode_start ?? alert.window_start,
        ended_at: null,
        latest: alert,
        peak_observed: 0,
        peak_score: Number.NEGATIVE_INFINITY,
        states: [],
      };
      this.episodes.set(alert.id, episode);
      this.evict();
    }
    episode.states.push({
      state: alert.state,
      window_end: alert.window_end,
      observed: alert.observed,
      detected_at: alert.detected_at,
    });
    const newest =
      episode.latest.window_end < alert.window_end || alert.state === 'ENDED' || grewWithin(alert, episode.latest);
    if (newest || episode.latest === alert) episode.latest = alert;
    if (alert.state === 'ENDED') {
      episode.open = false;
      episode.ended_at = alert.window_end;
    } else {
      episode.peak_observed = Math.max(episode.peak_observed, alert.observed);
      episode.peak_score = Math.max(episode.peak_score, alert.score);
    }
    this.seq += 1;
    const event = { seq: this.seq, alert };
    this.events.push(event);
    if (this.events.length > this.maxEvents) this.events.shift();
    return event;
  }

  query(query: SpikeQuery = {}): SpikeEpisode[] {
    const state = query.state ?? 'all';
    const selected = [...this.episodes.values()].filter(
      (e) =>
        (state === 'all' || (state === 'open') === e.open) &&
        (query.entityId === undefined || e.entity_id === query.entityId) &&
        (query.granularity === undefined || e.granularity === query.granularity) &&
        (query.since === undefined || e.ended_at === null || e.ended_at >= query.since),
    );
    // Open first, then most recent; ties by score.
    selected.sort(
      (a, b) =>
        Number(b.open) - Number(a.open) || b.latest.window_end - a.latest.window_end || b.peak_score - a.peak_score,
    );
    return selected.slice(0, query.limit ?? 100);
  }

  get(id: string): SpikeEpisode | undefined {
    return this.episodes.get(id);
  }

  /** Events after `seq` still held (for a client reconnecting with Last-Event-ID). */
  eventsAfter(seq: number): SpikeEvent[] {
    return this.events.filter((event) => event.seq > seq);
  }

  size(): number {
    return this.episodes.size;
  }

  private evict(): void {
    if (this.episodes.size <= this.maxEpisodes) return;
    // Oldest ended episode first; an open one is only dropped when nothing else is left.
    const ended = [...this.episodes.values()].filter((e) => !e.open).sort((a, b) => a.started_at - b.started_at);
    const victim = ended[0] ?? [...this.episodes.values()].sort((a, b) => a.started_at - b.started_at)[0];
    if (!victim) return;
    this.episodes.delete(victim.id);
    for (const state of victim.states) this.seen.delete(alertKey({ id: victim.id, ...state }));
  }
}

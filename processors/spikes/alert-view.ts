/**
 * A spike alert and its episode as the API, the command line and the webhook show them (JSON, times
 * as ISO 8601 strings): one shape for `GET /v1/spikes`, `neon spikes` and the webhook's payload.
 */
import type { SpikeAlert } from '../../schemas/records.generated.js';
import type { SpikeEpisode } from './spike-book.js';

const iso = (t: number): string => new Date(t).toISOString();

/** An alert as the API shows it: times as ISO 8601 strings. */
export function alertJson(alert: SpikeAlert): Record<string, unknown> {
  return {
    ...alert,
    window_start: iso(alert.window_start),
    window_end: iso(alert.window_end),
    detected_at: iso(alert.detected_at),
    episode_start: alert.episode_start === null ? null : iso(alert.episode_start),
    counts: alert.counts.map((c) => ({ bucket_start: iso(c.bucket_start), count: c.count })),
    first_interactions: alert.first_interactions.map((i) => ({ ...i, t: iso(i.t) })),
  };
}

export function episodeJson(episode: SpikeEpisode, withStates = false): Record<string, unknown> {
  return {
    id: episode.id,
    entity_id: episode.entity_id,
    entity_name: episode.entity_name,
    granularity: episode.granularity,
    open: episode.open,
    started_at: iso(episode.started_at),
    ended_at: episode.ended_at === null ? null : iso(episode.ended_at),
    peak_observed: episode.peak_observed,
    peak_score: Number.isFinite(episode.peak_score) ? episode.peak_score : null,
    latest: alertJson(episode.latest),
    ...(withStates
      ? {
          states: episode.states.map((s) => ({
            ...s,
            window_end: iso(s.window_end),
            detected_at: iso(s.detected_at),
          })),
        }
      : {}),
  };
}

import type { SpikeAlert } from '../../schemas/records.generated.js';
import { DAY_MS } from './spike-rule.js';

export interface SpikeTargetOptions {
  /** An entity stays a target this long after its episode ended (or, while open, for ever). */
  afterEndMs: number;
  /** Content from this long before the episode started is in scope too: the coverage that caused it. */
  beforeStartMs: number;
}

export const DEFAULT_SPIKE_TARGET_OPTIONS: SpikeTargetOptions = { afterEndMs: 3 * DAY_MS, beforeStartMs: 3 * DAY_MS };

interface Interval {
  from: number;
  /** Infinity while the episode is open. */
  to: number;
}

/**
 * Spiking entities as extraction targets (an entity that spikes is extracted for beside the
 * configured subjects, so what is suddenly in the news gets its interactions), in event time: an entity is a target for content whose time falls within its spike
 * episodes, widened by `beforeStartMs` and `afterEndMs`. Fed with the alert states of
 * `entity.spikes`; idempotent, so replaying the topic rebuilds the same set.
 */
export class SpikeTargets {
  private readonly options: SpikeTargetOptions;
  /** entity id → spike id → interval. */
  private readonly episodes = new Map<string, Map<string, Interval>>();

  constructor(options: Partial<SpikeTargetOptions> = {}) {
    this.options = { ...DEFAULT_SPIKE_TARGET_OPTIONS, ...options };
  }

  apply(alert: SpikeAlert): void {
    let byId = this.episodes.get(alert.entity_id);
    if (!byId) {
      byId = new Map();
      this.episodes.set(alert.entity_id, byId);
    }
    const start = alert.episode_start ?? alert.window_start;
    const known = byId.get(alert.id);
    const from = Math.min(known?.from ?? Infinity, start - this.options.beforeStartMs);
    const to = alert.state === 'ENDED' ? alert.window_end + this.options.afterEndMs : Infinity;
    // An ENDED never reopens: a redelivered STARTED after it must not widen the interval again.
    byId.set(alert.id, { from, to: known && known.to !== Infinity && to === Infinity ? known.to : to });
  }

  isTarget(entityId: string, t: number): boolean {
    for (const interval of this.episodes.get(entityId)?.values() ?? []) {
      if (t >= interval.from && t <= interval.to) return true;
    }
    return false;
  }

  list(t: number): string[] {
    return [...this.episodes.keys()].filter((id) => this.isTarget(id, t)).sort();
  }

  /** Forgets episodes that ended before `t` − afterEnd: they can no longer make anything a target. */
  prune(t: number): void {
    for (const [entity, byId] of this.episodes) {
      for (const [id, interval] of byId) if (interval.to < t) byId.delete(id);
      if (byId.size === 0) this.episodes.delete(entity);
    }
  }
}

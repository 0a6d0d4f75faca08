import type { Registry } from 'prom-client';
import { counter, gauge } from './metrics.js';
import type { DetectorOutput, SpikeDetector } from '../../processors/spikes/detect-spikes.js';

/**
 * The detector's own figures beside the stage's generic ones: what happened to each mention
 * (counted / duplicate / late / future), alert states sent, and the state it holds. Labels are
 * closed sets from code.
 */
export interface SpikeMetrics {
  observe(output: DetectorOutput, detector: SpikeDetector): void;
}

export function spikeMetrics(registry: Registry): SpikeMetrics {
  const mentions = counter(registry, 'neon_spike_mentions_total', 'Mentions seen by the spike detector, by outcome.', [
    'outcome',
  ]);
  const alerts = counter(registry, 'neon_spike_alerts_total', 'Spike alert states sent.', ['granularity', 'state']);
  const entities = gauge(registry, 'neon_spike_tracked_entities', 'Entities the spike detector holds counts for.', []);
  const open = gauge(registry, 'neon_spike_open_episodes', 'Spike episodes currently open.', []);
  let sinceGauges = 0;
  return {
    observe(output, detector) {
      mentions.inc({ outcome: output.outcome });
      for (const alert of output.alerts) alerts.inc({ granularity: alert.granularity, state: alert.state });
      // Gauges scan the state: refresh them now and then, not per mention.
      if (output.alerts.length > 0 || ++sinceGauges >= 500) {
        sinceGauges = 0;
        entities.set(detector.size().entities);
        open.set(detector.openEpisodes().length);
      }
    },
  };
}

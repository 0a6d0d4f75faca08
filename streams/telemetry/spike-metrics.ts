import type { Registry } from 'prom-client';
import { counterOf, gaugeOf, METRIC_FAMILIES } from './metrics.js';
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
  const mentions = counterOf(registry, METRIC_FAMILIES.spikeMentions);
  const alerts = counterOf(registry, METRIC_FAMILIES.spikeAlerts);
  const entities = gaugeOf(registry, METRIC_FAMILIES.spikeTrackedEntities);
  const open = gaugeOf(registry, METRIC_FAMILIES.spikeOpenEpisodes);
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

import { concatMap, from, type OperatorFunction } from 'rxjs';
import type { Mention, SpikeAlert } from '../../schemas/records.generated.js';
import type { SpikeDetector } from '../../processors/spikes/detect-spikes.js';

export interface PartitionedMention {
  mention: Mention;
  /** The input partition it arrived on: event time is kept per partition. */
  partition: number;
}

/**
 * The detector as an RxJS operator: each mention in, the alert states it caused out, in order.
 * Synchronous per mention (concatMap over an array), so it needs no buffer and keeps arrival order.
 */
export function detectSpikes(detector: SpikeDetector): OperatorFunction<PartitionedMention, SpikeAlert> {
  return (mentions) =>
    mentions.pipe(concatMap(({ mention, partition }) => from(detector.offer(mention, partition).alerts)));
}

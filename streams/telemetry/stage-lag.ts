import type { StageDescriptor } from '../pipeline/stage-catalog.js';
import type { Transport } from '../runtime/transport.js';

export interface GroupLag {
  /** Records on the stage's input topics its group has not committed; null when it has no consumer. */
  lag: number | null;
  /** Per input topic. */
  topics: { topic: string; lag: number; end: number; committed: number | null }[];
  /** Whether the group ever committed anything on these topics. */
  everCommitted: boolean;
}

/**
 * A stage's lag from the transport's own records: the end of each input partition minus the
 * group's committed position (the whole partition where it committed nothing). The committed
 * positions are read before the ends, and a partition's lag is never below 0: read the other way
 * round, or at once, a stage catching up commits past the end read a moment before, and the
 * difference came out negative.
 */
export async function stageLag(transport: Transport, stage: StageDescriptor): Promise<GroupLag> {
  const topics: GroupLag['topics'] = [];
  let everCommitted = false;
  for (const topic of stage.reads) {
    const committed = await transport.committedOffsets(stage.group, topic);
    const ends = await transport.endOffsets(topic);
    let lag = 0;
    let end = 0;
    let position: number | null = null;
    ends.forEach((partitionEnd, partition) => {
      const at = committed[partition] ?? null;
      if (at !== null) {
        everCommitted = true;
        position = (position ?? 0) + Number(at);
      }
      end += Number(partitionEnd);
      const behind = partitionEnd - (at ?? 0n);
      lag += behind > 0n ? Number(behind) : 0;
    });
    topics.push({ topic, lag, end, committed: position });
  }
  return { lag: topics.reduce((n, t) => n + t.lag, 0), topics, everCommitted };
}

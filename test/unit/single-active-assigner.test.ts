import { AssignerProtocol, type Cluster, type Logger } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { singleActiveAssigner } from '../../streams/kafka/single-active-assigner.js';

const cluster = {
  findTopicPartitionMetadata: (topic: string) =>
    Array.from({ length: topic === 'a' ? 3 : 2 }, (_, partitionId) => ({ partitionId })),
} as unknown as Cluster;

function member(memberId: string, active: boolean): { memberId: string; memberMetadata: Buffer } {
  const assigner = singleActiveAssigner({ active })({ cluster, groupId: 'g', logger: {} as Logger });
  return { memberId, memberMetadata: assigner.protocol({ topics: ['a', 'b'] }).metadata };
}

async function assign(members: { memberId: string; memberMetadata: Buffer }[]): Promise<Record<string, unknown>> {
  const assigner = singleActiveAssigner({ active: false })({ cluster, groupId: 'g', logger: {} as Logger });
  const result = await assigner.assign({ members, topics: ['a', 'b'] });
  return Object.fromEntries(
    result.map((r) => [r.memberId, AssignerProtocol.MemberAssignment.decode(r.memberAssignment)?.assignment]),
  );
}

describe('singleActiveAssigner', () => {
  it('gives every partition of every topic to one member and an empty assignment to the others', async () => {
    expect(await assign([member('m-2', false), member('m-1', false), member('m-3', false)])).toEqual({
      'm-1': { a: [0, 1, 2], b: [0, 1] },
      'm-2': {},
      'm-3': {},
    });
  });

  it('keeps the partitions with the member that already holds them when another joins', async () => {
    const result = await assign([member('m-1', false), member('m-9', true)]);
    expect(result['m-9']).toEqual({ a: [0, 1, 2], b: [0, 1] });
    expect(result['m-1']).toEqual({});
  });
});

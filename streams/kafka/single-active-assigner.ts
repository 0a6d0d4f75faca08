import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

/** What a member tells the group leader when it (re)joins: whether it holds partitions now. */
export interface SingleActiveState {
  active: boolean;
}

const ACTIVE = Buffer.from('active');

/**
 * A consumer-group assignor that gives every partition to one member and none to the others: for a
 * stage whose decisions must not run in two places at once (near-duplicate removal compares each
 * chunk with everything decided before it). The other members are warm standbys. It is sticky: the
 * member that already holds the partitions keeps them when others join, so a new replica never
 * interrupts the active one; a standby takes over only when the active member leaves or dies.
 */
export function singleActiveAssigner(state: SingleActiveState): PartitionAssigner {
  return ({ cluster }) => ({
    name: 'NeonSingleActiveAssigner',
    version: 1,
    protocol: ({ topics }) => ({
      name: 'NeonSingleActiveAssigner',
      metadata: AssignerProtocol.MemberMetadata.encode({
        version: 1,
        topics,
        userData: state.active ? ACTIVE : Buffer.alloc(0),
      }),
    }),
    assign: ({ members, topics }) => {
      const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
      const incumbent = sorted.find((member) => {
        const metadata = AssignerProtocol.MemberMetadata.decode(member.memberMetadata);
        return metadata?.userData.equals(ACTIVE) ?? false;
      });
      const chosen = (incumbent ?? sorted[0])?.memberId;
      const everything: Record<string, number[]> = {};
      for (const topic of topics) {
        everything[topic] = cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId);
      }
      return Promise.resolve(
        members.map((member) => ({
          memberId: member.memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: 1,
            assignment: member.memberId === chosen ? everything : {},
            userData: Buffer.alloc(0),
          }),
        })),
      );
    },
  });
}

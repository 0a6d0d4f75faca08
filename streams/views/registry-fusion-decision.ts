import { EntityRegistry, type RegistryEntity } from '../../processors/markup/entity-registry.js';
import { TOPICS } from '../pipeline/topics.js';
import { topicRecord } from '../runtime/record-codec.js';
import type { StageLogger } from '../runtime/run-stage.js';
import { stderrLogger } from '../runtime/run-stage.js';
import { followStateTopic } from '../runtime/state-topic.js';
import type { Transport } from '../runtime/transport.js';

/** What an operator decides about one entity: undo its fusion, or fuse it into another by hand. */
export type FusionDecision = { kind: 'unfuse'; id: string } | { kind: 'fuse'; id: string; into: string };

/**
 * Writes an operator's fusion decision to `entity.registry`, where every markup replica and the
 * query side read it like any registry change: the registry is read to its end, the decision is
 * made on it (refused with a RangeError for an unknown entity or a cycle) and the entity's new
 * record is sent. The decision carries the wall-clock time, and an operator's word settles over any
 * rule's, so a replica that applies it in any order ends in the same state.
 */
export async function writeFusionDecision(
  transport: Transport,
  decision: FusionDecision,
  options: { topic?: string; now?: number; log?: StageLogger } = {},
): Promise<RegistryEntity> {
  const topic = options.topic ?? TOPICS.registry;
  const registry = new EntityRegistry([], { fusion: false });
  const tail = await followStateTopic(transport, topic, 'RegistryEntity', (entity) => registry.apply(entity), {
    stage: 'entities',
    purpose: 'fusion-decision',
    log: options.log ?? stderrLogger,
  });
  await tail.stop();
  const at = options.now ?? Date.now();
  if (decision.kind === 'unfuse') registry.revokeFusion(decision.id, at);
  else registry.fuse(decision.id, decision.into, at);
  const entity = registry.get(decision.id)!;
  const producer = transport.producer();
  try {
    await producer.send(topic, [topicRecord(topic, 'RegistryEntity', entity.id, entity)]);
  } finally {
    await producer.disconnect();
  }
  return entity;
}

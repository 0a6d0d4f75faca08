import { EntityDirectory } from '../../processors/query/entity-directory.js';
import { EntityLinker } from '../../processors/query/reformulate-query.js';
import { followStateTopic } from '../runtime/state-topic.js';
import type { StageLogger } from '../runtime/run-stage.js';
import { stderrLogger } from '../runtime/run-stage.js';
import type { TopicTail } from '../runtime/topic-tail.js';
import { TOPICS } from '../pipeline/topics.js';
import type { Transport } from '../runtime/transport.js';

/**
 * The query side's view of the entity registry: follows the compacted `entity.registry` topic (read
 * to its end before this resolves) into an EntityLinker, so questions link to the same canonical
 * entities markup assigns, and into an EntityDirectory, so people can look entities up.
 */
export async function followRegistryLinker(
  transport: Transport,
  options: { topic?: string; log?: StageLogger } = {},
): Promise<{ linker: EntityLinker; directory: EntityDirectory; tail: TopicTail }> {
  const linker = new EntityLinker();
  const directory = new EntityDirectory();
  const tail = await followStateTopic(
    transport,
    options.topic ?? TOPICS.registry,
    'RegistryEntity',
    (entity) => {
      // A fused entity's names link to the entity it was fused into ("IDF" → Israel Defense Forces),
      // as markup links them since the fusion.
      const into = entity.fusion && !entity.fusion.revoked ? entity.fusion.into : entity.id;
      // Named as the entity it stands for, so a question saying "IDF" is reformulated with the full name.
      const root = into === entity.id ? undefined : directory.get(into);
      linker.add({
        id: into,
        name: root?.name ?? entity.name,
        aliases: [entity.name, ...entity.aliases],
        mentions: Math.max(entity.mentions, root?.mentions ?? 0),
      });
      directory.put({
        id: entity.id,
        name: entity.name,
        type: entity.type,
        aliases: entity.aliases,
        mentions: entity.mentions,
        first_seen_at: entity.first_seen_at,
        last_seen_at: entity.last_seen_at,
        fused_into: into === entity.id ? null : into,
      });
    },
    { stage: 'query', purpose: 'query-registry', log: options.log ?? stderrLogger },
  );
  return { linker, directory, tail };
}

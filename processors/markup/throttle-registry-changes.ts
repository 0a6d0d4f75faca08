import { sameFusion } from './entity-fusion.js';
import type { RegistryEntity } from '../../schemas/records.generated.js';

/** Below this, a later last_seen_at is not worth a changelog record. */
export const LAST_SEEN_RESOLUTION_MS = 60 * 60 * 1000;

/**
 * Decides which registry changes are worth a record on the changelog. The registry changes with
 * almost every article (last seen, mention count); writing each of those would make the changelog
 * as busy as the article stream. What matters to other replicas and to a restart is written at once
 * (a new entity, a new alias, a new name or class, an earlier first sighting); the counters are
 * written when last seen moved by an hour or the mention count doubled. A restart may therefore
 * come back with slightly older counters, never with fewer entities or aliases.
 */
export class RegistryChangeThrottle {
  private readonly written = new Map<string, RegistryEntity>();

  /** Marks entities as already on the changelog (read back on start). */
  remember(entity: RegistryEntity): void {
    const known = this.written.get(entity.id);
    if (known === undefined || known.mentions <= entity.mentions) this.written.set(entity.id, entity);
  }

  /** Drops what it remembers of entities no longer held (see EntityRegistry.forgetIdle). */
  prune(stillHeld: (id: string) => boolean): void {
    for (const id of [...this.written.keys()]) if (!stillHeld(id)) this.written.delete(id);
  }

  /** The changes to write now; they are remembered as written. */
  select(changes: readonly RegistryEntity[]): RegistryEntity[] {
    const selected = changes.filter((entity) => this.worthWriting(entity));
    for (const entity of selected) this.written.set(entity.id, entity);
    return selected;
  }

  private worthWriting(entity: RegistryEntity): boolean {
    const known = this.written.get(entity.id);
    if (known === undefined) return true;
    if (known.name !== entity.name || known.type !== entity.type) return true;
    // A fusion or its undoing changes what every reader links the entity to.
    if (!sameFusion(known.fusion ?? null, entity.fusion ?? null)) return true;
    if (entity.first_seen_at < known.first_seen_at) return true;
    const knownAliases = new Set(known.aliases);
    if (entity.aliases.some((alias) => !knownAliases.has(alias))) return true;
    if (entity.last_seen_at - known.last_seen_at >= LAST_SEEN_RESOLUTION_MS) return true;
    return entity.mentions >= 2 * Math.max(1, known.mentions);
  }
}

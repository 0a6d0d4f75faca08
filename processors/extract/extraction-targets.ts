/**
 * Which subjects extraction runs for (NEON §2.1: "begin with a target set of subjects S").
 *
 * The product's targets are the configured subjects ∪ the entities currently spiking, never every
 * entity: an LLM call per chunk and entity would cost more than the news is worth, so extraction is gated
 * to what someone asked about or what is suddenly in the news. Targets are judged in event time —
 * the chunk's time — so a replay makes the same choices as the live run did.
 */
import { entityIdFor } from '../markup/entity-id.js';

export interface ExtractionTargets {
  /** Whether extraction should run for `entityId` on content stamped `t`. */
  isTarget(entityId: string, t: number): boolean;
  /** The targets for content stamped `t`, sorted (for listings and the API). */
  list(t: number): string[];
}

/**
 * Subjects named by configuration (`NEON_EXTRACT_SUBJECTS`) or added at run time through the API:
 * targets at every time. Accepts entity ids (`e-…`) or names, which are turned into ids the way
 * markup derives them, so "Doja Cat" and `e-doja-cat` are the same target.
 */
export class ConfiguredTargets implements ExtractionTargets {
  private readonly ids = new Set<string>();

  constructor(subjects: Iterable<string> = []) {
    for (const subject of subjects) this.add(subject);
  }

  /** Adds a subject; returns its entity id. */
  add(subject: string): string {
    const id = toEntityId(subject);
    this.ids.add(id);
    return id;
  }

  remove(subject: string): boolean {
    return this.ids.delete(toEntityId(subject));
  }

  isTarget(entityId: string): boolean {
    return this.ids.has(entityId);
  }

  list(): string[] {
    return [...this.ids].sort();
  }
}

/** Every entity is a target: for the offline extractor, whose calls cost nothing. */
export const ALL_ENTITIES: ExtractionTargets = {
  isTarget: () => true,
  list: () => [],
};

export function unionTargets(...sources: ExtractionTargets[]): ExtractionTargets {
  return {
    isTarget: (entityId, t) => sources.some((s) => s.isTarget(entityId, t)),
    list: (t) => [...new Set(sources.flatMap((s) => s.list(t)))].sort(),
  };
}

export function toEntityId(subject: string): string {
  const trimmed = subject.trim();
  if (trimmed.length === 0) throw new Error('an extraction subject must not be empty');
  return /^e-[a-z0-9-]+$/.test(trimmed) ? trimmed : entityIdFor(trimmed);
}

/**
 * The entities the registry knows, by id, for people looking for one: `GET /v1/entities?q=`, the
 * dashboard's entity search and `neon entities`. Fed from the same registry records as the linker.
 */
export interface DirectoryEntity {
  id: string;
  name: string;
  type: string;
  aliases: readonly string[];
  mentions: number;
  first_seen_at: number | null;
  last_seen_at: number | null;
}

function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

export class EntityDirectory {
  private readonly byId = new Map<string, DirectoryEntity>();

  /** The registry's latest record for an entity replaces what was known of it. */
  put(entity: DirectoryEntity): void {
    this.byId.set(entity.id, entity);
  }

  remove(id: string): void {
    this.byId.delete(id);
  }

  get(id: string): DirectoryEntity | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Entities whose name or an alias contains `q` (case and accents ignored), names that start with
   * it first, then the most mentioned; with no `q`, the most mentioned.
   */
  search(q: string | undefined, limit: number, type?: string): DirectoryEntity[] {
    const needle = q === undefined ? '' : fold(q.trim());
    const scored: { entity: DirectoryEntity; rank: number }[] = [];
    for (const entity of this.byId.values()) {
      if (type !== undefined && entity.type !== type) continue;
      if (needle === '') {
        scored.push({ entity, rank: 2 });
        continue;
      }
      const name = fold(entity.name);
      const rank = name.startsWith(needle)
        ? 0
        : name.includes(needle) || entity.aliases.some((a) => fold(a).includes(needle))
          ? 1
          : -1;
      if (rank >= 0) scored.push({ entity, rank });
    }
    return scored
      .sort(
        (a, b) =>
          a.rank - b.rank ||
          b.entity.mentions - a.entity.mentions ||
          (a.entity.name < b.entity.name ? -1 : a.entity.name > b.entity.name ? 1 : 0),
      )
      .slice(0, limit)
      .map((s) => s.entity);
  }
}

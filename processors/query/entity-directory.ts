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
  /** The entity this one was fused into (markup's entity fusion); absent or null: it stands alone. */
  fused_into?: string | null;
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

  /** The entity a directory entry stands for: the one it was fused into when that one is known. */
  private standingFor(entity: DirectoryEntity): DirectoryEntity {
    let current = entity;
    // Chains are short; the bound only guards against a cycle in hand-made decisions.
    for (let hop = 0; hop < 8 && current.fused_into; hop++) {
      const into = this.byId.get(current.fused_into);
      if (into === undefined || into === entity) break;
      current = into;
    }
    return current;
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * Entities whose name or an alias contains `q` (case and accents ignored), names that start with
   * it first, then the most mentioned; with no `q`, the most mentioned. An entity fused into
   * another is found as that one ("Zelensky" lists Volodymyr Zelenskyy once), never beside it.
   */
  search(q: string | undefined, limit: number, type?: string): DirectoryEntity[] {
    const needle = q === undefined ? '' : fold(q.trim());
    const best = new Map<string, { entity: DirectoryEntity; rank: number }>();
    for (const found of this.byId.values()) {
      const entity = this.standingFor(found);
      if (type !== undefined && entity.type !== type) continue;
      let rank = 2;
      if (needle !== '') {
        const name = fold(found.name);
        rank = name.startsWith(needle)
          ? 0
          : name.includes(needle) || found.aliases.some((a) => fold(a).includes(needle))
            ? 1
            : -1;
      }
      if (rank < 0) continue;
      const known = best.get(entity.id);
      if (known === undefined || rank < known.rank) best.set(entity.id, { entity, rank });
    }
    return [...best.values()]
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

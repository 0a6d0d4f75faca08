/**
 * Canonical entities across documents. Pure in-memory state, with no I/O: whoever persists it writes
 * `takeChanges()` to a compacted log keyed by id and `apply`s every record on start.
 *
 * Ids come from the canonical name alone (see entity-id.ts), so replicas that meet an entity
 * independently agree on its id. `apply` is a join (idempotent, commutative, associative): the
 * state of an entity is a function of the set of records merged into it, so a log replayed in any
 * order, with duplicates, gives the same registry.
 *
 * Cross-document linking, in order (types must be compatible: equal, or one of them OTHER):
 * 1. a name that is an alias of two or more entities ("Jordan") links by no rule: its own id;
 * 2. a name that is an alias of one entity with a longer name links to it ("Trump" → "Donald
 *    Trump", once an article used both), even if the short name has an entity of its own;
 * 3. an acronym links to the one entity whose name it abbreviates ("FBI");
 * 4. a name links to the one person whose last name it is ("Rubio" → "Marco Rubio"), or the one
 *    company it names without the legal suffix ("Apple" → "Apple Inc.");
 * 5. otherwise the entity with the cluster's own id, or the one entity that has the name as an
 *    alias, or — for a new name no more specific than the entity ("Donald J. Trump") — the one
 *    entity that has one of the cluster's surfaces as an alias; else a new entity.
 * Ids come from names only, so same-named entities of different types ("Jordan") share an id.
 * The registry grows with every new name; it does not evict (compaction keeps one record per id).
 *
 * Fusion (entity-fusion.ts) repairs what linking could not know yet: when a new entity arrives, an
 * existing entity that is its acronym, its one short form or a surface its article used for it is
 * fused into it, and a new name that is a spelling of one existing entity is fused into that one.
 * A fused entity keeps its own record (aliases, mentions) with the decision and its evidence;
 * `link` returns the id it is fused into, and revoking the decision makes it stand alone again.
 */
import type { EntityType, RegistryEntity } from '../../schemas/records.generated.js';
import { entityIdFor, entityKey, keyTokens } from './entity-id.js';
import { LEGAL_SUFFIXES } from './entity-vocabulary.js';
import { countryOfNationality } from './recognize-entities.js';
import { acronymLetters, crossDocumentShortForm, endsWith, initials } from './resolve-coreferences.js';
import {
  activeFusion,
  DEFAULT_SPELLING_THRESHOLD,
  preferredFusion,
  sameFusion,
  spellingBlock,
  spellingsAgree,
  type EntityFusion,
  type FusionRule,
} from './entity-fusion.js';

export type { RegistryEntity } from '../../schemas/records.generated.js';

export interface EntityRegistryOptions {
  /** Most aliases kept per entity, the canonical name included; default 32. */
  maxAliasesPerEntity?: number;
  /**
   * Least name similarity for fusing a new name into an existing entity as a spelling of it;
   * default DEFAULT_SPELLING_THRESHOLD. `false` turns fusion off (linking rules only).
   */
  fusion?: { spellingThreshold?: number } | false;
}

export interface ClusterToLink {
  name: string;
  type: EntityType;
  surfaces: string[];
}

export interface LinkedEntity {
  id: string;
  name: string;
  type: EntityType;
}

const DEFAULT_MAX_ALIASES = 32;
/** Longest chain of fusions followed; decisions never make a longer one, and a cycle stops here. */
const MAX_FUSION_HOPS = 8;
/** Fixed order used to settle a type both records state differently: any total order makes merges order-free. */
const TYPE_RANK: Readonly<Record<EntityType, number>> = {
  OTHER: 0,
  EVENT: 1,
  LOCATION: 2,
  ORGANIZATION: 3,
  PERSON: 4,
};

export class EntityRegistry {
  readonly #maxAliases: number;
  readonly #spellingThreshold: number | undefined;
  readonly #byId = new Map<string, RegistryEntity>();
  /** Alias key → ids of the entities that have it. */
  readonly #byAlias = new Map<string, Set<string>>();
  /** Initials of multi-word canonical names ("fbi" → Federal Bureau of Investigation). */
  readonly #byInitials = new Map<string, Set<string>>();
  /** Cross-document short forms of canonical names ("rubio" → Marco Rubio, "apple" → Apple Inc.). */
  readonly #byShortForm = new Map<string, Set<string>>();
  /** Named armed forces ("Israel Defense Forces") and markup's "<X> forces", by the country's key. */
  readonly #byNamedForce = new Map<string, Set<string>>();
  readonly #byGenericForce = new Map<string, Set<string>>();
  /** Spelling blocks of canonical names (see spellingBlock) → ids: where a new name's spellings are. */
  readonly #bySpelling = new Map<string, Set<string>>();
  readonly #changed = new Set<string>();
  readonly #fusionOn: boolean;

  constructor(entities?: Iterable<RegistryEntity>, options: EntityRegistryOptions = {}) {
    const max = options.maxAliasesPerEntity ?? DEFAULT_MAX_ALIASES;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxAliasesPerEntity must be a positive integer`);
    this.#maxAliases = max;
    const threshold =
      options.fusion === false ? undefined : (options.fusion?.spellingThreshold ?? DEFAULT_SPELLING_THRESHOLD);
    if (threshold !== undefined && !(threshold > 0 && threshold <= 1)) {
      throw new RangeError('fusion.spellingThreshold must be in (0, 1]');
    }
    this.#spellingThreshold = threshold;
    this.#fusionOn = options.fusion !== false;
    if (entities !== undefined) for (const entity of entities) this.apply(entity);
    this.#changed.clear();
  }

  get size(): number {
    return this.#byId.size;
  }

  /** Link one document's clusters: returns canonical id per cluster and records changes. */
  link(clusters: readonly ClusterToLink[], seenAt: number): LinkedEntity[] {
    const ids = clusters.map((cluster) => this.#resolve(cluster));
    const counted = new Set<string>();
    const linked = clusters.map((cluster, i) => {
      const id = ids[i]!;
      const existing = this.#byId.get(id);
      const firstInDocument = !counted.has(id);
      counted.add(id);
      const update: RegistryEntity = {
        id,
        name: existing?.name ?? cluster.name,
        type: existing === undefined ? cluster.type : refineType(existing.type, cluster.type),
        aliases: [cluster.name, ...cluster.surfaces],
        first_seen_at: seenAt,
        last_seen_at: seenAt,
        mentions: (existing?.mentions ?? 0) + (firstInDocument ? 1 : 0),
        fusion: null,
      };
      const merged = this.#merge(update);
      if (existing === undefined && this.#fusionOn) this.#fuseNewcomer(merged, cluster, seenAt);
      return id;
    });
    // Each mention is reported as the entity it is fused into (decided above or before).
    return linked.map((id) => {
      const root = this.#byId.get(this.canonicalId(id))!;
      return { id: root.id, name: root.name, type: root.type };
    });
  }

  /**
   * The entity `id` stands for: itself, or the end of its chain of fusions in force (a missing or
   * cyclic chain stops at the last entity known).
   */
  canonicalId(id: string): string {
    let current = id;
    const seen = new Set<string>([id]);
    for (let hop = 0; hop < MAX_FUSION_HOPS; hop++) {
      const into = activeFusion(this.#byId.get(current)?.fusion)?.into;
      if (into === undefined || seen.has(into) || !this.#byId.has(into)) return current;
      seen.add(into);
      current = into;
    }
    return current;
  }

  /**
   * An operator's fusion of `id` into `into` (reversible by `revokeFusion`). Refused when either is
   * unknown or when it would close a cycle.
   */
  fuse(id: string, into: string, at: number, evidence = 'fused by an operator'): void {
    if (!this.#byId.has(id) || !this.#byId.has(into))
      throw new RangeError(`unknown entity ${!this.#byId.has(id) ? id : into}`);
    if (this.canonicalId(into) === id || id === into)
      throw new RangeError(`fusing ${id} into ${into} would make a cycle`);
    this.#setFusion(id, { into, rule: 'operator', score: 1, evidence, decided_at: at, revoked: false });
  }

  /** Undoes the fusion of `id`: it stands on its own again, and no rule fuses it again. */
  revokeFusion(id: string, at: number, evidence = 'unfused by an operator'): void {
    const entity = this.#byId.get(id);
    if (entity === undefined) throw new RangeError(`unknown entity ${id}`);
    const into = entity.fusion?.into ?? id;
    this.#setFusion(id, { into, rule: 'operator', score: 1, evidence, decided_at: at, revoked: true });
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  get(id: string): RegistryEntity | undefined {
    const entity = this.#byId.get(id);
    return entity === undefined ? undefined : copy(entity);
  }

  /** Whether some entity (of this type, when given) has this surface (compared by key) as an alias. */
  knowsName(surface: string, type?: EntityType): boolean {
    const ids = this.#byAlias.get(entityKey(surface));
    if (ids === undefined) return false;
    return type === undefined || [...ids].some((id) => this.#byId.get(id)?.type === type);
  }

  /**
   * Entities that have this surface (compared by key) as an alias, each as the entity it is fused
   * into: for query-time entity linking.
   */
  lookupAlias(surface: string): RegistryEntity[] {
    const ids = this.#byAlias.get(entityKey(surface));
    if (ids === undefined) return [];
    return [...new Set([...ids].map((id) => this.canonicalId(id)))]
      .sort()
      .map((id) => this.#byId.get(id))
      .filter((e): e is RegistryEntity => e !== undefined)
      .map(copy);
  }

  /**
   * Merge an entity learned elsewhere (another replica, or the changelog on restart): idempotent,
   * commutative. Recorded as a change only when the merged state holds something the record did
   * not, so a compacted log that keeps only the latest record per id still converges on the join.
   */
  apply(entity: RegistryEntity): void {
    // Reading back a record of this very state (the changelog echoing this replica's own write)
    // changes nothing: the join is idempotent, so skip computing it.
    const current = this.#byId.get(entity.id);
    if (current !== undefined && sameEntity(current, entity)) return;
    const merged = this.#merge(entity, false);
    if (!sameEntity(merged, normalise(entity, this.#maxAliases))) this.#changed.add(merged.id);
  }

  /** Entities changed since the last call (to write to the changelog). */
  takeChanges(): RegistryEntity[] {
    const changes = [...this.#changed]
      .map((id) => this.#byId.get(id))
      .filter((e): e is RegistryEntity => e !== undefined)
      .map(copy);
    this.#changed.clear();
    return changes;
  }

  *entities(): IterableIterator<RegistryEntity> {
    for (const entity of this.#byId.values()) yield copy(entity);
  }

  /**
   * Forgets rarely seen entities that have not been seen for a while, so memory follows what the
   * news is about rather than everything it ever mentioned: an entity with fewer than `keepMentions`
   * mentions whose last sighting is more than `idleMs` before `asOf` (event time). Ids are derived
   * from names, so a forgotten entity seen again gets its old id back; only its aliases are lost.
   * Returns how many were forgotten.
   */
  forgetIdle(asOf: number, idleMs: number, keepMentions: number): number {
    let forgotten = 0;
    for (const entity of [...this.#byId.values()]) {
      if (entity.mentions >= keepMentions || entity.last_seen_at >= asOf - idleMs) continue;
      this.#unindex(entity);
      this.#byId.delete(entity.id);
      this.#changed.delete(entity.id);
      forgotten += 1;
    }
    return forgotten;
  }

  /** The registry as plain records: `new EntityRegistry(JSON.parse(JSON.stringify(r)))` restores it. */
  toJSON(): RegistryEntity[] {
    return [...this.entities()];
  }

  /**
   * Fusions a new entity brings: existing entities it is the full form of (their acronym, their one
   * short form, a surface its own article used for it) are fused into it; or it is fused, as a
   * spelling, into the one existing entity of its type whose name it nearly is.
   */
  #fuseNewcomer(entity: RegistryEntity, cluster: ClusterToLink, at: number): void {
    const absorb = (id: string, rule: FusionRule, evidence: string): void => {
      const other = this.#byId.get(id);
      if (other === undefined || other.fusion !== null || id === entity.id) return;
      // Types must agree: an untyped name ("Houthi", "Women") is too often something else than the
      // person or team it is the last word of. Only an acronym, typed by nothing, may be OTHER.
      const typesAgree = other.type === entity.type || (rule === 'acronym' && other.type === 'OTHER');
      if (!typesAgree || this.canonicalId(entity.id) === id) return;
      this.#setFusion(id, { into: entity.id, rule, score: 1, evidence, decided_at: at, revoked: false });
    };
    const letters = initials(entity.name);
    // A company's initials count its legal suffix ("AI" for "Apple Inc."): nobody abbreviates it so.
    const suffixed = LEGAL_SUFFIXES.has(keyTokens(entity.name).at(-1) ?? '');
    if (letters !== undefined && !suffixed && this.#byInitials.get(letters)?.size === 1) {
      const acronym = this.#byId.get(entityIdFor(letters));
      if (acronym !== undefined && acronymLetters(acronym.name) === letters) {
        absorb(acronym.id, 'acronym', `"${acronym.name}" is the initials of "${entity.name}"`);
      }
    }
    const short = crossDocumentShortForm(keyTokens(entity.name), entity.type);
    if (short !== undefined && this.#byShortForm.get(short)?.size === 1) {
      const shortened = this.#byId.get(entityIdFor(short));
      if (
        shortened !== undefined &&
        entityKey(shortened.name) === short &&
        this.#aliasedBy(short, entity.type).every((id) => id === shortened.id || id === entity.id)
      ) {
        absorb(
          shortened.id,
          'short_form',
          `"${shortened.name}" is what "${entity.name}" is called for short, and no other known entity`,
        );
      }
    }
    const nameKey = entityKey(entity.name);
    for (const surface of cluster.surfaces) {
      const key = entityKey(surface);
      if (key === nameKey || wordCount(surface) >= wordCount(entity.name)) continue;
      const named = this.#byId.get(entityIdFor(surface));
      if (named === undefined || entityKey(named.name) !== key) continue;
      // A city named after its country or state ("Guatemala City", "Mexico City") is another place.
      if (entity.type === 'LOCATION' && nameKey.endsWith(' city') && nameKey.startsWith(`${key} `)) continue;
      // Only when no other entity goes by the surface: "Trump" once Donald and Melania are both known stays itself.
      const holders = this.#aliasedBy(surface, entity.type).filter((id) => id !== named.id);
      if (holders.length === 1 && holders[0] === entity.id) {
        absorb(named.id, 'alias', `an article called "${entity.name}" "${surface}"`);
      }
    }
    // A named force absorbs what markup called "<X> forces" of its country before it was known.
    const force = armedForcesOf(entity.name);
    if (force?.named === true && this.#roots([...(this.#byNamedForce.get(force.country) ?? [])]).length === 1) {
      for (const id of this.#byGenericForce.get(force.country) ?? []) {
        absorb(id, 'alias', `"${this.#byId.get(id)?.name ?? id}" are the armed forces "${entity.name}" names`);
      }
    }
    if (!this.#fuseIntoShorterPerson(entity, at)) this.#fuseAsSpelling(entity, at);
  }

  /**
   * A new person's name that ends with the whole name of one known person ("Recep Tayyip Erdoğan"
   * once "Tayyip Erdoğan" is known) is that person: the newcomer is fused into the known one, as a
   * spelling is. The known name stays canonical because a longer one is as often a title markup
   * kept ("Incumbent Alexander Lukashenko") as a fuller name.
   */
  #fuseIntoShorterPerson(entity: RegistryEntity, at: number): boolean {
    const tokens = keyTokens(entity.name);
    if (entity.type !== 'PERSON' || tokens.length < 3) return false;
    const known = new Map<string, string>();
    for (let words = 2; words < tokens.length; words++) {
      const tail = tokens.slice(-words).join(' ');
      const person = this.#byId.get(entityIdFor(tail));
      if (person === undefined || person.type !== 'PERSON' || entityKey(person.name) !== tail) continue;
      known.set(this.canonicalId(person.id), person.name);
    }
    if (known.size !== 1) return false;
    const [into, name] = [...known][0]!;
    if (into === entity.id || this.canonicalId(into) === entity.id) return false;
    this.#setFusion(entity.id, {
      into,
      rule: 'short_form',
      score: 1,
      evidence: `"${entity.name}" ends with the whole name of "${name}"`,
      decided_at: at,
      revoked: false,
    });
    return true;
  }

  #fuseAsSpelling(entity: RegistryEntity, at: number): void {
    const threshold = this.#spellingThreshold;
    const block = spellingBlock(entity.name, entity.type);
    if (threshold === undefined || block === undefined) return;
    // Forces are told apart by their country, and countries' words are often a letter or two apart
    // ("Malian" / "Malawian", "Austrian" / "Australian").
    const force = armedForcesOf(entity.name)?.country;
    const roots = new Map<string, { score: number; name: string }>();
    for (const id of this.#bySpelling.get(block) ?? []) {
      if (id === entity.id) continue;
      const other = this.#byId.get(id)!;
      if (other.type !== entity.type) continue;
      const otherForce = armedForcesOf(other.name)?.country;
      if (force !== otherForce && (force !== undefined || otherForce !== undefined)) continue;
      const score = spellingsAgree(entity.name, other.name, threshold);
      if (score === undefined) continue;
      const root = this.canonicalId(id);
      if (root === entity.id) continue;
      const best = roots.get(root);
      if (best === undefined || score > best.score) roots.set(root, { score, name: other.name });
    }
    // Two existing entities it could be a spelling of: it may be either, so it is neither.
    if (roots.size !== 1) return;
    const [into, { score, name }] = [...roots][0]!;
    this.#setFusion(entity.id, {
      into,
      rule: 'spelling',
      score: Math.round(score * 1000) / 1000,
      evidence: `"${entity.name}" is spelled like "${name}"`,
      decided_at: at,
      revoked: false,
    });
  }

  #setFusion(id: string, fusion: EntityFusion): void {
    const entity = this.#byId.get(id)!;
    this.#merge({ ...copy(entity), fusion });
  }

  #resolve(cluster: ClusterToLink): string {
    const own = entityIdFor(cluster.name);
    const others = (ids: Iterable<string>): string[] =>
      [...ids].filter((id) => id !== own && compatible(this.#byId.get(id)!.type, cluster.type));
    const aliased = others(this.#aliasedBy(cluster.name, cluster.type));
    // An alias two entities share ("Jordan") links nothing, by any rule.
    if (aliased.length > 1) return own;
    // A name known as the alias of one more complete entity is that entity ("Trump" → "Donald
    // Trump"), even when an article that said only "Trump" once gave it an entity of its own.
    const only = aliased[0];
    if (only !== undefined && wordCount(this.#byId.get(only)!.name) > wordCount(cluster.name)) return only;
    // An acronym whose expansion is a known entity, and only one ("FBI" once "Federal Bureau of
    // Investigation" is known; "ICC" stays itself while two courts and a cricket council share it).
    // Expansions fused into one count once ("Israel Defense Forces" into "Israeli Defense Forces").
    const letters = acronymLetters(cluster.name);
    const expansions = this.#roots(letters === undefined ? [] : others(this.#byInitials.get(letters) ?? []));
    if (expansions.length === 1) return expansions[0]!;
    // A group named in the plural is the entity its singular is known as, and the other way round
    // ("Alawites" → "Alawite", "Houthi" → "Houthis", "Palestinians" → the country "Palestinian" names).
    const number = otherNumber(cluster.name);
    const counterpart = number === undefined ? [] : this.#roots(others(this.#aliasedBy(number, cluster.type)));
    if (counterpart.length === 1) return counterpart[0]!;
    // "Israeli troops" (markup's "Israeli forces") are the one named force of the country known.
    const force = armedForcesOf(cluster.name);
    const named = force?.named !== false ? [] : this.#roots(others(this.#byNamedForce.get(force.country) ?? []));
    if (named.length === 1) return named[0]!;
    // The one known person this last name belongs to ("Rubio" → "Marco Rubio"), or company without
    // its legal suffix; several ("Trump": Donald, Melania) link nothing. Other short forms ("Senate")
    // only link within an article: across articles they are too often another country's.
    // Ids fused into one count once: "Tayyip Erdoğan" fused into "Recep Tayyip Erdoğan" leaves
    // "Erdoğan" one person's name.
    const abbreviated = this.#roots(others(this.#byShortForm.get(entityKey(cluster.name)) ?? []));
    if (abbreviated.length === 1) return abbreviated[0]!;
    // The one known person whose fuller name ends with this one ("Tayyip Erdoğan" → "Recep Tayyip Erdoğan").
    if (cluster.type === 'PERSON' || cluster.type === 'OTHER') {
      const fuller = this.#fullerPersons(keyTokens(cluster.name), own);
      if (fuller.length === 1) return fuller[0]!;
    }
    if (this.#byId.has(own)) return own;
    return only ?? this.#bySurface(cluster) ?? own;
  }

  /**
   * Canonical ids of the known people whose names end with these two or more words and are longer
   * ("Recep Tayyip Erdoğan" for "Tayyip Erdoğan", "Luiz Inácio Lula da Silva" for "Lula da Silva").
   */
  #fullerPersons(tokens: readonly string[], except: string): string[] {
    if (tokens.length < 2) return [];
    const found = new Set<string>();
    for (const id of this.#byShortForm.get(tokens.at(-1)!) ?? []) {
      const person = this.#byId.get(id);
      if (id === except || person === undefined || person.type !== 'PERSON') continue;
      const name = keyTokens(person.name);
      if (name.length > tokens.length && endsWith(name, tokens)) {
        found.add(this.canonicalId(id));
      }
    }
    return [...found];
  }

  /**
   * A surface alias may only stand for the whole cluster when the cluster is no more specific than
   * it: "Donald J. Trump" may join "Donald Trump" through "Trump", "Melania Trump" may not.
   */
  #bySurface(cluster: ClusterToLink): string | undefined {
    const nameKey = entityKey(cluster.name);
    for (const surface of cluster.surfaces) {
      if (entityKey(surface) === nameKey) continue;
      const bySurface = this.#aliasedBy(surface, cluster.type);
      if (bySurface.length === 1 && this.#containsName(bySurface[0]!, cluster.name)) return bySurface[0]!;
    }
    return undefined;
  }

  /** The distinct entities these ids are fused into. */
  #roots(ids: readonly string[]): string[] {
    return [...new Set(ids.map((id) => this.canonicalId(id)))];
  }

  /** Ids of the entities of a compatible type that have this surface as an alias. */
  #aliasedBy(surface: string, type: EntityType): string[] {
    const ids = this.#byAlias.get(entityKey(surface));
    if (ids === undefined) return [];
    return [...ids].filter((id) => {
      const entity = this.#byId.get(id);
      return entity !== undefined && compatible(entity.type, type);
    });
  }

  /** Whether every word of `name` occurs in the entity's canonical name ("Donald J. Trump" ⊇ "Trump"). */
  #containsName(id: string, name: string): boolean {
    const entity = this.#byId.get(id);
    if (entity === undefined) return false;
    const words = new Set(entityKey(entity.name).split(' '));
    return entityKey(name)
      .split(' ')
      .every((w) => words.has(w) || w.length === 1);
  }

  #merge(incoming: RegistryEntity, recordChange = true): RegistryEntity {
    const current = this.#byId.get(incoming.id);
    const merged =
      current === undefined
        ? normalise(incoming, this.#maxAliases)
        : join(current, normalise(incoming, this.#maxAliases), this.#maxAliases);
    if (current !== undefined && sameEntity(current, merged)) return current;
    if (current !== undefined) this.#unindex(current);
    this.#byId.set(merged.id, merged);
    this.#index(merged);
    if (recordChange) this.#changed.add(merged.id);
    return merged;
  }

  #index(entity: RegistryEntity): void {
    const letters = initials(entity.name);
    if (letters !== undefined) addTo(this.#byInitials, letters, entity.id);
    const short = crossDocumentShortForm(keyTokens(entity.name), entity.type);
    if (short !== undefined) addTo(this.#byShortForm, short, entity.id);
    const block = spellingBlock(entity.name, entity.type);
    if (block !== undefined) addTo(this.#bySpelling, block, entity.id);
    for (const alias of entity.aliases) addTo(this.#byAlias, entityKey(alias), entity.id);
    const force = armedForcesOf(entity.name);
    if (force !== undefined) addTo(force.named ? this.#byNamedForce : this.#byGenericForce, force.country, entity.id);
  }

  #unindex(entity: RegistryEntity): void {
    const letters = initials(entity.name);
    if (letters !== undefined) removeFrom(this.#byInitials, letters, entity.id);
    const short = crossDocumentShortForm(keyTokens(entity.name), entity.type);
    if (short !== undefined) removeFrom(this.#byShortForm, short, entity.id);
    const block = spellingBlock(entity.name, entity.type);
    if (block !== undefined) removeFrom(this.#bySpelling, block, entity.id);
    for (const alias of entity.aliases) removeFrom(this.#byAlias, entityKey(alias), entity.id);
    const force = armedForcesOf(entity.name);
    if (force !== undefined)
      removeFrom(force.named ? this.#byNamedForce : this.#byGenericForce, force.country, entity.id);
  }
}

function addTo(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids === undefined) index.set(key, new Set([id]));
  else ids.add(id);
}

function removeFrom(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  ids?.delete(id);
  if (ids?.size === 0) index.delete(key);
}

function wordCount(name: string): number {
  const key = entityKey(name);
  return key.length === 0 ? 0 : key.split(' ').length;
}

/**
 * The other grammatical number of a one-word group name with a demonym's ending: "Alawites" ↔
 * "Alawite", "Houthis" ↔ "Houthi", "Palestinians" ↔ "Palestinian". Undefined for other names: a
 * plain final "s" is too often part of a name ("Williams", "Athens", "Reuters").
 */
function otherNumber(name: string): string | undefined {
  if (!/^\p{Lu}\p{Ll}+$/u.test(name)) return undefined;
  const plural = /^(.{3,}(?:ite|ian|an|i))s$/u.exec(name);
  if (plural !== null) return plural[1];
  return /^.{3,}(?:ite|ian|an|i)$/u.test(name) ? `${name}s` : undefined;
}

/**
 * The country whose armed forces a name stands for: markup's "<X> forces" ("Israeli forces", for
 * "Israeli troops" or "the Israeli military"), or a named force, "<X> Defense Forces", "<X> Armed
 * Forces", "<X> Security Force", "<X> Army", "Armed Forces of <X>". X is keyed as its country when it
 * is a nationality word ("Israeli" → Israel) so that both sides meet. Branches ("Israeli Air Force")
 * and forces not of a country ("Syrian Democratic Forces", "Free Syrian Army") have none.
 */
function armedForcesOf(name: string): { country: string; named: boolean } | undefined {
  const generic = /^(.+) forces$/u.exec(name);
  const named =
    /^(.+?) (?:Defen[cs]e Forces?|Armed Forces|Security Forces?|Army|Military)$/u.exec(name) ??
    /^Armed Forces of (?:the )?(.+)$/u.exec(name);
  const modifier = generic?.[1] ?? named?.[1];
  if (modifier === undefined) return undefined;
  return { country: entityKey(countryOfNationality(modifier) ?? modifier), named: generic === null };
}

function compatible(a: EntityType, b: EntityType): boolean {
  return a === b || a === 'OTHER' || b === 'OTHER';
}

/** A registry type changes only from OTHER to something specific; a conflicting type is ignored. */
function refineType(current: EntityType, seen: EntityType): EntityType {
  return current === 'OTHER' ? seen : current;
}

/**
 * The join of two records of one id. Each field is a semilattice: type by a fixed rank, aliases as
 * a bounded union (the best variant per key, then the first `max` keys in a fixed order with the
 * name's key first), the name as the best variant of the name's key, min first seen, max last
 * seen, max mentions.
 */
function join(a: RegistryEntity, b: RegistryEntity, max: number): RegistryEntity {
  const nameKey = preferredNameKey(a, b);
  const aliases = boundedAliases([...a.aliases, ...b.aliases, a.name, b.name], nameKey, max);
  return {
    id: a.id,
    name: bestVariant([a.name, b.name, ...aliases].filter((s) => entityKey(s) === nameKey)),
    type: TYPE_RANK[a.type] >= TYPE_RANK[b.type] ? a.type : b.type,
    aliases,
    first_seen_at: Math.min(a.first_seen_at, b.first_seen_at),
    last_seen_at: Math.max(a.last_seen_at, b.last_seen_at),
    mentions: Math.max(a.mentions, b.mentions),
    // Records of the first schema version have no fusion.
    fusion: preferredFusion(a.fusion ?? null, b.fusion ?? null),
  };
}

/** One record on its own, in the form join produces (so a single record is a fixed point of join). */
function normalise(entity: RegistryEntity, max: number): RegistryEntity {
  return join(entity, entity, max);
}

/** Records of one id share the name's key; should they not (a hash collision), the smaller key wins. */
function preferredNameKey(a: RegistryEntity, b: RegistryEntity): string {
  const ka = entityKey(a.name);
  const kb = entityKey(b.name);
  return ka <= kb ? ka : kb;
}

function boundedAliases(surfaces: readonly string[], nameKey: string, max: number): string[] {
  const byKey = new Map<string, string[]>();
  for (const surface of surfaces) {
    const key = entityKey(surface);
    if (key.length === 0) continue;
    const variants = byKey.get(key) ?? [];
    variants.push(surface);
    byKey.set(key, variants);
  }
  const keys = [...byKey.keys()].sort((x, y) => aliasOrder(x, y, nameKey)).slice(0, max);
  return keys.map((key) => bestVariant(byKey.get(key)!));
}

/** The name's key first, then shorter keys (the useful aliases: "Trump", "FBI"), then code-unit order. */
function aliasOrder(x: string, y: string, nameKey: string): number {
  if (x === nameKey || y === nameKey) return x === nameKey ? (y === nameKey ? 0 : -1) : 1;
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
}

/**
 * The display form among surfaces with one key: mixed case over all-caps over lower case, then
 * more non-ASCII letters ("Zürich" over "Zurich"), then longer ("U.S." over "US"), then code-unit order.
 */
function bestVariant(variants: readonly string[]): string {
  let best = variants[0] ?? '';
  for (const v of variants.slice(1)) if (variantOrder(v, best) < 0) best = v;
  return best;
}

function variantOrder(x: string, y: string): number {
  return caseRank(y) - caseRank(x) || nonAscii(y) - nonAscii(x) || y.length - x.length || (x < y ? -1 : x > y ? 1 : 0);
}

function caseRank(s: string): number {
  let upper = false;
  let lower = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Outside ASCII, Unicode's letter categories decide (a hot path: ASCII names skip the regexes).
    if (c > 0x7f) return unicodeCaseRank(s);
    if (c >= 65 && c <= 90) upper = true;
    else if (c >= 97 && c <= 122) lower = true;
  }
  return upper && lower ? 2 : upper ? 1 : 0;
}

function unicodeCaseRank(s: string): number {
  const upper = /\p{Lu}/u.test(s);
  const lower = /\p{Ll}/u.test(s);
  return upper && lower ? 2 : upper ? 1 : 0;
}

function nonAscii(s: string): number {
  let n = 0;
  for (const ch of s) if (ch.charCodeAt(0) > 0x7f) n++;
  return n;
}

function sameEntity(a: RegistryEntity, b: RegistryEntity): boolean {
  return (
    a.id === b.id &&
    a.name === b.name &&
    a.type === b.type &&
    a.first_seen_at === b.first_seen_at &&
    a.last_seen_at === b.last_seen_at &&
    a.mentions === b.mentions &&
    sameFusion(a.fusion ?? null, b.fusion ?? null) &&
    a.aliases.length === b.aliases.length &&
    a.aliases.every((alias, i) => alias === b.aliases[i])
  );
}

function copy(entity: RegistryEntity): RegistryEntity {
  return { ...entity, aliases: [...entity.aliases], fusion: entity.fusion ? { ...entity.fusion } : null };
}

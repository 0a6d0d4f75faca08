/**
 * Entity fusion across documents (EventRAG §2.1): deciding that two registry entities are one under
 * different names, after both exist — the acronym met before its expansion ("IDF", then "Israel
 * Defense Forces"), the last name before the full name, a spelling of a transliterated name ("Khan
 * Younis" / "Khan Yunis"). Linking (entity-registry.ts) already sends a *new* mention to the right
 * entity when the longer form is known; fusion repairs the entities made before it was.
 *
 * A decision is kept on the fused entity (`fusion`), with its rule, score and evidence, never by
 * rewriting ids: records already written keep the id they had, readers resolve it through the
 * registry, and a wrong fusion is undone by revoking it. Pure: no I/O.
 */
import { distance } from 'fastest-levenshtein';
import type { EntityFusion, EntityType } from '../../schemas/records.generated.js';
import { entityKey } from './entity-id.js';

export type { EntityFusion } from '../../schemas/records.generated.js';

/**
 * Least name similarity (1 − edit distance / longer key) for the spelling rule. Chosen on the
 * Wikipedia Current Events 2025 Q1 links (`npm run eval -- markup`): see the README's markup figures.
 */
export const DEFAULT_SPELLING_THRESHOLD = 0.8;

/** Keys shorter than this are too short for a spelling to say anything ("Iran" / "Iraq"). */
const SPELLING_MIN_KEY_LENGTH = 7;

/** Fusion rules, in the order they are tried. */
export type FusionRule = 'acronym' | 'short_form' | 'alias' | 'spelling' | 'operator';

/** Similarity of two names' keys in [0, 1]: 1 − Levenshtein distance / length of the longer key. */
export function nameSimilarity(a: string, b: string): number {
  const ka = entityKey(a);
  const kb = entityKey(b);
  const longer = Math.max(ka.length, kb.length);
  return longer === 0 ? 0 : 1 - distance(ka, kb) / longer;
}

/**
 * Where spelling candidates are looked up: type, word count and the first letter of every word must
 * agree ("khan younis" and "khan yunis" → `LOCATION|2|ky`). Undefined for names too short to fuse by
 * spelling, and for OTHER (an unknown type says too little to risk it).
 */
export function spellingBlock(name: string, type: EntityType): string | undefined {
  if (type === 'OTHER') return undefined;
  const key = entityKey(name);
  if (key.length < SPELLING_MIN_KEY_LENGTH) return undefined;
  const words = key.split(' ');
  // Digits tell apart what spelling would join ("Falcon 9" / "Falcon 8", "Area 51" / "Area 52").
  if (/\p{N}/u.test(key)) return undefined;
  return `${type}|${words.length}|${words.map((w) => w.charAt(0)).join('')}`;
}

/**
 * Whether two spellings may be one name: similar enough, and not two names that differ in a whole
 * word's worth of letters at one place (one word may differ by a letter or two, "Younis"/"Yunis";
 * "North Korea"/"South Korea" differ in a whole word and share a block only by accident).
 */
export function spellingsAgree(a: string, b: string, threshold: number): number | undefined {
  const wa = entityKey(a).split(' ');
  const wb = entityKey(b).split(' ');
  if (wa.length !== wb.length) return undefined;
  for (let i = 0; i < wa.length; i++) {
    const x = wa[i]!;
    const y = wb[i]!;
    if (x === y) continue;
    // Each differing word must itself read as a spelling of the other.
    if (
      Math.min(x.length, y.length) < 4 ||
      distance(x, y) > Math.max(1, Math.floor(Math.max(x.length, y.length) / 4))
    ) {
      return undefined;
    }
  }
  const score = nameSimilarity(a, b);
  return score >= threshold ? score : undefined;
}

/**
 * The order in which two decisions about one entity settle, so that replicas agree however the
 * records reach them: an operator's word over a rule's, then a revocation over a fusion (undoing is
 * final until an operator fuses again later), then the later decision for an operator's and the
 * earlier one for a rule's (a first decision stands), then the text of the records.
 */
export function preferredFusion(a: EntityFusion | null, b: EntityFusion | null): EntityFusion | null {
  if (a === null) return b;
  if (b === null) return a;
  return compareFusions(a, b) <= 0 ? a : b;
}

function compareFusions(a: EntityFusion, b: EntityFusion): number {
  const byOperator = Number(b.rule === 'operator') - Number(a.rule === 'operator');
  if (byOperator !== 0) return byOperator;
  if (a.rule === 'operator' && a.decided_at !== b.decided_at) return b.decided_at - a.decided_at;
  const byRevocation = Number(b.revoked) - Number(a.revoked);
  if (byRevocation !== 0) return byRevocation;
  if (a.decided_at !== b.decided_at) return a.decided_at - b.decided_at;
  const ka = JSON.stringify([a.into, a.rule, a.score, a.evidence]);
  const kb = JSON.stringify([b.into, b.rule, b.score, b.evidence]);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export function sameFusion(a: EntityFusion | null, b: EntityFusion | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.into === b.into &&
    a.rule === b.rule &&
    a.score === b.score &&
    a.evidence === b.evidence &&
    a.decided_at === b.decided_at &&
    a.revoked === b.revoked
  );
}

/** A fusion that is in force (decided and not revoked). */
export function activeFusion(fusion: EntityFusion | null | undefined): EntityFusion | undefined {
  return fusion && !fusion.revoked ? fusion : undefined;
}

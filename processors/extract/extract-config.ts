import { z } from 'zod';
import type { InteractionVariant } from '../../schemas/records.generated.js';
import { DEFAULT_PAIR_BATCHING, type PairBatchOptions } from './pair-batches.js';
import { DEFAULT_PAIR_SELECTION, type PairSelectionOptions } from './pair-selection.js';
import { DEFAULT_BACKFILL, type BackfillOptions } from './spike-backfill.js';

/**
 * Extraction settings from the environment:
 *
 *   NEON_EXTRACT_VARIANTS=M1,M2        which NEON variants run (the offline extractor runs M1 only)
 *   NEON_EXTRACT_TARGETS=gated|all     gated: configured subjects ∪ spiking entities (default with an
 *                                      LLM); all: every entity (default offline, where calls are free)
 *   NEON_EXTRACT_SUBJECTS=a,b          configured subjects: entity ids (e-…) or names
 *   NEON_EXTRACT_M2_K                  chunks per M2 batch (the paper's k)
 *   NEON_EXTRACT_M2_LINGER_MS          how long the stream is quiet (no new chunk) before open M2
 *                                      batches are extracted as they stand; batches themselves close
 *                                      by count, event time and the chunks waiting (pair-batches.ts)
 *   NEON_EXTRACT_M2_OBJECTS            objects selected per subject by TF-IDF
 *   NEON_EXTRACT_M2_MIN_COOCCURRENCES  chunks a pair must share before it is selected
 *   NEON_EXTRACT_M2_WINDOW_DAYS        event-time window of the co-occurrence statistics
 *   NEON_EXTRACT_BACKFILL_DAYS         back-fill on spikes: how far back an entity's chunks are kept
 *                                      to be extracted once it spikes (default 3; 0 turns it off)
 *   NEON_EXTRACT_BACKFILL_MAX_CHUNKS   back-filled chunks per entity and episode, at most (default 50)
 *   NEON_EXTRACT_BACKFILL_CONCURRENCY  back-fill calls at once (default 2), beside forward extraction
 *
 * Every problem is reported at once.
 */
const positiveInt = z.coerce.number().int().positive();

const envSchema = z.object({
  NEON_EXTRACT_VARIANTS: z
    .string()
    .default('M1,M2')
    .transform((value) =>
      value
        .split(',')
        .map((v) => v.trim().toUpperCase())
        .filter((v) => v.length > 0),
    )
    .pipe(z.array(z.enum(['M1', 'M2'])).min(1, 'at least one of M1, M2')),
  NEON_EXTRACT_TARGETS: z.enum(['gated', 'all']).optional(),
  NEON_EXTRACT_SUBJECTS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  NEON_EXTRACT_M2_K: positiveInt.max(32).optional(),
  NEON_EXTRACT_M2_LINGER_MS: z.coerce.number().int().min(0).max(600_000).optional(),
  NEON_EXTRACT_M2_OBJECTS: positiveInt.max(50).optional(),
  NEON_EXTRACT_M2_MIN_COOCCURRENCES: positiveInt.optional(),
  NEON_EXTRACT_M2_WINDOW_DAYS: z.coerce.number().positive().max(365).optional(),
  NEON_EXTRACT_BACKFILL_DAYS: z.coerce.number().min(0).max(30).optional(),
  NEON_EXTRACT_BACKFILL_MAX_CHUNKS: z.coerce.number().int().min(0).max(10_000).optional(),
  NEON_EXTRACT_BACKFILL_CONCURRENCY: positiveInt.max(64).optional(),
});

export interface ExtractConfig {
  variants: InteractionVariant[];
  /** Undefined: the default for the extractor (gated with an LLM, all offline). */
  targets: 'gated' | 'all' | undefined;
  subjects: string[];
  batching: PairBatchOptions;
  pairSelection: PairSelectionOptions;
  /** Back-fill on spikes (spike-backfill.ts); DEFAULT_BACKFILL when absent. */
  backfill?: BackfillOptions;
}

export function extractConfigFromEnv(
  env: Record<string, string | undefined>,
): { ok: true; config: ExtractConfig } | { ok: false; problems: string[] } {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`) };
  }
  const e = parsed.data;
  return {
    ok: true,
    config: {
      variants: [...new Set(e.NEON_EXTRACT_VARIANTS)],
      targets: e.NEON_EXTRACT_TARGETS,
      subjects: e.NEON_EXTRACT_SUBJECTS,
      batching: {
        ...DEFAULT_PAIR_BATCHING,
        k: e.NEON_EXTRACT_M2_K ?? DEFAULT_PAIR_BATCHING.k,
        quietMs: e.NEON_EXTRACT_M2_LINGER_MS ?? DEFAULT_PAIR_BATCHING.quietMs,
      },
      pairSelection: {
        maxObjects: e.NEON_EXTRACT_M2_OBJECTS ?? DEFAULT_PAIR_SELECTION.maxObjects,
        minCooccurrences: e.NEON_EXTRACT_M2_MIN_COOCCURRENCES ?? DEFAULT_PAIR_SELECTION.minCooccurrences,
        windowMs:
          e.NEON_EXTRACT_M2_WINDOW_DAYS === undefined
            ? DEFAULT_PAIR_SELECTION.windowMs
            : Math.round(e.NEON_EXTRACT_M2_WINDOW_DAYS * 86_400_000),
      },
      backfill: {
        ...DEFAULT_BACKFILL,
        lookbackMs:
          e.NEON_EXTRACT_BACKFILL_DAYS === undefined
            ? DEFAULT_BACKFILL.lookbackMs
            : Math.round(e.NEON_EXTRACT_BACKFILL_DAYS * 86_400_000),
        maxChunksPerEpisode: e.NEON_EXTRACT_BACKFILL_MAX_CHUNKS ?? DEFAULT_BACKFILL.maxChunksPerEpisode,
        concurrency: e.NEON_EXTRACT_BACKFILL_CONCURRENCY ?? DEFAULT_BACKFILL.concurrency,
      },
    },
  };
}

/**
 * Entity fusion by name embeddings with context (EventRAG §2.1: candidate entities of one type are
 * merged when their names' embeddings, with context, are closer than θ), measured against the human
 * links of Wikipedia Current Events 2025 Q1 before it is let into the registry.
 *
 *   npm run eval -- fusion [--limit N]
 *
 * The quarter is marked with one registry (its rule fusions — acronyms, short forms, aliases,
 * spellings — in force). Each canonical entity gets the Wikipedia title most of its mentions' links
 * name. Every pair of two such entities of the same type (not OTHER) is a candidate: a pair with one
 * title should have been fused (what the rules left split), a pair with two titles should not. For
 * the name alone and for the name with the sentence of its first mention, embedded with the
 * configured model, the pairs at cosine ≥ θ are what embedding fusion would add: their precision
 * (same title) and recall (of the split pairs) per θ. Writes `eval/results/fusion.json`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configuredEmbedder } from '../bin/commands/cluster-services.js';
import { devDataPath, missingDevDataMessage } from '../devkit/dev-data.js';
import type { Embedder } from '../processors/embed/embedder.js';
import { EntityRegistry } from '../processors/markup/entity-registry.js';
import { markArticle } from '../processors/markup/mark-article.js';
import {
  currentEventArticleInput,
  loadWikipediaCurrentEvents,
  type CurrentEventItem,
} from '../streams/archives/load-wikipedia-current-events.js';
import { CachedEmbedder, vectorCacheDir } from './cached-embedder.js';
import { currentEventArticle } from './current-event-articles.js';
import { entityTitles } from './human-bursts.js';

const DATASET = 'samples/wikipedia-current-events-2025q1';
const CONTEXT_CHARACTERS = 300;
const THRESHOLDS = [0.8, 0.82, 0.84, 0.86, 0.88, 0.9, 0.92, 0.94, 0.96, 0.98];

interface Candidate {
  id: string;
  name: string;
  type: string;
  title: string;
  context: string;
}

interface Sweep {
  threshold: number;
  fused: number;
  correct: number;
  precision: number | null;
  recall: number;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function normalised(vector: Float32Array): Float32Array {
  const norm = Math.sqrt(dot(vector, vector)) || 1;
  return vector.map((x) => x / norm);
}

/** The canonical entities with a title, each with the sentence of its first mention. */
function candidates(items: readonly CurrentEventItem[]): Candidate[] {
  const articles = items.map(currentEventArticle).sort((a, b) => a.published_at - b.published_at);
  const registry = new EntityRegistry();
  const marked = articles.map((article) => markArticle(article, registry));
  const titles = entityTitles(marked, new Map(items.map((i) => [currentEventArticleInput(i).id!, i])));
  const votes = new Map<string, Map<string, number>>();
  const context = new Map<string, string>();
  for (const m of marked) {
    for (const mention of m.mentions) {
      const id = registry.canonicalId(mention.entity_id);
      const sentence = m.sentences[mention.sentence_index];
      if (!context.has(id) && sentence) context.set(id, m.article.text.slice(sentence.start, sentence.end));
      const title = titles.get(mention.entity_id);
      if (title === undefined) continue;
      const byTitle = votes.get(id) ?? new Map<string, number>();
      byTitle.set(title, (byTitle.get(title) ?? 0) + 1);
      votes.set(id, byTitle);
    }
  }
  const found: Candidate[] = [];
  for (const [id, byTitle] of votes) {
    const entity = registry.get(id);
    if (!entity || entity.type === 'OTHER') continue;
    const [title] = [...byTitle].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    found.push({ id, name: entity.name, type: entity.type, title, context: context.get(id) ?? '' });
  }
  return found.sort((a, b) => a.id.localeCompare(b.id));
}

async function sweep(
  entities: readonly Candidate[],
  texts: readonly string[],
  embedder: Embedder,
): Promise<{ sweeps: Sweep[]; split: number; examples: string[] }> {
  const vectors = (await embedder.embed(texts, 'document')).map(normalised);
  const pairs: { cos: number; same: boolean; a: number; b: number }[] = [];
  let split = 0;
  for (let a = 0; a < entities.length; a++) {
    for (let b = a + 1; b < entities.length; b++) {
      if (entities[a]!.type !== entities[b]!.type) continue;
      const same = entities[a]!.title === entities[b]!.title;
      if (same) split += 1;
      const cos = dot(vectors[a]!, vectors[b]!);
      if (cos >= THRESHOLDS[0]!) pairs.push({ cos, same, a, b });
    }
  }
  const sweeps = THRESHOLDS.map((threshold) => {
    const fused = pairs.filter((p) => p.cos >= threshold);
    const correct = fused.filter((p) => p.same).length;
    return {
      threshold,
      fused: fused.length,
      correct,
      precision: fused.length === 0 ? null : correct / fused.length,
      recall: split === 0 ? 0 : correct / split,
    };
  });
  const examples = pairs
    .sort((x, y) => y.cos - x.cos)
    .slice(0, 15)
    .map(
      (p) =>
        `${p.same ? '✓' : '✗'} ${p.cos.toFixed(3)} ${entities[p.a]!.name} (${entities[p.a]!.title}) ~ ${entities[p.b]!.name} (${entities[p.b]!.title})`,
    );
  return { sweeps, split, examples };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const limitArg = args.indexOf('--limit');
  const limit = limitArg >= 0 ? Number(args[limitArg + 1]) : Infinity;
  const base = devDataPath(DATASET);
  if (base === undefined) {
    console.log(missingDevDataMessage(DATASET));
    return;
  }
  const items = loadWikipediaCurrentEvents(join(base, 'daily_markdown')).slice(0, limit);
  const entities = candidates(items);
  const model = await configuredEmbedder();
  const embedder = new CachedEmbedder(model, vectorCacheDir());
  try {
    const byName = await sweep(
      entities,
      entities.map((e) => e.name),
      embedder,
    );
    const withContext = await sweep(
      entities,
      entities.map((e) => `${e.name}: ${e.context.slice(0, CONTEXT_CHARACTERS)}`),
      embedder,
    );
    console.log(
      `${entities.length} titled entities after the rule fusions (${DATASET}, ${items.length} items); ` +
        `${byName.split} same-type pairs share a title (what the rules left split); model ${embedder.model}`,
    );
    for (const [label, result] of [
      ['name', byName],
      ['name + first sentence', withContext],
    ] as const) {
      console.log(`\n${label}: θ, pairs fused, precision, recall of the split pairs`);
      for (const s of result.sweeps) {
        const precision = s.precision === null ? '  n/a' : `${(100 * s.precision).toFixed(1)}%`;
        console.log(
          `  θ ${s.threshold.toFixed(2)}  ${String(s.fused).padStart(5)}  ${precision.padStart(6)} (${s.correct})  ${(100 * s.recall).toFixed(1)}%`,
        );
      }
      console.log(`  closest pairs:\n    ${result.examples.join('\n    ')}`);
    }
    const out = join(import.meta.dirname, 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'fusion.json'),
      `${JSON.stringify(
        {
          dataset: DATASET,
          model: embedder.model,
          entities: entities.length,
          split_pairs: byName.split,
          name: byName.sweeps,
          name_with_context: withContext.sweeps,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await embedder.close();
  }
}

await main();

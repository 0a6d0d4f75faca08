/**
 * The unique chunks (and the entities markup found, and the interactions of a deterministic
 * extractor) of a set of articles, kept on disk between evaluation runs: markup and offline
 * extraction of a few thousand real articles take minutes of CPU, and a rerun that only tries
 * another retrieval setting would redo them for nothing.
 *
 * The key is safe rather than clever: the SHA-256 of the articles (all fields except `fetched_at`,
 * which only says when intake ran and which no later stage reads), of the extractor's name, and of
 * every file the preparation could depend on — every module the preparation and the extractor
 * import, transitively (type-only imports too), every file under `processors/` and `schemas/` that
 * is not a module (data a module may read at run time) and `package-lock.json` (the versions of
 * compromise and the other libraries). Any edit there, even an unrelated one, prepares afresh: a
 * stale cache would silently measure old code. An edit to a stage the preparation never imports
 * (spike detection, retrieval) keeps it. An LLM's extraction is not kept here (its replies are, in the LLM
 * response cache). Entries are gzipped JSON lines, written to a temporary name and renamed (a
 * crash leaves no half entry), and only the newest few are kept.
 */
import { createHash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createGunzip, createGzip } from 'node:zlib';
import ts from 'typescript';
import type { LinkableEntity } from '../processors/query/reformulate-query.js';
import type { Article, Chunk, Interaction } from '../schemas/records.generated.js';
import { markChunkDedupe } from '../devkit/process-articles.js';

const REPOSITORY_ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** The modules the preparation runs, relative to the repository: what they import is followed. */
const PREPARATION_ENTRIES = [
  'devkit/process-articles.ts',
  'eval/prepared-chunks-cache.ts',
  'processors/extract/extraction-plan.ts',
  'processors/extract/interaction-extractor.ts',
  'processors/extract/extraction-targets.ts',
];
/** Where data files a module may read live, and the library versions. */
const DATA_ROOTS = ['processors', 'schemas', 'package-lock.json'];
const KEEP_ENTRIES = 4;

export interface PreparedChunks {
  chunks: Chunk[];
  /** The registry's entities after the articles, as the query linker takes them. */
  entities: LinkableEntity[];
}

export interface Prepared extends PreparedChunks {
  /** Present when an extractor was given. */
  interactions?: Interaction[];
  fromCache: boolean;
}

/**
 * An extraction the cache may keep: `id` names it (a deterministic extractor and its settings);
 * undefined `id` runs it every time.
 */
export interface CacheableExtraction {
  id: string | undefined;
  run: (chunks: readonly Chunk[]) => Promise<Interaction[]>;
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** The TypeScript modules `entries` import, transitively, with the entries (relative imports only). */
export function importClosure(entries: readonly string[]): string[] {
  const seen = new Set<string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      pending.push(resolve(dirname(file), fileName).replace(/\.js$/, '.ts'));
    }
  }
  return [...seen].sort();
}

/** SHA-256 over the path and content of every file the preparation could depend on. */
export function preparationCodeVersion(
  root = REPOSITORY_ROOT,
  entries: readonly string[] = PREPARATION_ENTRIES,
  dataRoots: readonly string[] = DATA_ROOTS,
): string {
  const modules = importClosure(entries.map((e) => join(root, e)));
  const data = dataRoots.flatMap((r) => filesUnder(join(root, r))).filter((file) => !file.endsWith('.ts'));
  const hash = createHash('sha256');
  for (const file of [...new Set([...modules, ...data])].sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** The key of a preparation: the code version, the extraction kept, and the articles as the stages see them. */
export function preparationKey(articles: readonly Article[], codeVersion: string, extractionId = ''): string {
  const hash = createHash('sha256').update(codeVersion).update('\0').update(extractionId).update('\0');
  for (const article of articles) {
    hash.update(JSON.stringify({ ...article, fetched_at: 0 })).update('\n');
  }
  return hash.digest('hex');
}

/** Markup, chunking and dedupe of the articles (the product's own), as the stages would run them. */
export function prepareChunks(articles: readonly Article[]): PreparedChunks {
  const { registry, chunks } = markChunkDedupe(articles);
  const entities = [...registry.entities()].map((e) => ({
    id: e.id,
    name: e.name,
    aliases: e.aliases,
    mentions: e.mentions,
  }));
  return { chunks, entities };
}

type Line = { chunk: Chunk } | { entity: LinkableEntity } | { interaction: Interaction };

async function writeEntry(file: string, prepared: PreparedChunks, interactions: Interaction[] | undefined) {
  const temporary = `${file}.${process.pid}.tmp`;
  const gzip = createGzip({ level: 1 });
  const done = new Promise<void>((resolveDone, reject) => {
    const out = createWriteStream(temporary);
    out.on('error', reject).on('finish', resolveDone);
    gzip.on('error', reject).pipe(out);
  });
  const lines: Line[][] = [
    prepared.chunks.map((chunk) => ({ chunk })),
    prepared.entities.map((entity) => ({ entity })),
    (interactions ?? []).map((interaction) => ({ interaction })),
  ];
  for (const group of lines) {
    for (const line of group) {
      if (!gzip.write(`${JSON.stringify(line)}\n`)) await once(gzip, 'drain');
    }
  }
  gzip.end(`${JSON.stringify({ complete: true })}\n`);
  await done;
  renameSync(temporary, file);
}

async function readEntry(file: string): Promise<(PreparedChunks & { interactions: Interaction[] }) | undefined> {
  const entry = { chunks: [] as Chunk[], entities: [] as LinkableEntity[], interactions: [] as Interaction[] };
  let complete = false;
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const text of lines) {
    const line = JSON.parse(text) as Partial<Record<'chunk' | 'entity' | 'interaction' | 'complete', unknown>>;
    if (line.chunk) entry.chunks.push(line.chunk as Chunk);
    else if (line.entity) entry.entities.push(line.entity as LinkableEntity);
    else if (line.interaction) entry.interactions.push(line.interaction as Interaction);
    else if (line.complete === true) complete = true;
  }
  return complete ? entry : undefined;
}

/**
 * `prepareChunks(articles)` and, if given, the extraction's interactions: read from `dir` when this
 * code already prepared these articles, else computed and stored there. `dir` undefined: no cache.
 */
export async function cachedPrepare(
  articles: readonly Article[],
  dir: string | undefined,
  extraction?: CacheableExtraction,
  codeVersion?: string,
): Promise<Prepared> {
  const compute = async (): Promise<Prepared> => {
    const prepared = prepareChunks(articles);
    const interactions = extraction ? await extraction.run(prepared.chunks) : undefined;
    return { ...prepared, ...(interactions ? { interactions } : {}), fromCache: false };
  };
  if (dir === undefined) return compute();
  const keptExtraction = extraction?.id;
  const file = join(
    dir,
    `${preparationKey(articles, codeVersion ?? preparationCodeVersion(), keptExtraction)}.jsonl.gz`,
  );
  if (existsSync(file)) {
    const stored = await readEntry(file).catch(() => undefined);
    if (stored) {
      const interactions =
        extraction === undefined
          ? undefined
          : keptExtraction === undefined
            ? await extraction.run(stored.chunks)
            : stored.interactions;
      return {
        chunks: stored.chunks,
        entities: stored.entities,
        ...(interactions ? { interactions } : {}),
        fromCache: true,
      };
    }
  }
  const prepared = await compute();
  mkdirSync(dir, { recursive: true });
  await writeEntry(file, prepared, keptExtraction === undefined ? undefined : prepared.interactions);
  const entries = readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl.gz'))
    .map((name) => ({ path: join(dir, name), at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of entries.slice(KEEP_ENTRIES)) unlinkSync(old.path);
  // A temporary entry an hour old belongs to a run that died.
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.tmp'))) {
    const path = join(dir, name);
    if (Date.now() - statSync(path).mtimeMs > 60 * 60 * 1000) unlinkSync(path);
  }
  return prepared;
}

import type { AvroNode, RecordNode } from './avro-schema-files.js';
import type { RecordName, RecordTypes } from './records.generated.js';

/**
 * What Avro cannot say about a record: a string that is an id must not be empty, a timestamp must
 * be a plausible instant, a URL must be http(s). A record that breaks these rules is dead-lettered
 * at the first stage that reads it instead of surfacing later as an Elasticsearch mapping error, a
 * 1970 spike or a citation link to nowhere.
 *
 * Most rules follow from the schema itself, so a new field is covered without code:
 * - `long` with `logicalType: timestamp-millis` → between 1900-01-01 and two days from now
 *   (clock skew between hosts, feeds that stamp articles slightly ahead); except a field named
 *   `refers_to`, a time the article's text speaks of ("in 1066", "by 2043"), which only has to be
 *   a real calendar instant between the years 1000 and 9999;
 * - a string field named `id` or `*_id`, and the items of `*_ids` → non-empty after trimming and at
 *   most 512 UTF-8 bytes (Elasticsearch's limit on `_id`, and ids become `_id`s);
 * - a string field named `url` or `*_url`, and the items of `urls` → an absolute http(s) URL;
 * - `double` and `float` → finite.
 * Rules that relate fields to each other are written per record below; they apply to values in the
 * shape of the current schema only.
 */

export interface SemanticProblem {
  /** Dotted path of the offending field, array indices and map keys included (`mentions.3.start`). */
  readonly path: string;
  readonly message: string;
}

export interface SemanticContext {
  /** Milliseconds since the epoch; injected so tests do not depend on the wall clock. */
  readonly now: number;
}

export const EARLIEST_PLAUSIBLE_TIME = Date.UTC(1900, 0, 1);
export const FUTURE_TOLERANCE_MS = 2 * 24 * 60 * 60 * 1000;
export const MAX_ID_BYTES = 512;
export const MAX_K = 1000;
export const MAX_WINDOW_DAYS = 366;

type Role = 'id' | 'url' | 'content_time' | undefined;
/** What a field's name says about its value, and about its items when it is an array. */
interface Roles {
  readonly value: Role;
  readonly items: Role;
}
type Check = (value: unknown, path: string, ctx: SemanticContext, problems: SemanticProblem[]) => void;

const NO_ROLES: Roles = { value: undefined, items: undefined };

function rolesOf(fieldName: string): Roles {
  const value: Role =
    fieldName === 'id' || fieldName.endsWith('_id')
      ? 'id'
      : fieldName === 'url' || fieldName.endsWith('_url')
        ? 'url'
        : fieldName === 'refers_to'
          ? 'content_time'
          : undefined;
  const items: Role = fieldName.endsWith('_ids')
    ? 'id'
    : fieldName === 'urls' || fieldName.endsWith('_urls')
      ? 'url'
      : undefined;
  return { value, items };
}

function join(path: string, key: string | number): string {
  return path === '' ? String(key) : `${path}.${key}`;
}

export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol, hostname } = new URL(value);
  return (protocol === 'http:' || protocol === 'https:') && hostname !== '';
}

const noCheck: Check = () => undefined;

const EARLIEST_CONTENT_TIME = Date.UTC(1000, 0, 1);
const LATEST_CONTENT_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function checkContentTime(value: unknown, path: string, _ctx: SemanticContext, problems: SemanticProblem[]): void {
  if (typeof value !== 'number') return;
  if (value >= EARLIEST_CONTENT_TIME && value <= LATEST_CONTENT_TIME) return;
  problems.push({ path, message: `${value} is not a time between the years 1000 and 9999` });
}

function checkTimestamp(value: unknown, path: string, ctx: SemanticContext, problems: SemanticProblem[]): void {
  if (typeof value !== 'number') return;
  if (value >= EARLIEST_PLAUSIBLE_TIME && value <= ctx.now + FUTURE_TOLERANCE_MS) return;
  const when = Math.abs(value) <= 8.64e15 ? new Date(value).toISOString() : 'out of range';
  problems.push({
    path,
    message: `${value} (${when}) is not a plausible time: must be between 1900-01-01 and 2 days from now`,
  });
}

function checkFinite(value: unknown, path: string, _ctx: SemanticContext, problems: SemanticProblem[]): void {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    problems.push({ path, message: `must be a finite number, got ${value}` });
  }
}

function checkId(value: unknown, path: string, _ctx: SemanticContext, problems: SemanticProblem[]): void {
  if (typeof value !== 'string') return;
  if (value.trim() === '') problems.push({ path, message: 'must be a non-empty id' });
  else if (Buffer.byteLength(value, 'utf8') > MAX_ID_BYTES) {
    problems.push({ path, message: `must be at most ${MAX_ID_BYTES} bytes as UTF-8` });
  }
}

function checkUrl(value: unknown, path: string, _ctx: SemanticContext, problems: SemanticProblem[]): void {
  if (typeof value === 'string' && !isHttpUrl(value)) {
    problems.push({ path, message: 'must be an absolute http(s) URL' });
  }
}

function compile(node: AvroNode, roles: Roles): Check {
  switch (node.kind) {
    case 'primitive':
      if (node.type === 'long' && node.logicalType === 'timestamp-millis') {
        return roles.value === 'content_time' ? checkContentTime : checkTimestamp;
      }
      if (node.type === 'double' || node.type === 'float') return checkFinite;
      if (node.type === 'string' && roles.value === 'id') return checkId;
      if (node.type === 'string' && roles.value === 'url') return checkUrl;
      return noCheck;
    case 'record': {
      const fields = node.fields
        .map((field) => ({ name: field.name, check: compile(field.type, rolesOf(field.name)) }))
        .filter((field) => field.check !== noCheck);
      if (fields.length === 0) return noCheck;
      return (value, path, ctx, problems) => {
        if (typeof value !== 'object' || value === null) return;
        const record = value as Record<string, unknown>;
        for (const field of fields) field.check(record[field.name], join(path, field.name), ctx, problems);
      };
    }
    case 'array': {
      const items = compile(node.items, { value: roles.items, items: undefined });
      if (items === noCheck) return noCheck;
      return (value, path, ctx, problems) => {
        if (!Array.isArray(value)) return;
        value.forEach((item: unknown, i) => {
          items(item, join(path, i), ctx, problems);
        });
      };
    }
    case 'map': {
      const values = compile(node.values, NO_ROLES);
      if (values === noCheck) return noCheck;
      return (value, path, ctx, problems) => {
        if (typeof value !== 'object' || value === null) return;
        for (const [key, v] of Object.entries(value)) values(v, join(path, key), ctx, problems);
      };
    }
    case 'union': {
      const branches = node.branches.map((branch) => compile(branch, roles)).filter((check) => check !== noCheck);
      if (branches.length === 0) return noCheck;
      // Every check ignores values of other types, so running all branches checks the one that matches.
      return (value, path, ctx, problems) => {
        for (const branch of branches) branch(value, path, ctx, problems);
      };
    }
    case 'enum':
    case 'fixed':
      return noCheck;
  }
}

/** The schema-derived checks for values of one record schema, current or historical. */
export function compileSchemaChecks(root: RecordNode): (value: unknown, ctx: SemanticContext) => SemanticProblem[] {
  const check = compile(root, NO_ROLES);
  return (value, ctx) => {
    const problems: SemanticProblem[] = [];
    check(value, '', ctx, problems);
    return problems;
  };
}

type RecordRule<N extends RecordName> = (value: RecordTypes[N], problems: SemanticProblem[]) => void;

function checkSpan(
  span: { start: number; end: number },
  path: string,
  textLength: number,
  problems: SemanticProblem[],
): void {
  if (span.start < 0 || span.start > span.end) {
    problems.push({ path: join(path, 'start'), message: `must be between 0 and end (${span.end})` });
  }
  if (span.end > textLength) {
    problems.push({ path: join(path, 'end'), message: `must not exceed the length of article.text (${textLength})` });
  }
}

/** Rules that relate fields to each other, for values in the shape of the current schemas. */
const RECORD_RULES: { readonly [N in RecordName]: RecordRule<N> } = {
  Article(article, problems) {
    if (article.version < 1) problems.push({ path: 'version', message: 'must be at least 1' });
  },
  MarkedArticle(marked, problems) {
    const length = marked.article.text.length;
    marked.sentences.forEach((sentence, i) => {
      checkSpan(sentence, `sentences.${i}`, length, problems);
    });
    marked.mentions.forEach((mention, i) => {
      checkSpan(mention, `mentions.${i}`, length, problems);
      if (mention.sentence_index < 0 || mention.sentence_index >= marked.sentences.length) {
        problems.push({
          path: `mentions.${i}.sentence_index`,
          message: `must index one of the ${marked.sentences.length} sentences`,
        });
      }
    });
    marked.dates.forEach((date, i) => {
      checkSpan(date, `dates.${i}`, length, problems);
      if (date.sentence_index < 0 || date.sentence_index >= marked.sentences.length) {
        problems.push({
          path: `dates.${i}.sentence_index`,
          message: `must index one of the ${marked.sentences.length} sentences`,
        });
      }
    });
  },
  Chunk(chunk, problems) {
    if (chunk.index < 0) problems.push({ path: 'index', message: 'must not be negative' });
    if (chunk.provenance.length === 0) {
      problems.push({ path: 'provenance', message: "must list at least the chunk's own article" });
    }
  },
  Mention() {
    // Everything a Mention needs is covered by the schema-derived checks.
  },
  RegistryEntity(entity, problems) {
    if (entity.last_seen_at < entity.first_seen_at) {
      problems.push({ path: 'last_seen_at', message: 'must not be before first_seen_at' });
    }
    if (entity.mentions < 0) problems.push({ path: 'mentions', message: 'must not be negative' });
  },
  SpikeAlert(alert, problems) {
    if (alert.window_end <= alert.window_start) {
      problems.push({ path: 'window_end', message: 'must be after window_start' });
    }
    if (alert.observed < 0) problems.push({ path: 'observed', message: 'must not be negative' });
    if (alert.baseline_std < 0) problems.push({ path: 'baseline_std', message: 'must not be negative' });
  },
  EntitySpikeState(state, problems) {
    if (state.partition < 0) problems.push({ path: 'partition', message: 'must not be negative' });
    const counts = [
      ...state.days.map((b, i) => ['days', b, i] as const),
      ...state.hours.map((b, i) => ['hours', b, i] as const),
    ];
    for (const [field, bucket, i] of counts) {
      if (bucket.count < 0) problems.push({ path: `${field}.${i}.count`, message: 'must not be negative' });
    }
  },
  Interaction(interaction, problems) {
    if ((interaction.object_id === null) !== (interaction.object_name === null)) {
      problems.push({ path: 'object_name', message: 'must be null exactly when object_id is null' });
    }
    if (interaction.variant === 'M2' && interaction.object_id === null) {
      problems.push({ path: 'object_id', message: 'is required for an M2 interaction' });
    }
    if (interaction.chunk_ids.length === 0) {
      problems.push({ path: 'chunk_ids', message: 'must name the chunks the interaction was extracted from' });
    }
  },
  Query(query, problems) {
    if (query.q.trim() === '') problems.push({ path: 'q', message: 'must not be empty' });
    if (!Number.isInteger(query.k) || query.k < 1 || query.k > MAX_K) {
      problems.push({ path: 'k', message: `must be between 1 and ${MAX_K}, got ${query.k}` });
    }
    if (query.window_days !== null && (query.window_days < 0 || query.window_days > MAX_WINDOW_DAYS)) {
      problems.push({ path: 'window_days', message: `must be between 0 and ${MAX_WINDOW_DAYS}` });
    }
  },
  Answer(answer, problems) {
    answer.citations.forEach((citation, i) => {
      if (citation.n < 1) problems.push({ path: `citations.${i}.n`, message: 'must be at least 1' });
    });
    for (const [step, ms] of Object.entries(answer.timings_ms)) {
      if (ms < 0) problems.push({ path: `timings_ms.${step}`, message: 'must not be negative' });
    }
  },
};

export function checkRecordRules<N extends RecordName>(name: N, value: RecordTypes[N]): SemanticProblem[] {
  const problems: SemanticProblem[] = [];
  (RECORD_RULES[name] as RecordRule<N>)(value, problems);
  return problems;
}

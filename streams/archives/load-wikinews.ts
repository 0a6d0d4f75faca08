/**
 * English Wikinews articles from CSV files (`url,date,title,text`, one or more `*.csv` in a folder)
 * as ArticleInputs for replays, demos and benchmarks. Read at run time from the caller's path.
 *
 * `date` (`YYYY-MM-DD`) is passed through as `published_at`; `source` is `en.wikinews.org`. The
 * upstream test page (title starting `TEST PAGE:`) is dropped and counted. Items with an `error`
 * (never a crash): `invalid_input` for a row with the wrong number of fields, `invalid_utf8` for
 * a file that is not UTF-8 (one item for the whole file, since its rows cannot be trusted).
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { IntakeRejection, type ArticleInput } from '../../processors/intake/article-input.js';
import { decodeUtf8 } from '../../processors/intake/decode-body.js';
import type { DatasetLoad, ReplayItem } from '../../processors/intake/replay-articles.js';

export const WIKINEWS_SOURCE = 'en.wikinews.org';
const COLUMNS = ['url', 'date', 'title', 'text'] as const;
const JUNK_TITLE_PREFIX = 'TEST PAGE:';

export interface WikinewsStats {
  files: number;
  /** Data rows read (header excluded). */
  rows: number;
  /** Rows dropped as junk (the upstream test page). */
  dropped: number;
  /** Items handed out (`input` or `error`). */
  yielded: number;
}

export class CsvSyntaxError extends Error {
  override readonly name = 'CsvSyntaxError';
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`${message} (line ${line})`);
  }
}

export interface CsvRecord {
  /** 1-based line on which the record starts (quoted fields may span lines). */
  line: number;
  fields: string[];
}

/**
 * RFC 4180 records: fields separated by commas, records by CRLF or LF, a field in double quotes may
 * hold commas, line breaks and `""` for a quote. A quote inside an unquoted field is kept as text
 * (lenient, like most readers); an unterminated quoted field throws CsvSyntaxError. A final line
 * break does not start an empty record.
 */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let recordLine = 1;
  let atFieldStart = true;
  let quoted = false;
  let quoteLine = 1;
  const endField = (): void => {
    fields.push(field);
    field = '';
    atFieldStart = true;
  };
  const endRecord = (): void => {
    endField();
    records.push({ line: recordLine, fields });
    fields = [];
  };
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        continue;
      }
      if (c === '\n') line += 1;
      field += c;
      i += 1;
      continue;
    }
    if (c === '"' && atFieldStart) {
      quoted = true;
      quoteLine = line;
      atFieldStart = false;
      i += 1;
      continue;
    }
    if (c === ',') {
      endField();
      i += 1;
      continue;
    }
    if (c === '\r' || c === '\n') {
      endRecord();
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line += 1;
      recordLine = line;
      continue;
    }
    field += c;
    atFieldStart = false;
    i += 1;
  }
  if (quoted) throw new CsvSyntaxError('unterminated quoted field', quoteLine);
  if (!atFieldStart || fields.length > 0 || field !== '') endRecord();
  return records;
}

/** The articles of every `*.csv` in `dir` (name order), or an error message when there are none. */
export function loadWikinews(dir: string): DatasetLoad<WikinewsStats> {
  if (!existsSync(dir)) return { ok: false, error: `Wikinews articles not found: ${dir} does not exist` };
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.csv'))
    .sort()
    .map((name) => join(dir, name));
  if (files.length === 0) return { ok: false, error: `Wikinews articles not found: no *.csv in ${dir}` };
  const stats: WikinewsStats = { files: files.length, rows: 0, dropped: 0, yielded: 0 };
  return { ok: true, items: articles(files, stats), stats };
}

async function* articles(files: string[], stats: WikinewsStats): AsyncGenerator<ReplayItem> {
  for (const file of files) {
    const name = basename(file);
    const bytes = await readFile(file);
    let records: CsvRecord[];
    try {
      records = parseCsv(decodeUtf8(bytes));
    } catch (err) {
      if (!(err instanceof IntakeRejection) && !(err instanceof CsvSyntaxError)) throw err;
      stats.yielded += 1;
      const error = err instanceof IntakeRejection ? err : new IntakeRejection('invalid_input', err.message);
      yield { raw: bytes, error, origin: name };
      continue;
    }
    const [header, ...rows] = records;
    const positions = header === undefined ? undefined : columnPositions(header.fields);
    if (header === undefined || positions === undefined) {
      stats.yielded += 1;
      const error = new IntakeRejection('invalid_input', `header must name the columns ${COLUMNS.join(',')}`);
      yield { raw: Buffer.from(JSON.stringify(header?.fields ?? []), 'utf8'), error, origin: `${name}:1` };
      continue;
    }
    for (const row of rows) {
      stats.rows += 1;
      const origin = `${name}:${row.line}`;
      if (row.fields.length !== header.fields.length) {
        stats.yielded += 1;
        const message = `row has ${row.fields.length} fields, the header ${header.fields.length}`;
        const raw = Buffer.from(JSON.stringify(row.fields), 'utf8');
        yield { raw, error: new IntakeRejection('invalid_input', message), origin };
        continue;
      }
      const [url, date, title, text] = positions.map((p) => row.fields[p]!);
      if (title!.startsWith(JUNK_TITLE_PREFIX)) {
        stats.dropped += 1;
        continue;
      }
      const input: ArticleInput = { url: url!, title: title!, text: text!, source: WIKINEWS_SOURCE };
      if (date!.trim() !== '') input.published_at = date!.trim();
      stats.yielded += 1;
      yield { raw: Buffer.from(JSON.stringify({ url, date, title, text }), 'utf8'), input, origin };
    }
  }
}

/** Index of each of url, date, title, text in the header, or undefined when one is missing. */
function columnPositions(header: string[]): number[] | undefined {
  const names = header.map((h) => h.trim().toLowerCase());
  const positions = COLUMNS.map((column) => names.indexOf(column));
  return positions.includes(-1) ? undefined : positions;
}

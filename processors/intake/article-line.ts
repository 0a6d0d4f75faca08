/**
 * The generic article line of a JSONL file or an intake request body, checked for shape only: what
 * `neon replay`, `neon ingest` and `POST /v1/articles` all accept.
 */
import { z } from 'zod';
import { IntakeRejection, type ArticleInput } from './article-input.js';

// JSON written by other tools often spells "absent" as null; both mean the same here.
const optionalString = z
  .string()
  .nullish()
  .transform((v) => v ?? undefined);

/**
 * The generic article line: `{"url","title","text","published_at","source"}`, optional `id`, `html`,
 * `language` and `version` (the article's revision under its id, from 1). Only types are checked here; whether a date or text is usable is normalisation's
 * call, so that a missing date is dead-lettered as `missing_date` rather than as a shape error.
 */
export const articleLineSchema = z.object({
  url: z.string().min(1, 'url must not be empty'),
  title: optionalString,
  text: optionalString,
  html: optionalString,
  published_at: z
    .union([z.string(), z.number()])
    .nullish()
    .transform((v) => v ?? undefined),
  source: optionalString,
  id: optionalString,
  language: optionalString,
  version: z
    .number()
    .int('version must be an integer')
    .min(1, 'version must be at least 1')
    .max(2 ** 31 - 1)
    .nullish()
    .transform((v) => v ?? undefined),
});

/** Checks one decoded JSON value against the article line shape; throws `IntakeRejection('invalid_input')`. */
export function parseArticleLine(value: unknown): ArticleInput {
  const parsed = articleLineSchema.safeParse(value);
  if (!parsed.success) {
    throw new IntakeRejection('invalid_input', describeZodIssues(parsed.error));
  }
  const input: ArticleInput = { url: parsed.data.url };
  for (const key of ['title', 'text', 'html', 'published_at', 'source', 'id', 'language', 'version'] as const) {
    const v = parsed.data[key];
    if (v !== undefined) Object.assign(input, { [key]: v });
  }
  return input;
}

/** `path: message; path: message` — short enough for a dead-letter header and a 400 body. */
export function describeZodIssues(error: z.ZodError, limit = 5): string {
  const parts = error.issues.slice(0, limit).map((issue) => {
    const path = issue.path.map(String).join('.');
    return path === '' ? issue.message : `${path}: ${issue.message}`;
  });
  if (error.issues.length > limit) parts.push(`… ${error.issues.length - limit} more`);
  return parts.join('; ');
}

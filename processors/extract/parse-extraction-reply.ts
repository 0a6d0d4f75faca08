/**
 * The LLM's reply, validated against a strict schema before anything of it is used: one JSON object,
 * an `interactions` array of bounded length, each item exactly the keys asked for. Extra keys, a
 * wrong type, a list longer than asked or text that is not JSON make the reply invalid — the caller
 * retries once, then dead-letters (`llm_invalid_output`). A reply wrapped in a Markdown code fence is
 * accepted: many local models add one even when asked not to, and the content is the same.
 */
import { z } from 'zod';

/** Longest interaction text kept, in characters; "as few words as possible" rarely needs 200. */
export const MAX_INTERACTION_CHARS = 400;

const text = z.string().trim().min(1).max(MAX_INTERACTION_CHARS);

const m1Item = z.strictObject({ object: z.string().trim().max(200).nullable(), text });
const m2Item = z.strictObject({ text });

export type M1Item = z.infer<typeof m1Item>;
export type M2Item = z.infer<typeof m2Item>;

export class InvalidReplyError extends Error {
  override readonly name = 'InvalidReplyError';
}

function parseJson(reply: string): unknown {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(reply);
  const body = (fenced ? fenced[1]! : reply).trim();
  try {
    return JSON.parse(body);
  } catch {
    throw new InvalidReplyError(`not JSON (${body.length} characters starting ${JSON.stringify(body.slice(0, 40))})`);
  }
}

function validate<T>(item: z.ZodType<T>, reply: string, maxItems: number): T[] {
  const schema = z.strictObject({ interactions: z.array(item).max(maxItems) });
  const result = schema.safeParse(parseJson(reply));
  if (!result.success) {
    const problems = result.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.join('.') || 'reply'}: ${issue.message}`)
      .join('; ');
    throw new InvalidReplyError(problems);
  }
  return result.data.interactions;
}

export function parseM1Reply(reply: string, maxItems: number): M1Item[] {
  return validate(m1Item, reply, maxItems);
}

export function parseM2Reply(reply: string, maxItems: number): M2Item[] {
  return validate(m2Item, reply, maxItems);
}

/**
 * A stand-in for an extraction LLM behind the fake OpenAI-compatible server: it reads the NEON M1
 * and M2 prompts the way a model would — the subject (and object), the snippets between <news> and
 * </news> — and answers in the JSON asked for, with clauses of the snippets that link the entities.
 * Tests, the benchmark and the evaluation use it to exercise the real client, prompts, validation
 * and grounding with realistic replies and token counts, without a paid endpoint.
 */
import { entityIdFor } from '../processors/markup/entity-id.js';
import { unescapeMarkup } from '../processors/markup/render-markup.js';
import { parseMarkedText } from '../processors/extract/marked-spans.js';
import { extractOffline } from '../processors/extract/offline-extractor.js';
import type { ChunkEntity } from '../schemas/records.generated.js';
import type { FakeChatRequest } from './fake-openai-server.js';

const M1_SUBJECT = /the interactions of (.+?) with other named entity/;
const M2_PAIR = /the interactions between (.+?) and (.+?)\. Use as few words/;
const NEWS = /<news>\n([\s\S]*?)\n<\/news>/;

/** The snippets of a prompt, without their "[n] Month D, YYYY: " prefix. */
function snippets(prompt: string): string[] {
  const news = NEWS.exec(prompt)?.[1] ?? '';
  return news
    .split('\n')
    .map((line) => line.replace(/^(\[\d+\] )?[A-Z][a-z]+ \d{1,2}, \d{4}: /, ''))
    .filter((line) => line.length > 0);
}

/** The chunk a snippet came from, as far as the prompt shows it: each marked surface is an entity. */
function chunkOf(marked: string, named: readonly string[]) {
  const surfaces = parseMarkedText(marked, []).spans.map((s) => s.surface);
  const entities: ChunkEntity[] = [...new Set([...named, ...surfaces])].map((name) => ({
    id: entityIdFor(name),
    name,
    type: 'OTHER',
  }));
  return { marked_text: marked, entities };
}

/** Answers one extraction request; anything else gets `{"interactions": []}`. */
export function fakeExtractionReply(request: FakeChatRequest): string {
  const prompt = request.messages.map((m) => m.content).join('\n');
  const pair = M2_PAIR.exec(prompt);
  if (pair) {
    const [subject, object] = [unescapeMarkup(pair[1]!), unescapeMarkup(pair[2]!)];
    const lines = snippets(prompt).flatMap((marked) =>
      extractOffline(entityIdFor(subject), chunkOf(marked, [subject, object]))
        .filter((tuple) => tuple.objectId === entityIdFor(object))
        .map((tuple) => ({ text: tuple.text })),
    );
    return JSON.stringify({ interactions: lines.slice(0, 8) });
  }
  const m1 = M1_SUBJECT.exec(prompt);
  if (m1) {
    const subject = unescapeMarkup(m1[1]!);
    const marked = snippets(prompt)[0] ?? '';
    const tuples = extractOffline(entityIdFor(subject), chunkOf(marked, [subject]));
    return JSON.stringify({ interactions: tuples.map((t) => ({ object: t.objectName, text: t.text })) });
  }
  return JSON.stringify({ interactions: [] });
}

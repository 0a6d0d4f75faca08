import { afterEach, describe, expect, it } from 'vitest';
import {
  ATTRIBUTES,
  judgeAnswer,
  judgeAttribute,
  judgePrompt,
  parseRating,
  summariseAttribute,
  type JudgeOutcome,
  type JudgedAnswer,
} from '../llm-judge.js';
import { llmConfig } from '../../processors/extract/llm-config.js';
import { OpenAiChatModel } from '../../streams/llm/openai-chat-model.js';
import { fakeReplies, startFakeOpenAiServer, type FakeOpenAiServer } from '../../devkit/fake-openai-server.js';

const servers: FakeOpenAiServer[] = [];
const models: OpenAiChatModel[] = [];
afterEach(async () => {
  await Promise.all(models.splice(0).map((m) => m.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function judgeBehind(responder?: Parameters<typeof startFakeOpenAiServer>[0]) {
  const server = await startFakeOpenAiServer(responder);
  servers.push(server);
  const chat = new OpenAiChatModel(llmConfig({ baseUrl: server.url, model: 'fake-judge', retry: { attempts: 1 } }));
  models.push(chat);
  return { server, chat };
}

const answer: JudgedAnswer = {
  question: 'Who won the German federal election?',
  tq: Date.parse('2025-03-01T23:59:59.999Z'),
  response: 'The CDU/CSU led by Friedrich Merz won with 28.5% [1].',
  passages: [
    { text: 'Friedrich Merz’s CDU/CSU won the election with 28.5%.', published_at: '2025-02-23T20:00:00.000Z' },
    { text: 'AfD came second.', published_at: '2025-02-24T08:00:00.000Z' },
  ],
};

describe('judge prompts', () => {
  it('carry the question with its date and the response; passages only for faithfulness', () => {
    for (const attribute of ATTRIBUTES) {
      const prompt = judgePrompt(attribute, answer);
      expect(prompt).toContain('User query: Who won the German federal election? (asked on March 1, 2025)');
      expect(prompt).toContain("AI assistant's response: The CDU/CSU led by Friedrich Merz won with 28.5% [1].");
      expect(prompt).toContain('3-point Likert scale');
      expect(prompt).toContain('{"rating": <numerical_rating>, "reason": <short_reasoning>}');
      expect(prompt).toContain(`## ${attribute[0]!.toUpperCase()}${attribute.slice(1)} Criterion`);
      if (attribute === 'faithfulness') {
        expect(prompt).toContain('Supporting passages:\n[1] (February 23, 2025) Friedrich Merz’s CDU/CSU won');
        expect(prompt).toContain('[2] (February 24, 2025) AfD came second.');
      } else {
        expect(prompt).not.toContain('Supporting passages');
      }
    }
  });
});

describe('parseRating', () => {
  it('reads a well-formed reply, a string rating, and an object wrapped in prose or a fence', () => {
    expect(parseRating('{"rating": 2, "reason": "complete"}')).toEqual({
      kind: 'rating',
      rating: 2,
      reason: 'complete',
    });
    expect(parseRating('{"rating": "1", "reason": "partial"}')).toMatchObject({ kind: 'rating', rating: 1 });
    expect(parseRating('Here you go:\n```json\n{"rating": 0, "reason": "no {info}"}\n```')).toEqual({
      kind: 'rating',
      rating: 0,
      reason: 'no {info}',
    });
  });

  it('refuses ratings off the scale (the paper saw 3, 5 and 9) and fractions, with their value', () => {
    expect(parseRating('{"rating": 3, "reason": "somewhat relevant"}')).toEqual({ kind: 'out_of_range', value: 3 });
    expect(parseRating('{"rating": 9}')).toEqual({ kind: 'out_of_range', value: 9 });
    expect(parseRating('{"rating": 1.5}')).toEqual({ kind: 'out_of_range', value: 1.5 });
    expect(parseRating('{"rating": -1}')).toEqual({ kind: 'out_of_range', value: -1 });
  });

  it('calls anything without a JSON object holding a numeric rating malformed', () => {
    for (const reply of ['Rating: 2', '{"rating": ', '{"score": 2}', '{"rating": "high"}', '[2]', '{"rating": null}']) {
      expect(parseRating(reply)).toEqual({ kind: 'malformed' });
    }
  });
});

describe('judging against an OpenAI-compatible endpoint', () => {
  it('asks once per attribute and parses each reply', async () => {
    const { server, chat } = await judgeBehind({
      chat: (request) => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (prompt.includes('Helpfulness Criterion')) return '{"rating": 2, "reason": "names Merz and the AfD"}';
        if (prompt.includes('Relevance Criterion')) return '{"rating": 1, "reason": "partly"}';
        return '{"rating": 0, "reason": "ungrounded"}';
      },
    });
    const outcomes = await judgeAnswer(chat, answer);
    expect(outcomes).toEqual({
      helpfulness: { kind: 'rating', rating: 2, reason: 'names Merz and the AfD' },
      relevance: { kind: 'rating', rating: 1, reason: 'partly' },
      faithfulness: { kind: 'rating', rating: 0, reason: 'ungrounded' },
    });
    const requests = server.chatRequests();
    expect(requests).toHaveLength(3);
    for (const request of requests) {
      expect(request).toMatchObject({ model: 'fake-judge', temperature: 0, json: true });
      expect(request.messages.at(-1)!.content).toContain('(asked on March 1, 2025)');
    }
    expect(requests.filter((r) => r.messages.at(-1)!.content.includes('Supporting passages'))).toHaveLength(1);
  });

  it('counts out-of-range, malformed and failed replies apart from the ratings', async () => {
    const { server, chat } = await judgeBehind();
    server.enqueue(
      fakeReplies.json({ rating: 2, reason: 'good' }),
      fakeReplies.json({ rating: 5, reason: 'fully reliable' }),
      fakeReplies.invalidJson(),
      fakeReplies.reply('I would rate this a two.'),
      fakeReplies.serverError(),
      fakeReplies.json({ rating: 1, reason: 'some' }),
    );
    const outcomes: JudgeOutcome[] = [];
    for (let i = 0; i < 6; i += 1) {
      outcomes.push(await judgeAttribute(chat, 'helpfulness', { ...answer, response: `answer ${i}` }));
    }
    expect(server.totals.chatCalls).toBe(6);
    expect(outcomes.map((o) => o.kind)).toEqual([
      'rating',
      'out_of_range',
      'malformed',
      'malformed',
      'failed',
      'rating',
    ]);
    const summary = summariseAttribute(outcomes);
    expect(summary).toMatchObject({
      mean: 1.5,
      n: 2,
      distribution: { '0': 0, '1': 1, '2': 1 },
      out_of_range: 1,
      out_of_range_values: { '5': 1 },
      malformed: 2,
      failed: 1,
    });
    expect(summary.ci95.low).toBeGreaterThanOrEqual(1);
    expect(summary.ci95.high).toBeLessThanOrEqual(2);
  });
});

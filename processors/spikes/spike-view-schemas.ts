/**
 * The JSON shapes of `alert-view.ts` and `digest-view.ts` as zod schemas: what the API documents for
 * `GET /v1/spikes`, `/v1/spikes/:id`, `/v1/spikes/digest` and the events of `/v1/spikes/stream`.
 * The views build the JSON; these describe it (the API's tests check real answers against them).
 */
import { z } from 'zod';
import {
  ENTITY_TYPE_SYMBOLS,
  SPIKE_GRANULARITY_SYMBOLS,
  SPIKE_STATE_SYMBOLS,
} from '../../schemas/records.generated.js';
import type { DigestJson, StoryJson } from './digest-view.js';

const isoTime = z.iso.datetime();
const granularity = z.enum(SPIKE_GRANULARITY_SYMBOLS).describe('Size of the buckets mentions are counted in.');
const spikeState = z.enum(SPIKE_STATE_SYMBOLS);

export const spikeAlertJsonSchema = z
  .object({
    id: z.string().describe('Spike id: every state of one spike episode shares it.'),
    entity_id: z.string(),
    entity_name: z.string(),
    entity_type: z.enum(ENTITY_TYPE_SYMBOLS),
    granularity,
    state: spikeState.describe('STARTED when the count first exceeds the threshold, ONGOING while above, ENDED after.'),
    window_start: isoTime.describe('Start (inclusive) of the observed window.'),
    window_end: isoTime.describe('End (exclusive) of the observed window.'),
    observed: z
      .number()
      .describe("The window's count: unique chunks (NEON's rule) or distinct articles (count model)."),
    baseline_mean: z.number().describe('Expected count of the window.'),
    baseline_std: z.number(),
    threshold: z.number().describe('Count the window had to exceed to be a spike.'),
    score: z.number(),
    significance: z
      .number()
      .describe('−log10 of the probability of a count at least this high: what alerts are ranked by.'),
    articles: z.number().int().describe('Distinct articles mentioning the entity within the window.'),
    article_ids: z.array(z.string()).describe('Articles that contributed to the window, most recent first.'),
    urls: z.array(z.string()),
    detected_at: isoTime,
    episode_start: isoTime.nullable(),
    rule: z.string().describe('The rule that fired, in words.'),
    baseline_buckets: z.number().int(),
    method: z.string().describe("'surprise' (the count model) or 'neon' (NEON's rolling-sum rule)."),
    counts: z
      .array(z.object({ bucket_start: isoTime, count: z.number() }))
      .describe('Per-bucket counts behind the window and the baseline, oldest first (the drill-down chart).'),
    first_interactions: z
      .array(z.object({ id: z.string(), t: isoTime, text: z.string() }))
      .describe('The first interactions extracted for the entity within the window.'),
  })
  .describe('One state of a spike alert, times as ISO 8601.');

const episodeFields = {
  id: z.string(),
  entity_id: z.string(),
  entity_name: z.string(),
  granularity,
  open: z.boolean(),
  started_at: isoTime,
  ended_at: isoTime.nullable(),
  peak_observed: z.number().describe('Highest observed window count over the episode.'),
  peak_score: z.number().nullable().describe('Highest score over the episode; null when not finite.'),
  latest: spikeAlertJsonSchema,
};

export const spikeEpisodeJsonSchema = z.object(episodeFields).describe('A spike episode and its latest alert state.');

export const spikeEpisodeWithStatesJsonSchema = z
  .object({
    ...episodeFields,
    states: z
      .array(z.object({ state: spikeState, window_end: isoTime, observed: z.number(), detected_at: isoTime }))
      .describe('Every state the episode went through, in order.'),
  })
  .describe('A spike episode with every state it went through.');

export const spikeListJsonSchema = z.object({
  spikes: z.array(spikeEpisodeJsonSchema).describe('Episodes, open ones first.'),
});

const storyMemberJsonSchema = z.object({
  entity_id: z.string(),
  entity_name: z.string(),
  entity_type: z.string(),
  relation: z.enum(['lead', 'alias', 'co-mention']),
  generic: z.boolean(),
  spike_id: z.string(),
  granularity: z.string(),
  significance: z.number(),
  articles: z.number().int(),
});

export const storyJsonSchema = z
  .object({
    rank: z.number().int().min(1),
    id: z.string(),
    date: z.iso.date(),
    hour: isoTime.nullable().describe('Hour of the hourly alert that opened the story, else null.'),
    entity_id: z.string(),
    entity_name: z.string(),
    entity_type: z.string(),
    significance: z.number(),
    articles: z.number().int(),
    observed: z.number().describe("The lead's most significant window: its count."),
    expected: z.number().describe('What that window was expected to count.'),
    method: z.string(),
    rule: z.string(),
    open: z.boolean(),
    delivered: z.boolean().describe('Pushed within the alert budget.'),
    delivered_at: isoTime.nullable(),
    generic: z.boolean(),
    members: z.array(storyMemberJsonSchema),
    article_ids: z.array(z.string()).describe("The contributing articles of the lead's window, newest first."),
    urls: z.array(z.string()),
  })
  .describe('A story of the alert desk: a lead spike and the spikes of the same news.');

export const digestJsonSchema = z
  .object({
    date: z.iso.date(),
    budget: z.object({
      perDay: z.number().describe('New stories delivered per UTC day.'),
      perHour: z.number().describe('New stories opened by an hourly alert delivered per hour.'),
      minSignificance: z.number().describe('Significance a story must reach to be listed.'),
      pushSignificance: z.number().describe('Significance a story must reach to be pushed.'),
    }),
    totals: z.object({
      stories: z.number().int(),
      above_bar: z.number().int(),
      delivered: z.number().int(),
      generic: z.number().int(),
    }),
    stories: z.array(storyJsonSchema).describe("The day's best stories within the budget, ranked."),
    more: z.array(storyJsonSchema).describe('Stories beyond the budget (all of them with all=true).'),
    developing: z.array(storyJsonSchema).describe('Stories of earlier days still open on this day.'),
  })
  .describe("A day's spike stories ranked by significance and volume, within the alert budget.");

/**
 * The typed views must fit their schemas: a field added to, renamed in or retyped in `StoryJson`
 * or `DigestJson` without its schema fails to compile here.
 */
type Fits<Actual extends Expected, Expected> = Actual;
export type CheckedStoryJson = Fits<StoryJson, z.infer<typeof storyJsonSchema>>;
export type CheckedDigestJson = Fits<DigestJson, z.infer<typeof digestJsonSchema>>;

/**
 * A day's digest as the API returns it (JSON, times as ISO strings) and as the command line prints
 * it: one shape for `GET /v1/spikes/digest`, `neon spikes --digest`, the dashboard and the
 * evaluation, so all of them show the same thing.
 */
import type { Digest, Story, StoryMember } from './alert-desk.js';

export interface StoryMemberJson {
  entity_id: string;
  entity_name: string;
  entity_type: string;
  relation: StoryMember['relation'];
  generic: boolean;
  spike_id: string;
  granularity: string;
  significance: number;
  articles: number;
}

export interface StoryJson {
  rank: number;
  id: string;
  date: string;
  /** Hour (ISO) of the hourly alert that opened the story, else null. */
  hour: string | null;
  entity_id: string;
  entity_name: string;
  entity_type: string;
  significance: number;
  articles: number;
  /** The lead's most significant window: its count, what was expected, the rule in words. */
  observed: number;
  expected: number;
  method: string;
  rule: string;
  open: boolean;
  delivered: boolean;
  delivered_at: string | null;
  generic: boolean;
  members: StoryMemberJson[];
  /**
   * The contributing articles of the lead's most significant window that closed on the story's day,
   * newest first (ids, and URLs where known): what was known that day, never later reports.
   */
  article_ids: string[];
  urls: string[];
}

export interface DigestJson {
  date: string;
  budget: Digest['budget'];
  totals: Digest['totals'];
  stories: StoryJson[];
  more: StoryJson[];
  developing: StoryJson[];
}

const iso = (t: number): string => new Date(t).toISOString();

export function storyJson(story: Story, rank: number): StoryJson {
  const latest = story.lead.peak;
  return {
    rank,
    id: story.id,
    date: iso(story.day).slice(0, 10),
    hour: story.hour === null ? null : iso(story.hour),
    entity_id: story.lead.entity_id,
    entity_name: story.lead.entity_name,
    entity_type: story.lead.entity_type,
    significance: Number(story.significance.toFixed(2)),
    articles: story.articles,
    observed: latest.observed,
    expected: Number(latest.baseline_mean.toFixed(2)),
    method: latest.method,
    rule: latest.rule,
    open: story.open,
    delivered: story.delivered,
    delivered_at: story.delivered_at === null ? null : iso(story.delivered_at),
    generic: story.generic,
    members: story.members.map((m) => ({
      entity_id: m.entity_id,
      entity_name: m.entity_name,
      entity_type: m.entity_type,
      relation: m.relation,
      generic: m.generic,
      spike_id: m.spike_id,
      granularity: m.granularity,
      significance: Number(m.significance.toFixed(2)),
      articles: m.articles,
    })),
    article_ids: story.lead.dayPeak.article_ids,
    urls: story.lead.dayPeak.urls,
  };
}

export function digestJson(digest: Digest): DigestJson {
  return {
    date: digest.date,
    budget: digest.budget,
    totals: digest.totals,
    stories: digest.stories.map((s, i) => storyJson(s, i + 1)),
    more: digest.more.map((s, i) => storyJson(s, digest.stories.length + i + 1)),
    developing: digest.developing.map((s, i) => storyJson(s, i + 1)),
  };
}

function storyLine(s: StoryJson): string {
  const others = s.members.filter((m) => m.entity_id !== s.entity_id);
  const also = others.length === 0 ? '' : `  + ${others.map((m) => m.entity_name).join(', ')}`;
  const expected = s.method === 'surprise' ? `expected ${s.expected.toFixed(1)}` : `baseline ${s.expected.toFixed(1)}`;
  const pushed = s.delivered ? '' : '  (not pushed)';
  return (
    `${String(s.rank).padStart(3)}. ${s.entity_name} (${s.entity_type})  ` +
    `significance ${s.significance.toFixed(1)}  ${s.articles} articles (${s.observed} in the window, ${expected})` +
    `${pushed}${also}`
  );
}

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

/** The digest as `neon spikes --digest` prints it. */
export function digestLines(digest: DigestJson): string[] {
  const t = digest.totals;
  const lines = [
    `spike digest for ${digest.date}: ${digest.stories.length} of ${t.above_bar} ${plural(t.above_bar, 'story', 'stories')} above the bar ` +
      `(budget ${digest.budget.perDay} a day, ${digest.budget.perHour} an hour, significance ≥ ${digest.budget.minSignificance}, ` +
      `pushed at ≥ ${digest.budget.pushSignificance}); ` +
      `${t.stories} ${plural(t.stories, 'story', 'stories')} in all, ${t.generic} generic ${plural(t.generic, 'name', 'names')} held back`,
  ];
  if (digest.stories.length === 0) lines.push('  no story above the bar');
  for (const s of digest.stories) {
    lines.push(storyLine(s));
    if (s.urls[0]) lines.push(`       ${s.urls[0]}`);
  }
  if (digest.more.length > 0) {
    lines.push(`more (${digest.more.length}):`);
    for (const s of digest.more) lines.push(storyLine(s));
  }
  if (digest.developing.length > 0) {
    lines.push(`developing (started earlier, still open): ${digest.developing.map((s) => s.entity_name).join(', ')}`);
  }
  return lines;
}

/**
 * Spikes found in Wikipedia's Current Events 2025 Q1 (read at run time from the development data,
 * never copied): every item goes through the product's own intake normalisation, markup, chunking
 * and dedupe, and the resulting mentions through the spike detector with its default rules, in
 * publication order. Prints the episodes by day with their drill-down and writes
 * `eval/results/spikes.json`.
 *
 *   npx tsx eval/spike-report.ts [--top 25] [--rule-std 1] [--json]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { SpikeDetector } from '../processors/detect-spikes.js';
import { DEFAULT_DAY_RULE } from '../processors/spikes/spike-rule.js';
import type { SpikeAlert } from '../schemas/records.generated.js';
import {
  CURRENT_EVENTS_DATASET as DATASET,
  CURRENT_EVENTS_NOW,
  currentEventsMentions,
} from './current-events-mentions.js';
import { devDataPath, missingDevDataMessage } from './dev-data.js';

export interface SpikeEpisode {
  id: string;
  entity: string;
  granularity: string;
  started: string;
  ended: string | null;
  peak_observed: number;
  baseline_mean: number;
  baseline_std: number;
  threshold: number;
  score: number;
  articles: { id: string; title: string; url: string | null }[];
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function day(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

function main(): void {
  if (devDataPath(DATASET) === undefined) {
    console.log(missingDevDataMessage(DATASET));
    return;
  }
  const top = arg('--top', 25);
  const std = arg('--rule-std', DEFAULT_DAY_RULE.stdMultiplier);
  const started = performance.now();
  const data = currentEventsMentions()!;
  const { articles, refused, mentions: all } = data;
  const ordered = [...articles.values()];
  const now = CURRENT_EVENTS_NOW;
  const detector = new SpikeDetector({ day: { ...DEFAULT_DAY_RULE, stdMultiplier: std }, now: () => now });
  const alerts: SpikeAlert[] = [];
  const mentions = all.length;
  for (const mention of all) alerts.push(...detector.offer(mention, 0).alerts);
  const seconds = (performance.now() - started) / 1000;

  const episodes = new Map<string, SpikeEpisode>();
  for (const alert of alerts) {
    let episode = episodes.get(alert.id);
    if (!episode) {
      episode = {
        id: alert.id,
        entity: alert.entity_name,
        granularity: alert.granularity,
        started: day(alert.window_end - 1),
        ended: null,
        peak_observed: 0,
        baseline_mean: alert.baseline_mean,
        baseline_std: alert.baseline_std,
        threshold: alert.threshold,
        score: alert.score,
        articles: [],
      };
      episodes.set(alert.id, episode);
    }
    if (alert.state === 'ENDED') episode.ended = day(alert.window_end - 1);
    else if (alert.observed >= episode.peak_observed) {
      episode.peak_observed = alert.observed;
      episode.articles = alert.article_ids.slice(0, 5).map((id, i) => ({
        id,
        title: articles.get(id)?.title ?? '',
        url: alert.urls[i] ?? null,
      }));
    }
    if (alert.state !== 'ENDED') episode.score = Math.max(episode.score, alert.score);
  }
  const daily = [...episodes.values()].filter((e) => e.granularity === 'DAY');
  const ranked = [...daily].sort((a, b) => b.score - a.score || b.peak_observed - a.peak_observed);
  const byDay = new Map<string, SpikeEpisode[]>();
  for (const episode of daily) byDay.set(episode.started, [...(byDay.get(episode.started) ?? []), episode]);

  const result = {
    dataset: DATASET,
    items: data.items,
    articles: ordered.length,
    refused_by_intake: Object.fromEntries(refused),
    mentions,
    rule: { ...DEFAULT_DAY_RULE, stdMultiplier: std },
    seconds_markup_to_alerts: Number(seconds.toFixed(2)),
    day_episodes: daily.length,
    hour_episodes: [...episodes.values()].length - daily.length,
    tracked_entities: detector.size().entities,
    top: ranked.slice(0, top),
    by_day: Object.fromEntries(
      [...byDay]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([d, list]) => [
          d,
          list.sort((a, b) => b.score - a.score).map((e) => `${e.entity} (${e.score.toFixed(1)})`),
        ]),
    ),
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/spikes.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  console.log(
    `${ordered.length} articles, ${mentions} mentions → ${daily.length} daily spike episodes ` +
      `(${result.hour_episodes} hourly: the sample has day-only dates) in ${seconds.toFixed(1)} s`,
  );
  console.log(`\nTop ${top} daily episodes by peak score:`);
  for (const e of ranked.slice(0, top)) {
    console.log(
      `  ${e.started} → ${e.ended ?? 'open'}  ${e.entity.padEnd(36)} peak ${String(e.peak_observed).padStart(3)}  ` +
        `baseline ${e.baseline_mean.toFixed(1)} ± ${e.baseline_std.toFixed(1)}  score ${e.score.toFixed(1)}`,
    );
    for (const a of e.articles.slice(0, 2)) console.log(`        · ${a.title.slice(0, 90)}`);
  }
  console.log('\nEpisodes started per day (top 4 by score):');
  for (const [d, list] of Object.entries(result.by_day)) console.log(`  ${d}  ${list.slice(0, 4).join(', ')}`);
}

main();

import type { Command } from 'commander';
import type { AlertBudget } from '../../processors/spikes/alert-desk.js';
import { alertBudgetFromEnv } from '../../processors/spikes/spike-config.js';
import { UsageError } from '../../infra/cli-errors.js';
import { redactUrl } from '../../schemas/connection-config.js';
import type { SpikeEpisode } from '../../processors/spikes/spike-book.js';
import { digestJson, digestLines, type DigestJson } from '../../processors/spikes/digest-view.js';
import { alertJson, episodeJson } from '../../processors/spikes/alert-view.js';
import { followSpikes } from '../../streams/views/spike-feed.js';
import { untilSignalled } from '../../streams/runtime/stop-on-signals.js';
import { TOPICS } from '../../streams/pipeline/topics.js';
import { clusterTransport } from './cluster-transport.js';
import { callService, findService, type ServiceTarget } from './service-client.js';
import { printable } from './terminal-text.js';

const STATES = ['open', 'ended', 'all'] as const;

function day(t: number | null): string {
  return t === null ? '…' : new Date(t).toISOString().slice(0, 16).replace('T', ' ');
}

function line(e: SpikeEpisode): string {
  const a = e.latest;
  return (
    `${e.open ? 'OPEN ' : 'ended'} ${e.granularity.padEnd(4)} ${e.entity_name.padEnd(32).slice(0, 32)} ` +
    `${day(e.started_at)} → ${day(e.ended_at)}  peak ${String(e.peak_observed).padStart(4)}  ` +
    `baseline ${a.baseline_mean.toFixed(1)} ± ${a.baseline_std.toFixed(1)}  score ${e.peak_score.toFixed(1)}  ` +
    `${a.article_ids.length} articles`
  );
}

/**
 * `neon spikes` — current and past spike episodes from `entity.spikes` (on Kafka: KAFKA_BROKERS or
 * the local broker), newest first; `--follow` then prints every new alert state until Ctrl-C;
 * `--digest [YYYY-MM-DD]` prints a day's stories ranked within the alert budget (the latest day
 * with stories when no date is given; `--all` lists the rest too).
 */
/** NEON_SPIKE_BUDGET_* as the running product reads it: the digest printed from Kafka is the API's. */
function budgetOfEnv(): AlertBudget {
  const parsed = alertBudgetFromEnv(process.env);
  if (!parsed.ok) throw new UsageError(parsed.problems.join('; '));
  return parsed.budget;
}

export function registerSpikesCommand(program: Command): void {
  program
    .command('spikes')
    .description('list spike episodes from entity.spikes (and follow new alerts with --follow)')
    .option('--state <state>', `one of ${STATES.join(', ')}`, 'all')
    .option('--entity <id>', 'only this entity id (e.g. e-donald-trump)')
    .option('--limit <n>', 'at most n episodes', '50')
    .option('--follow', 'keep running and print each new alert state')
    .option('--digest [date]', "a day's stories (YYYY-MM-DD, default the latest), ranked within the alert budget")
    .option('--all', 'with --digest: every story of the day, beyond the budget too')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--json', 'JSON output (one document; with --follow, one JSON line per alert)')
    .action(
      async (flags: {
        state: string;
        entity?: string;
        limit: string;
        follow?: boolean;
        digest?: string | boolean;
        all?: boolean;
        api?: string;
        json?: boolean;
      }) => {
        if (flags.digest !== undefined) {
          const date = typeof flags.digest === 'string' ? flags.digest : undefined;
          if (date !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
            throw new UsageError(`--digest takes a date as YYYY-MM-DD, got "${date}"`);
          }
          await printDigest(flags.api, date, flags.all ?? false, flags.json ?? false);
          return;
        }
        if (!(STATES as readonly string[]).includes(flags.state)) {
          throw new UsageError(`--state must be one of ${STATES.join(', ')}, got "${flags.state}"`);
        }
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive integer`);
        const out = (text: string): void => void process.stdout.write(`${printable(text)}\n`);
        const service = findService(flags.api);
        if (service) {
          await spikesFromService(service, { ...flags, limit }, out);
          return;
        }
        const { transport } = await clusterTransport('neon-spikes');
        const feed = await followSpikes(transport, TOPICS.spikes, { budget: budgetOfEnv() });
        await feed.caughtUp;
        const episodes = feed.book.query({
          state: flags.state as (typeof STATES)[number],
          ...(flags.entity ? { entityId: flags.entity } : {}),
          limit,
        });
        if (flags.json && !flags.follow) out(JSON.stringify({ spikes: episodes.map((e) => episodeJson(e)) }, null, 2));
        else if (!flags.json) {
          out(episodes.length === 0 ? 'no spikes yet' : episodes.map(line).join('\n'));
        }
        if (!flags.follow) {
          await feed.stop();
          await transport.close();
          return;
        }
        feed.subscribe(({ alert }) => {
          if (flags.entity && alert.entity_id !== flags.entity) return;
          if (flags.json) out(JSON.stringify(alertJson(alert)));
          else {
            out(
              `${alert.state.padEnd(7)} ${alert.granularity.padEnd(4)} ${alert.entity_name}: ` +
                `${alert.observed} in ${day(alert.window_start)} → ${day(alert.window_end)} ` +
                `(threshold ${alert.threshold.toFixed(1)}, score ${alert.score.toFixed(1)})`,
            );
          }
        });
        await untilSignalled(
          async () => {
            await feed.stop();
            await transport.close();
          },
          { what: 'spikes --follow' },
        );
      },
    );
}

interface EpisodeJson {
  id: string;
  entity_name: string;
  granularity: string;
  open: boolean;
  started_at: string;
  ended_at: string | null;
  peak_observed: number;
  peak_score: number | null;
  latest: { baseline_mean: number; baseline_std: number; article_ids: string[] };
}

/** The same listing and following through a running neon-stream's API (its SSE stream for --follow). */
async function spikesFromService(
  service: ServiceTarget,
  flags: { state: string; entity?: string; limit: number; follow?: boolean; json?: boolean },
  out: (text: string) => void,
): Promise<void> {
  const query = new URLSearchParams({
    state: flags.state,
    limit: String(flags.limit),
    ...(flags.entity ? { entity: flags.entity } : {}),
  });
  const { spikes } = await callService<{ spikes: EpisodeJson[] }>(service, `/v1/spikes?${query.toString()}`);
  if (flags.json && !flags.follow) out(JSON.stringify({ spikes }, null, 2));
  else if (!flags.json) {
    const when = (t: string | null): string => (t === null ? '…' : t.slice(0, 16).replace('T', ' '));
    out(
      spikes.length === 0
        ? 'no spikes yet'
        : spikes
            .map(
              (e) =>
                `${e.open ? 'OPEN ' : 'ended'} ${e.granularity.padEnd(4)} ${e.entity_name.padEnd(32).slice(0, 32)} ` +
                `${when(e.started_at)} → ${when(e.ended_at)}  peak ${String(e.peak_observed).padStart(4)}  ` +
                `baseline ${e.latest.baseline_mean.toFixed(1)} ± ${e.latest.baseline_std.toFixed(1)}  ` +
                `score ${(e.peak_score ?? 0).toFixed(1)}  ${e.latest.article_ids.length} articles`,
            )
            .join('\n'),
    );
  }
  if (!flags.follow) return;
  const abort = new AbortController();
  const stop = (): void => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const response = await fetch(`${service.url}/v1/spikes/stream`, {
      headers: {
        accept: 'text/event-stream',
        ...(service.apiKey ? { authorization: `Bearer ${service.apiKey}` } : {}),
      },
      signal: abort.signal,
    });
    if (!response.ok || !response.body)
      throw new Error(`${redactUrl(service.url)}/v1/spikes/stream answered ${response.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        if (data === '') continue;
        const alert = JSON.parse(data) as {
          entity_id: string;
          entity_name: string;
          state: string;
          granularity: string;
          observed: number;
          window_start: string;
          window_end: string;
          threshold: number;
          score: number;
        };
        if (flags.entity && alert.entity_id !== flags.entity) continue;
        if (flags.json) out(JSON.stringify(alert));
        else {
          out(
            `${alert.state.padEnd(7)} ${alert.granularity.padEnd(4)} ${alert.entity_name}: ${alert.observed} in ` +
              `${alert.window_start.slice(0, 16)} → ${alert.window_end.slice(0, 16)} ` +
              `(threshold ${alert.threshold.toFixed(1)}, score ${alert.score.toFixed(1)})`,
          );
        }
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** `neon spikes --digest`: from the running service when there is one, else straight from the topic. */
async function printDigest(
  api: string | undefined,
  date: string | undefined,
  all: boolean,
  json: boolean,
): Promise<void> {
  const out = (text: string): void => void process.stdout.write(`${printable(text)}\n`);
  let digest: DigestJson;
  const service = findService(api);
  if (service) {
    const query = new URLSearchParams({ ...(date ? { date } : {}), ...(all ? { all: 'true' } : {}) });
    digest = await callService<DigestJson>(service, `/v1/spikes/digest?${query.toString()}`);
  } else {
    const { transport } = await clusterTransport('neon-spikes');
    try {
      const feed = await followSpikes(transport, TOPICS.spikes, { budget: budgetOfEnv() });
      await feed.caughtUp;
      const day = date ? Date.parse(`${date}T00:00:00Z`) : (feed.desk.days()[0] ?? Date.now());
      digest = digestJson(feed.desk.digest(day, { all }));
      await feed.stop();
    } finally {
      await transport.close();
    }
  }
  out(json ? JSON.stringify(digest, null, 2) : digestLines(digest).join('\n'));
}

import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import type { SpikeEpisode } from '../../processors/spikes/spike-book.js';
import { episodeJson, alertJson } from '../../service/spike-routes.js';
import { followSpikes } from '../../streams/spike-feed.js';
import { untilSignalled } from '../../streams/stop-on-signals.js';
import { TOPICS } from '../../streams/topics.js';
import { clusterTransport } from './cluster-transport.js';

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
 * the local broker), newest first; `--follow` then prints every new alert state until Ctrl-C.
 */
export function registerSpikesCommand(program: Command): void {
  program
    .command('spikes')
    .description('list spike episodes from entity.spikes (and follow new alerts with --follow)')
    .option('--state <state>', `one of ${STATES.join(', ')}`, 'all')
    .option('--entity <id>', 'only this entity id (e.g. e-donald-trump)')
    .option('--limit <n>', 'at most n episodes', '50')
    .option('--follow', 'keep running and print each new alert state')
    .option('--json', 'JSON output (one document; with --follow, one JSON line per alert)')
    .action(async (flags: { state: string; entity?: string; limit: string; follow?: boolean; json?: boolean }) => {
      if (!(STATES as readonly string[]).includes(flags.state)) {
        throw new UsageError(`--state must be one of ${STATES.join(', ')}, got "${flags.state}"`);
      }
      const limit = Number(flags.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive integer`);
      const out = (text: string): void => void process.stdout.write(`${text}\n`);
      const { transport } = await clusterTransport('neon-spikes');
      const feed = await followSpikes(transport, TOPICS.spikes);
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
    });
}

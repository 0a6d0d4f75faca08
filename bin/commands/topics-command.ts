import type { Command } from 'commander';
import { UsageError } from '../../infra/cli-errors.js';
import { redactUrl } from '../../schemas/connection-config.js';
import type { StatusDocument } from '../../service/status-routes.js';
import { STAGE_CATALOG } from '../../streams/pipeline/stage-catalog.js';
import { stageLag } from '../../streams/telemetry/stage-lag.js';
import { clusterTransport } from './cluster-transport.js';
import { formatTable } from './format-table.js';
import { callService, findService } from './service-client.js';

interface StageRow {
  stage: string;
  group: string;
  reads: string[];
  lag: number | null;
  consumed: boolean;
}

/** Exit code when `--max-lag` is exceeded: scripts and probes can tell it from a failure (1). */
export const LAG_EXCEEDED_EXIT_CODE = 3;

/**
 * `neon topics` — each stage's consumer lag (records on its input topics its group has not committed
 * yet): from the running neon start/pipeline's API, or straight from Kafka.
 */
export function registerTopicsCommand(program: Command): void {
  program
    .command('topics')
    .description('lag per stage: records on each stage’s input topics not yet processed')
    .option('--api <url>', 'ask a running neon-stream (default: NEON_API_URL, or the running neon start)')
    .option('--max-lag <n>', `exit ${LAG_EXCEEDED_EXIT_CODE} when a stage lags by more than n records`)
    .option('--json', 'JSON output')
    .action(async (flags: { api?: string; maxLag?: string; json?: boolean }) => {
      const maxLag = flags.maxLag === undefined ? undefined : Number(flags.maxLag);
      if (maxLag !== undefined && !(Number.isInteger(maxLag) && maxLag >= 0)) {
        throw new UsageError('--max-lag must be a non-negative integer');
      }
      let rows: StageRow[];
      let from: string;
      const service = findService(flags.api);
      if (service) {
        const status = await callService<StatusDocument>(service, '/v1/status');
        from = `${redactUrl(service.url)} (${status.mode})`;
        rows = status.stages.map((s) => ({
          stage: s.stage,
          group: s.group,
          reads: STAGE_CATALOG.find((d) => d.name === s.stage)?.reads.slice() ?? [],
          lag: s.lag,
          consumed: s.running || s.lag !== null,
        }));
      } else {
        const { transport, brokers } = await clusterTransport('neon-topics');
        from = `Kafka ${brokers.join(',')}`;
        try {
          rows = await Promise.all(
            STAGE_CATALOG.map(async (stage) => {
              const found = await stageLag(transport, stage);
              return {
                stage: stage.name,
                group: stage.group,
                reads: [...stage.reads],
                lag: found.everCommitted ? found.lag : null,
                consumed: found.everCommitted,
              };
            }),
          );
        } finally {
          await transport.close();
        }
      }
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ from, stages: rows }, null, 2)}\n`);
      } else {
        process.stdout.write(`lag per stage, from ${from}\n`);
        process.stdout.write(
          `${formatTable(
            ['stage', 'group', 'reads', 'lag'],
            rows.map((r) => [r.stage, r.group, r.reads.join(','), r.lag === null ? 'no consumer' : String(r.lag)]),
          )}\n`,
        );
      }
      if (maxLag !== undefined && rows.some((r) => r.lag !== null && r.lag > maxLag)) {
        process.exitCode = LAG_EXCEEDED_EXIT_CODE;
      }
    });
}

import type { Command } from 'commander';
import { loadLocalInfraConfig, type LocalInfraConfig } from '../schemas/local-infra-config.js';
import {
  downLocalInfrastructure,
  localEndpoints,
  localInfrastructureStatus,
  upLocalInfrastructure,
} from './local-infrastructure.js';
import { runSelfCheck } from './self-check.js';

/**
 * Waits for SIGINT / SIGTERM while checking the services every few seconds; resolves with a reason
 * if one of them stops answering. The interval also keeps the event loop alive — signal listeners
 * alone do not, and Node would otherwise exit (skipping the clean-up) right after start-up.
 */
function stillStopping(): void {
  process.stdout.write('still stopping the servers; this takes a few seconds\n');
}

async function runUntilSignal(config: LocalInfraConfig): Promise<string | undefined> {
  return new Promise((resolve) => {
    let checking = false;
    const finish = (reason?: string): void => {
      clearInterval(watch);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      // Ctrl-C reaches us twice (from the terminal and relayed by a wrapper such as tsx or npm); a
      // second signal during clean-up must not kill us halfway through stopping the servers.
      process.on('SIGINT', stillStopping);
      process.on('SIGTERM', stillStopping);
      resolve(reason);
    };
    const onSignal = (): void => finish();
    const watch = setInterval(() => {
      if (checking) return;
      checking = true;
      void localInfrastructureStatus(config)
        .then((statuses) => {
          const down = statuses.filter((s) => s.state !== 'ready');
          if (down.length > 0) finish(down.map((s) => `${s.service} is ${s.state} (${s.detail})`).join('; '));
        })
        .finally(() => {
          checking = false;
        });
    }, 10_000);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/**
 * `neon start` — for now the foundation only: the streaming pipeline and the embedded transport are
 * not built yet, so this brings up local Kafka and Elasticsearch, proves both with a round trip, and
 * keeps them running until Ctrl-C / SIGTERM, then stops what it started.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'run neon-stream (today: local Kafka + Elasticsearch with a self-check; the full pipeline is not built yet)',
    )
    .option('--once', 'exit after the self-check instead of staying up')
    .action(async (flags: { once?: boolean }) => {
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      say('neon-stream: the embedded one-process mode is not built yet. Intake, markup, chunking, dedupe,');
      say('spike alerts, indexing and the query service run on Kafka + Elasticsearch with `neon pipeline`,');
      say('fed by `neon replay FILE` / `neon intake`, and `neon ask` answers (see the README); LLM extraction');
      say('is not built yet. This start brings up the infrastructure they run on and checks it end to end.');
      const config = loadLocalInfraConfig(process.env);
      const before = await localInfrastructureStatus(config);
      const alreadyRunning = new Set(before.filter((s) => s.state === 'ready').map((s) => s.service));
      await upLocalInfrastructure(config, undefined, say);
      const endpoints = localEndpoints(config);
      try {
        for (const line of await runSelfCheck(endpoints.kafkaBrokers, endpoints.elasticsearchUrl)) say(line);
        say(`ready: KAFKA_BROKERS=${endpoints.kafkaBrokers.join(',')} ES_URL=${endpoints.elasticsearchUrl}`);
        if (!flags.once) {
          say('press Ctrl-C to stop');
          const problem = await runUntilSignal(config);
          if (problem) {
            say(`stopping: ${problem}`);
            process.exitCode = 1;
          }
        }
      } finally {
        const ours = (['kafka', 'elasticsearch'] as const).filter((s) => !alreadyRunning.has(s));
        if (ours.length > 0) for (const line of await downLocalInfrastructure(config, ours)) say(line);
      }
    });
}

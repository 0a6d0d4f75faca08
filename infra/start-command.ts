import type { Command } from 'commander';
import { loadLocalInfraConfig } from '../schemas/local-infra-config.js';
import {
  downLocalInfrastructure,
  localEndpoints,
  localInfrastructureStatus,
  upLocalInfrastructure,
} from './local-infrastructure.js';
import { runSelfCheck } from './self-check.js';

/**
 * `neon start` — for now the foundation only: the streaming pipeline and the embedded transport are
 * not built yet, so this brings up local Kafka and Elasticsearch, proves both with a round trip, and
 * keeps them running until Ctrl-C / SIGTERM, then stops what it started.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'run neon-stream (today: local Kafka + Elasticsearch with a self-check; the pipeline is not built yet)',
    )
    .option('--once', 'exit after the self-check instead of staying up')
    .action(async (flags: { once?: boolean }) => {
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      say('neon-stream: the ingest → markup → chunk → dedupe → extract → index pipeline is not built yet.');
      say('This start brings up the infrastructure it will run on and checks it end to end.');
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
          await new Promise<void>((resolve) => {
            process.once('SIGINT', () => resolve());
            process.once('SIGTERM', () => resolve());
          });
        }
      } finally {
        const ours = (['kafka', 'elasticsearch'] as const).filter((s) => !alreadyRunning.has(s));
        if (ours.length > 0) for (const line of await downLocalInfrastructure(config, ours)) say(line);
      }
    });
}

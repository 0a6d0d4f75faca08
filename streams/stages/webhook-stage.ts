import {
  DEFAULT_WEBHOOK_RETRY,
  deliverWebhook,
  wantsAlert,
  type WebhookEndpoint,
  type WebhookRetry,
} from '../../processors/spikes/deliver-webhook.js';
import { alertKey } from '../../processors/spikes/spike-book.js';
import type { FetchAllowList } from '../../schemas/outbound-address-policy.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { alertJson } from '../../processors/spikes/alert-view.js';
import { stageDecoder } from '../runtime/record-codec.js';
import { startStage, stderrLogger, type RunningStage } from '../runtime/run-stage.js';
import { createGuardedFetch } from '../http/guarded-fetch.js';
import { StageError } from '../runtime/stage-error.js';
import type { Transport } from '../runtime/transport.js';
import { pipelineTopics, type StageBindingOptions } from '../pipeline/pipeline-topics.js';

export interface WebhookStageOptions extends StageBindingOptions {
  endpoints: readonly WebhookEndpoint[];
  retry?: Partial<WebhookRetry>;
  /** Internal addresses the endpoints may be on (`NEON_FETCH_ALLOW`); any other is refused. */
  fetchAllow?: FetchAllowList;
  /** Alerts delivered recently, remembered to skip a redelivered record. Default 10,000. */
  rememberDelivered?: number;
}

/**
 * `entity.spikes` → signed POSTs to the configured webhook endpoints (consumer group
 * `neon.webhooks`). An alert's offset is committed only once every endpoint that wants it has
 * answered 2xx, or has refused it for good (then it is dead-lettered with `webhook_failed` and the
 * endpoint and reason in the message), so a restart re-sends what was not delivered and nothing
 * else. Receivers dedupe on `x-neon-alert-id`; a record repeated on the topic is also skipped here
 * while it is remembered. Bounded: the runtime's in-flight limit caps concurrent deliveries.
 */
export async function startWebhookStage(transport: Transport, options: WebhookStageOptions): Promise<RunningStage> {
  const topics = pipelineTopics(options.topics);
  const retry = { ...DEFAULT_WEBHOOK_RETRY, ...options.retry };
  const send = createGuardedFetch(options.fetchAllow === undefined ? {} : { allow: options.fetchAllow });
  const remember = options.rememberDelivered ?? 10_000;
  const delivered = new Set<string>();
  const log = options.log ?? stderrLogger;
  return startStage<SpikeAlert>(transport, {
    name: 'webhooks',
    ...(options.groupId ? { groupId: options.groupId } : {}),
    inputTopics: [topics.spikes],
    deadLetterTopic: topics.deadLetters,
    decode: stageDecoder('SpikeAlert'),
    // Deliveries retry for minutes; keep the bound low so a dead endpoint holds back little.
    maxInFlight: options.maxInFlight ?? 32,
    process: async ({ value: alert }) => {
      const key = alertKey(alert);
      if (delivered.has(key)) return [];
      const payload = alertJson(alert);
      const wanted = options.endpoints.filter((endpoint) => wantsAlert(endpoint, alert));
      const outcomes = await Promise.all(
        wanted.map((endpoint) => deliverWebhook(endpoint, payload, alert, send, retry)),
      );
      const failures = outcomes.flatMap((outcome, i) =>
        outcome.ok ? [] : [`${new URL(wanted[i]!.url).origin}: ${outcome.reason} after ${outcome.attempts} attempts`],
      );
      delivered.add(key);
      if (delivered.size > remember) delivered.delete(delivered.values().next().value!);
      if (failures.length > 0) {
        log('warn', 'webhook delivery failed', { stage: 'webhooks', alert: key, failures: failures.length });
        throw new StageError('webhook_failed', `alert ${key} not delivered: ${failures.join('; ')}`, 'webhooks');
      }
      return [];
    },
    sinks: {},
    ...(options.metrics ? { metrics: options.metrics } : {}),
    log,
  });
}

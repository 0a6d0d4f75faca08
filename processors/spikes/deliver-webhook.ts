/**
 * Pushes spike alerts to HTTP endpoints, signed so receivers can trust them:
 *
 *   POST <url>
 *   content-type: application/json
 *   x-neon-event: spike
 *   x-neon-alert-id: <spike id>/<state>/<window end>/<observed>   (the same for a redelivered alert: dedupe on it)
 *   idempotency-key: <same>
 *   x-neon-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the endpoint's secret>
 *
 * A receiver recomputes the HMAC over the timestamp and the raw body and rejects stale timestamps
 * (replay protection). 2xx is delivered; 408, 429 and 5xx and network errors are retried with
 * jittered exponential backoff (honouring Retry-After); other 4xx are refused for good, and so is an
 * endpoint on an address the outbound policy refuses (`address_refused: …`, see
 * schemas/outbound-address-policy): the fetch given is the guarded one of streams/http/guarded-fetch.
 */
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { redactUrl, Secret } from '../../schemas/connection-config.js';
import { addressRefusalIn } from '../../schemas/outbound-address-policy.js';
import type { SpikeAlert, SpikeGranularity, SpikeState } from '../../schemas/records.generated.js';
import { parseRetryAfter, retryDelay } from '../retry/backoff.js';
import { alertKey } from './spike-book.js';

export interface WebhookEndpoint {
  url: string;
  /** Shared secret for the signature; prints as <redacted>. */
  secret: Secret;
  states: readonly SpikeState[];
  granularities: readonly SpikeGranularity[];
}

export interface WebhookRetry {
  attempts: number;
  baseMs: number;
  capMs: number;
  timeoutMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetry = { attempts: 6, baseMs: 500, capMs: 30_000, timeoutMs: 10_000 };

export type WebhookOutcome = { ok: true; attempts: number } | { ok: false; attempts: number; reason: string };

export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
  return `t=${timestampSeconds},v1=${mac}`;
}

export function wantsAlert(endpoint: WebhookEndpoint, alert: SpikeAlert): boolean {
  return endpoint.states.includes(alert.state) && endpoint.granularities.includes(alert.granularity);
}

/** Delivers one alert to one endpoint, retrying what may succeed later; never throws. */
export async function deliverWebhook(
  endpoint: WebhookEndpoint,
  payload: Record<string, unknown>,
  alert: SpikeAlert,
  send: typeof globalThis.fetch,
  retry: WebhookRetry = DEFAULT_WEBHOOK_RETRY,
  now: () => number = Date.now,
): Promise<WebhookOutcome> {
  const body = JSON.stringify({ type: 'spike', alert: payload });
  const key = alertKey(alert);
  let reason = 'not attempted';
  for (let attempt = 1; attempt <= retry.attempts; attempt++) {
    let wait: number | undefined;
    try {
      const timestamp = Math.floor(now() / 1000);
      const response = await send(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'neon-stream-webhooks',
          'x-neon-event': 'spike',
          'x-neon-alert-id': key,
          'idempotency-key': key,
          'x-neon-signature': signWebhook(endpoint.secret.reveal(), timestamp, body),
        },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(retry.timeoutMs),
      });
      await response.body?.cancel();
      if (response.ok) return { ok: true, attempts: attempt };
      reason = `HTTP ${response.status}`;
      const retriable = response.status === 408 || response.status === 429 || response.status >= 500;
      if (!retriable) return { ok: false, attempts: attempt, reason };
      wait = parseRetryAfter(response.headers.get('retry-after'), Date.now());
    } catch (error) {
      const refusal = addressRefusalIn(error);
      if (refusal !== undefined) return { ok: false, attempts: attempt, reason: `address_refused: ${refusal.message}` };
      // Connection refused, reset, DNS, timeout: the endpoint may come back.
      reason = error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'unreachable';
    }
    if (attempt < retry.attempts) {
      await sleep(retryDelay(attempt, retry, Math.random, wait));
    }
  }
  return { ok: false, attempts: retry.attempts, reason };
}

const STATES = ['STARTED', 'ONGOING', 'ENDED'] as const;

/**
 * `NEON_WEBHOOK_URLS` (comma-separated http(s) URLs), `NEON_WEBHOOK_SECRET` (required with them),
 * `NEON_WEBHOOK_STATES` (default STARTED,ENDED), `NEON_WEBHOOK_GRANULARITIES` (default DAY,HOUR).
 * Every problem is listed at once.
 */
export const webhookEnvSchema = z
  .object({
    NEON_WEBHOOK_URLS: z.string().optional(),
    NEON_WEBHOOK_SECRET: z.string().optional(),
    NEON_WEBHOOK_STATES: z.string().default('STARTED,ENDED'),
    NEON_WEBHOOK_GRANULARITIES: z.string().default('DAY,HOUR'),
  })
  .transform((env, ctx) => {
    const urls = (env.NEON_WEBHOOK_URLS ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter((u) => u !== '');
    for (const url of urls) {
      if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
        ctx.addIssue({
          code: 'custom',
          path: ['NEON_WEBHOOK_URLS'],
          message: `${redactUrl(url)} is not an http(s) URL`,
        });
      }
    }
    if (urls.length > 0 && (env.NEON_WEBHOOK_SECRET ?? '').length < 16) {
      ctx.addIssue({
        code: 'custom',
        path: ['NEON_WEBHOOK_SECRET'],
        message: 'a secret of at least 16 characters is required to sign webhooks',
      });
    }
    const states = env.NEON_WEBHOOK_STATES.split(',').map((s) => s.trim().toUpperCase());
    for (const state of states) {
      if (!(STATES as readonly string[]).includes(state)) {
        ctx.addIssue({ code: 'custom', path: ['NEON_WEBHOOK_STATES'], message: `unknown state ${state}` });
      }
    }
    const granularities = env.NEON_WEBHOOK_GRANULARITIES.split(',').map((s) => s.trim().toUpperCase());
    for (const g of granularities) {
      if (g !== 'DAY' && g !== 'HOUR') {
        ctx.addIssue({ code: 'custom', path: ['NEON_WEBHOOK_GRANULARITIES'], message: `unknown granularity ${g}` });
      }
    }
    const secret = env.NEON_WEBHOOK_SECRET ?? '';
    return urls.map((url): WebhookEndpoint => ({
      url,
      secret: new Secret(secret),
      states: states as SpikeState[],
      granularities: granularities as SpikeGranularity[],
    }));
  });

import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  deliverWebhook,
  signWebhook,
  wantsAlert,
  webhookEnvSchema,
  type WebhookEndpoint,
} from '../../processors/spikes/deliver-webhook.js';
import { Secret } from '../../schemas/connection-config.js';
import { parseFetchAllowList } from '../../schemas/outbound-address-policy.js';
import type { SpikeAlert } from '../../schemas/records.generated.js';
import { createGuardedFetch } from '../../streams/http/guarded-fetch.js';
import { FIXTURES } from './avro-fixtures.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A receiver answering with the given statuses in turn (then 200), recording every request. */
async function receiver(
  statuses: number[],
  headers: Record<string, string> = {},
): Promise<{ url: string; got: Received[] }> {
  const got: Received[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      res.writeHead(statuses.shift() ?? 200, headers).end();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

const alert: SpikeAlert = FIXTURES.SpikeAlert;
const fast = { attempts: 4, baseMs: 1, capMs: 20, timeoutMs: 500 };
/** The receivers listen on loopback, which the product refuses unless the operator allows it. */
const send = createGuardedFetch({ allow: parseFetchAllowList('127.0.0.1') });

function endpoint(url: string): WebhookEndpoint {
  return { url, secret: new Secret('s3cret-s3cret-s3cret'), states: ['STARTED', 'ENDED'], granularities: ['DAY'] };
}

describe('webhook delivery', () => {
  it('posts the alert signed with HMAC-SHA256 over "<t>.<body>", with an idempotency key', async () => {
    const { url, got } = await receiver([]);
    const outcome = await deliverWebhook(endpoint(url), { id: alert.id }, alert, send, fast, () => 1_700_000_000_000);
    expect(outcome).toEqual({ ok: true, attempts: 1 });
    const [request] = got;
    expect(JSON.parse(request!.body)).toEqual({ type: 'spike', alert: { id: alert.id } });
    const expected = createHmac('sha256', 's3cret-s3cret-s3cret').update(`1700000000.${request!.body}`).digest('hex');
    expect(request!.headers['x-neon-signature']).toBe(`t=1700000000,v1=${expected}`);
    expect(request!.headers['x-neon-alert-id']).toBe(`${alert.id}/STARTED/${alert.window_end}/${alert.observed}`);
    expect(request!.headers['idempotency-key']).toBe(request!.headers['x-neon-alert-id']);
    expect(signWebhook('k', 1, 'b')).toMatch(/^t=1,v1=[0-9a-f]{64}$/);
  });

  it('retries 5xx and 429 (honouring Retry-After) and gives up on other 4xx at once', async () => {
    const flaky = await receiver([503, 429, 500], { 'retry-after': '0' });
    expect(await deliverWebhook(endpoint(flaky.url), {}, alert, send, fast)).toEqual({ ok: true, attempts: 4 });
    expect(flaky.got).toHaveLength(4);
    await new Promise((resolve) => server!.close(resolve));
    const refusing = await receiver([410]);
    expect(await deliverWebhook(endpoint(refusing.url), {}, alert, send, fast)).toEqual({
      ok: false,
      attempts: 1,
      reason: 'HTTP 410',
    });
  });

  it('reports an unreachable endpoint after its attempts', async () => {
    const outcome = await deliverWebhook(endpoint('http://127.0.0.1:1/hook'), {}, alert, send, fast);
    expect(outcome).toEqual({ ok: false, attempts: 4, reason: 'unreachable' });
  });

  it('filters by state and granularity', () => {
    const e = endpoint('http://x.example');
    expect(wantsAlert(e, alert)).toBe(true);
    expect(wantsAlert(e, { ...alert, state: 'ONGOING' })).toBe(false);
    expect(wantsAlert(e, { ...alert, granularity: 'HOUR' })).toBe(false);
  });

  it('reads endpoints from the environment, lists every problem, and never prints the secret', () => {
    const parsed = webhookEnvSchema.parse({
      NEON_WEBHOOK_URLS: 'https://a.example/h, http://b.example/h',
      NEON_WEBHOOK_SECRET: 'a-long-enough-secret',
      NEON_WEBHOOK_STATES: 'started',
    });
    expect(parsed.map((e) => e.url)).toEqual(['https://a.example/h', 'http://b.example/h']);
    expect(parsed[0]!.states).toEqual(['STARTED']);
    expect(inspect(parsed)).not.toContain('a-long-enough-secret');
    expect(JSON.stringify(parsed)).not.toContain('a-long-enough-secret');
    expect(webhookEnvSchema.parse({})).toEqual([]);
    const bad = webhookEnvSchema.safeParse({
      NEON_WEBHOOK_URLS: 'ftp://x',
      NEON_WEBHOOK_SECRET: 'short',
      NEON_WEBHOOK_GRANULARITIES: 'WEEK',
    });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.path[0]).sort()).toEqual([
      'NEON_WEBHOOK_GRANULARITIES',
      'NEON_WEBHOOK_SECRET',
      'NEON_WEBHOOK_URLS',
    ]);
  });
});

/**
 * DNS rebinding: a web page on `attacker.example` makes its name resolve to 127.0.0.1 and then reads
 * a keyless API on loopback as if it were same-origin. What gives it away is the Host header, which
 * still names the attacker's domain. An API without keys bound to loopback therefore answers only
 * requests addressed to a loopback name or address.
 */
import type { FastifyInstance } from 'fastify';
import { isIPv4 } from 'node:net';

/** A listen address that only this machine can reach. */
export function isLoopbackAddress(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost') return true;
  if (isIPv4(name)) return name.startsWith('127.');
  return name === '::1' || name === '0:0:0:0:0:0:0:1' || name === '::ffff:127.0.0.1';
}

/**
 * A Host header naming loopback: `localhost`, an address of 127.0.0.0/8, or `[::1]`, with or
 * without a port. Anything else (another name, a malformed header, none) is not.
 */
export function isLoopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return false;
  const found = /^(\[[^\]]*\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(header.trim());
  if (found === null) return false;
  const host = found[1]!;
  if (host.startsWith('[')) return isLoopbackAddress(host.slice(1, -1)) && host.slice(1, -1).includes(':');
  return isLoopbackAddress(host);
}

/**
 * Answers 421 Misdirected Request to every request of `app` whose Host header is not a loopback
 * name or address. Register before the routes.
 */
export function refuseForeignHosts(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const host = request.headers.host;
    if (isLoopbackHostHeader(host)) return undefined;
    const shown = host === undefined ? 'none' : JSON.stringify(host.slice(0, 100));
    return reply
      .code(421)
      .type('application/json')
      .send({
        error: 'misdirected_request',
        message:
          `this API runs without API keys on a loopback address and answers only requests addressed to ` +
          `127.0.0.1, localhost or [::1] (Host: ${shown}); set NEON_API_KEYS to serve it under other names`,
      });
  });
}

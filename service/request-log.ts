/**
 * The HTTP servers log through the product's pino logger (levels, redaction and the line format of
 * `streams/telemetry/logger.ts`), as a child bound to `{ component }`.
 *
 * Fastify's own request log writes two info lines per request; the dashboard polls and the spike
 * stream reconnects, so at info that would drown the stage lines. One line per request is written
 * instead, at debug (`NEON_LOG_LEVEL=debug` shows them), and at warn for a 5xx. The query string is
 * left out: it carries the user's question, which is their data, not the operator's. Below debug the
 * servers log from warn up: their info lines ("Server listening", a 404) would interleave with the
 * CLI's own output and say nothing the CLI does not already print.
 */
import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import { rootLogger } from '../streams/telemetry/logger.js';

class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      path: request.url.split('?', 1)[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else if (reply.statusCode >= 500) reply.log.warn(fields, 'request failed');
    else reply.log.debug(fields, 'request');
  }
}

/** Fastify options for a server that logs through `logger` (default: the process's root logger). */
export function serverLogOptions(
  component: string,
  logger: Logger = rootLogger(),
): Pick<FastifyServerOptions, 'loggerInstance' | 'logController'> {
  const level = logger.isLevelEnabled('debug') ? logger.level : logger.isLevelEnabled('warn') ? 'warn' : logger.level;
  return { loggerInstance: logger.child({ component }, { level }), logController: new OneLinePerRequest() };
}

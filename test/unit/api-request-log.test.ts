import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from '../../service/api-server.js';
import { hubFeed, SpikeHub } from '../../streams/views/spike-feed.js';
import { createLogger, type LogThreshold } from '../../streams/telemetry/logger.js';

/** The API's request lines go through the product logger: one per request, at debug, without the query. */
function capture(level: LogThreshold) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, destination }), lines };
}

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function serve(level: LogThreshold, status?: () => Promise<never>) {
  const { logger, lines } = capture(level);
  api = await startApiServer({ port: 0, spikes: hubFeed(new SpikeHub()), logger, ...(status ? { status } : {}) });
  return { url: api.url, lines };
}

describe('the API request log', () => {
  it('writes one debug line per request with route, path and status, and never the query string', async () => {
    const { url, lines } = await serve('debug');
    const response = await fetch(`${url}/v1/spikes?date=2025-01-20&q=private+question`);
    await response.arrayBuffer();
    await expect.poll(() => lines.filter((l) => l.message === 'request').length).toBe(1);
    const [line] = lines.filter((l) => l.message === 'request');
    expect(line).toMatchObject({ level: 'debug', component: 'api', method: 'GET', path: '/v1/spikes' });
    expect(line!.status).toBe(response.status);
    expect(typeof line!.ms).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('private');
  });

  it('is quiet at info for answered requests and warns on a 5xx', async () => {
    const { url, lines } = await serve('info', () => Promise.reject(new Error('elasticsearch away')));
    await (await fetch(`${url}/v1/spikes`)).arrayBuffer();
    const failed = await fetch(`${url}/v1/status`);
    await failed.arrayBuffer();
    expect(failed.status).toBeGreaterThanOrEqual(500);
    await expect.poll(() => lines.filter((l) => l.message === 'request failed').length).toBe(1);
    expect(lines.filter((l) => l.message === 'request')).toEqual([]);
    expect(lines.find((l) => l.message === 'request failed')).toMatchObject({
      level: 'warn',
      route: '/v1/status',
      status: failed.status,
    });
  });
});

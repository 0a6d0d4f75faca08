import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  createLogger,
  logLevelFromEnv,
  stageLogger,
  stageLoggerFrom,
  type LogThreshold,
} from '../../streams/telemetry/logger.js';

function capture(level: LogThreshold = 'info') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString()
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  const logger = createLogger({ level, destination });
  const parsed = (): Record<string, unknown>[] => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, parsed };
}

describe('the product logger', () => {
  it('writes JSON lines with a level word, an ISO time and a message', () => {
    const { logger, parsed } = capture();
    stageLoggerFrom(logger)('warn', 'dead-lettered', { code: 'mapping_error', offset: '12' });
    const [line] = parsed();
    expect(line).toMatchObject({ level: 'warn', message: 'dead-lettered', code: 'mapping_error', offset: '12' });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
    expect(line).not.toHaveProperty('msg');
    expect(line).not.toHaveProperty('pid');
    expect(line).not.toHaveProperty('hostname');
  });

  it('drops lines below its level', () => {
    const { logger, parsed } = capture('warn');
    const log = stageLoggerFrom(logger);
    log('info', 'quiet');
    log('warn', 'loud');
    log('error', 'louder');
    expect(parsed().map((l) => l.message)).toEqual(['loud', 'louder']);
  });

  it('logs each stage through its own child, naming the stage once', () => {
    const { logger, lines, parsed } = capture();
    const log = stageLoggerFrom(logger);
    log('warn', 'a', { stage: 'index', topic: 't' });
    log('warn', 'b', { stage: 'dedupe' });
    stageLogger('markup', logger)('error', 'c', { stage: 'ignored-duplicate' });
    expect(parsed().map((l) => [l.stage, l.message])).toEqual([
      ['index', 'a'],
      ['dedupe', 'b'],
      ['markup', 'c'],
    ]);
    for (const line of lines) expect(line.match(/"stage":/g)).toHaveLength(1);
  });

  it('redacts credentials in fields, headers, nested objects, URLs and the message', () => {
    const { logger, lines, parsed } = capture();
    stageLoggerFrom(logger)('error', 'GET https://reader:hunter2@feeds.example/rss?api_key=zz-K1 failed', {
      stage: 'intake',
      feed: 'https://reader:hunter2@feeds.example/rss?token=zz-T1&page=2',
      headers: { authorization: 'Bearer zz-B1', 'x-api-key': 'zz-K2', accept: 'text/html' },
      password: 'zz-P1',
      apiKey: 'zz-K3',
      request: { token: 'zz-T2', headers: { authorization: 'Basic zz-B2' }, urls: ['http://u:p@h.example/'] },
    });
    const text = lines.join('\n');
    for (const secret of [
      'hunter2',
      'reader',
      'zz-K1',
      'zz-T1',
      'zz-B1',
      'zz-K2',
      'zz-P1',
      'zz-K3',
      'zz-T2',
      'zz-B2',
      'u:p@',
    ]) {
      expect(text).not.toContain(secret);
    }
    const [line] = parsed();
    expect(line).toMatchObject({
      feed: 'https://<redacted>@feeds.example/rss?token=<redacted>&page=2',
      headers: { authorization: '<redacted>', 'x-api-key': '<redacted>', accept: 'text/html' },
      password: '<redacted>',
      apiKey: '<redacted>',
      request: {
        token: '<redacted>',
        headers: { authorization: '<redacted>' },
        urls: ['http://<redacted>@h.example/'],
      },
      message: 'GET https://<redacted>@feeds.example/rss?api_key=<redacted> failed',
    });
  });
});

describe('logLevelFromEnv', () => {
  it('defaults to info and reads the levels pino knows, in any case', () => {
    expect(logLevelFromEnv({})).toBe('info');
    expect(logLevelFromEnv({ NEON_LOG_LEVEL: '' })).toBe('info');
    expect(logLevelFromEnv({ NEON_LOG_LEVEL: 'debug' })).toBe('debug');
    expect(logLevelFromEnv({ NEON_LOG_LEVEL: ' WARN ' })).toBe('warn');
    expect(logLevelFromEnv({ NEON_LOG_LEVEL: 'silent' })).toBe('silent');
  });

  it('refuses a level it does not know, naming the ones it does', () => {
    expect(() => logLevelFromEnv({ NEON_LOG_LEVEL: 'verbose' })).toThrow(/NEON_LOG_LEVEL: must be one of trace, debug/);
  });
});

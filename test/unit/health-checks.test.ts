import { describe, expect, it } from 'vitest';
import { healthFrom } from '../../streams/telemetry/health-checks.js';

describe('healthFrom', () => {
  it('is live and ready when nothing died and every dependency answers', async () => {
    const health = healthFrom(() => [], [{ name: 'Kafka', run: () => Promise.resolve() }]);
    expect(await health()).toEqual({ live: true, ready: true, problems: [] });
  });

  it('names the dependency that fails or does not answer in time, and stays live', async () => {
    const health = healthFrom(
      () => [],
      [
        { name: 'Kafka', run: () => Promise.reject(new Error('connection refused')) },
        { name: 'Elasticsearch', run: () => new Promise(() => undefined) },
      ],
      { timeoutMs: 20 },
    );
    expect(await health()).toEqual({
      live: true,
      ready: false,
      problems: ['Kafka: connection refused', 'Elasticsearch: no answer within 20 ms'],
    });
  });

  it('is not live once the caller reports a dead stage', async () => {
    const health = healthFrom(() => ['stage chunk stopped'], []);
    expect(await health()).toEqual({ live: false, ready: true, problems: ['stage chunk stopped'] });
  });

  it('reuses a dependency answer within the cache window, then asks again', async () => {
    let clock = 0;
    let calls = 0;
    const health = healthFrom(() => [], [{ name: 'Kafka', run: () => Promise.resolve(calls++) }], {
      cacheMs: 1000,
      now: () => clock,
    });
    await health();
    await health();
    expect(calls).toBe(1);
    clock = 1000;
    await health();
    expect(calls).toBe(2);
  });
});

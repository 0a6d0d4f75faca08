import { defineConfig } from 'vitest/config';

/**
 * Two tiers: `unit` (pure logic, no servers, parallel) and `integration` (real Kafka and
 * Elasticsearch found or started once by the global setup; files run one at a time so a 2-core
 * machine is not oversubscribed while the servers are also running).
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          testTimeout: 15_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});

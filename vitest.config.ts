import { defineConfig } from 'vitest/config';

/**
 * Two projects:
 * - `unit`: pure logic and in-process runs (the embedded product included), no servers, parallel;
 *   the evaluation's own tests (`eval/test/`) too, since tests may not import `eval/`;
 * - `integration`: everything that needs real Kafka and Elasticsearch, found or started once by the
 *   global setup, plus the end-to-end tests of `test/e2e/` (the product as a subprocess in both
 *   modes, the dashboard in a real Chromium). Files run one at a time in one process, so a 2-core
 *   machine is not oversubscribed while the servers (and a browser) also run, and the servers are
 *   set up once. `npm run test:e2e` runs the end-to-end files alone.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'eval/test/**/*.test.ts'],
          testTimeout: 15_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          setupFiles: ['test/harness/deep-stacks.ts'],
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 120_000,
          // Installing Chromium (apt-get) on a fresh machine takes a few minutes.
          hookTimeout: 600_000,
        },
      },
    ],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster test runs on its own (test/cluster/vitest.config.ts; .ci/run).
    exclude: ['test/cluster/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Two cores: integration files each bundle workflows and run LibreOffice/Temporal work.
    maxWorkers: 2,
  },
});

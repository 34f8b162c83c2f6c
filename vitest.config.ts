import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Two cores: integration files each bundle workflows and run LibreOffice/Temporal work.
    maxWorkers: 2,
  },
});

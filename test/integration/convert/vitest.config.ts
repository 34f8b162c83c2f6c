// Runs only the converter's tests, without the project's global setup (Temporal + PostgreSQL), which
// these tests do not need: `npx vitest run --config test/integration/convert/vitest.config.ts`.
// CI runs them through the project's vitest.config.ts like every other test.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..'),
  test: {
    include: ['test/integration/convert/**/*.test.ts', 'test/unit/convert/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 180_000,
    maxWorkers: 2,
  },
});

// The inner loop: `npm run test:fast`. Engine, core and unit tests, without the global setup (no Temporal,
// PostgreSQL or S3 server is started), in the project's test settings otherwise. `npm test` runs them too.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.ts';

export default defineConfig({
  ...base,
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  test: {
    ...base.test,
    include: ['test/unit/**/*.test.ts'],
    globalSetup: [],
  },
});

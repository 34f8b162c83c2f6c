// The cluster test alone (long: a Temporal server, four docgen processes, N generations), with the project's
// global setup for PostgreSQL and the S3 server: `npx vitest run --config test/cluster/vitest.config.ts`.
// `npm test` leaves it out; .ci/run runs it after the other suites.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { WASM_CODE_GC_OFF, wasmCodeGcAffected } from '../../cli/node-runtime.ts';

export default defineConfig({
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  test: {
    include: ['test/cluster/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    execArgv: wasmCodeGcAffected() ? [WASM_CODE_GC_OFF] : [],
    testTimeout: 600_000,
    hookTimeout: 300_000,
  },
});

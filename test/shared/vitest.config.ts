// The suite that reads material from outside the repository (the docxtemplater conformance corpus beside the
// checkout, DOCGEN_SHARED_DIR): `npm run test:shared`, run by .ci/run after `npm test`. No Temporal, PostgreSQL
// or S3 server; the LibreOffice tests start their own pool.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../../vitest.config.ts';

export default defineConfig({
  ...base,
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..'),
  test: {
    ...base.test,
    include: ['test/shared/**/*.test.ts'],
    exclude: ['node_modules/**'],
    globalSetup: [],
  },
});

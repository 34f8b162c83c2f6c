import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { WASM_CODE_GC_OFF, wasmCodeGcAffected } from './cli/node-runtime.ts';

// Fakes of HTTPS-only services (test/support/https.ts) use a certificate from the test CA. Node reads
// NODE_EXTRA_CA_CERTS at start-up, so it is set here, before the test processes are forked (children that
// tests spawn inherit it); a bundle already named there (e.g. the system's) is kept, with the test CA added.
const testCa = path.join(path.dirname(fileURLToPath(import.meta.url)), 'test/support/tls/ca.pem');
const extra = process.env.NODE_EXTRA_CA_CERTS;
if (extra && extra !== testCa && fs.existsSync(extra)) {
  const bundle = path.join(os.tmpdir(), `docgen-test-ca-${process.pid}.pem`);
  fs.writeFileSync(bundle, `${fs.readFileSync(extra, 'utf8')}\n${fs.readFileSync(testCa, 'utf8')}`);
  process.env.NODE_EXTRA_CA_CERTS = bundle;
} else {
  process.env.NODE_EXTRA_CA_CERTS = testCa;
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The cluster test runs on its own (test/cluster/vitest.config.ts; .ci/run), and so do the tests that read
    // material from outside the repository (test/shared/vitest.config.ts: `npm run test:shared`).
    exclude: ['test/cluster/**', 'test/shared/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Test processes run PGlite, resvg and undici in-process: same V8 setting as the service (cli/node-runtime.ts).
    execArgv: wasmCodeGcAffected() ? [WASM_CODE_GC_OFF] : [],
    // A bound for a test that hangs, not a speed check (tests assert outcomes; the benchmarks measure speed):
    // generous, since a test started beside other suites on a loaded 2-core machine is slow, not wrong.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Two cores: integration files each bundle workflows and run LibreOffice/Temporal work.
    maxWorkers: 2,
  },
});

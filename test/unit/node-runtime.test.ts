// cli/node-runtime.ts turns V8's wasm code GC off on Node 24 (nodejs/node#66366: a double free of a wasm
// import wrapper aborts the process). The crash is a race too rare to provoke in a test; what is checked
// is that the setting takes hold: a process that opens, queries and closes a PGlite instance (wasm) collects wasm
// code, and the same process that imported the module first collects none. V8 traces its wasm code GC.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { wasmCodeGcAffected } from '../../cli/node-runtime.ts';

const root = path.resolve(import.meta.dirname, '../..');

function wasmCodeGcRuns(importRuntimeFirst: boolean): number {
  const script = `
    ${importRuntimeFirst ? "await import('./cli/node-runtime.ts');" : ''}
    const { PGlite } = await import('@electric-sql/pglite');
    const pg = await PGlite.create();
    for (let j = 0; j < 50; j++) await pg.query('select $1::int + 1 as x', [j]);
    await pg.close();
    globalThis.gc();`;
  // The test process runs with the flag off (vitest.config.ts); the children are started without it.
  const run = spawnSync(process.execPath, ['--expose-gc', '--trace-wasm-code-gc', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return (run.stdout.match(/\[wasm-gc\] Starting GC/g) ?? []).length;
}

describe('V8 settings of docgen processes', () => {
  it('wasm code GC is off on Node 24 once cli/node-runtime.ts is imported, and on otherwise', () => {
    expect(wasmCodeGcAffected('24.21.0')).toBe(true);
    expect(wasmCodeGcAffected('26.10.0')).toBe(false);
    expect(wasmCodeGcRuns(false)).toBeGreaterThan(0);
    const withRuntime = wasmCodeGcRuns(true);
    if (wasmCodeGcAffected()) expect(withRuntime).toBe(0);
    else expect(withRuntime).toBeGreaterThan(0);
  });
});

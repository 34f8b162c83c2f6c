// `npx docgen ...` on a machine whose own `node` is older than 24: npm runs on that node and installs the
// project into its npx cache first, checking the project's `engines` against it, which printed two
// EBADENGINE warnings (ten lines) before every such command, although docgen itself runs on the Node 24
// that `npm ci` put in node_modules (cli/docgen.mjs refuses an older one, saying how to get it). Here the
// real npx runs with an older Node's version reported to it and a fresh npm cache (as on a first run).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/docgen-start.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-npx-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** npm's npx, found as a user's shell finds it. */
function npxCli(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'npx');
    if (fs.existsSync(candidate)) return fs.realpathSync(candidate);
  }
  throw new Error('npx is not on PATH');
}

describe('npx docgen on a machine whose node is older', () => {
  it("prints the command's output and no EBADENGINE warning", { timeout: 120_000 }, async () => {
    const preload = path.join(tmp, 'node-20.cjs');
    fs.writeFileSync(preload, "Object.defineProperty(process, 'version', { value: 'v20.19.0' });\n");
    const env = {
      ...process.env,
      npm_config_cache: path.join(tmp, 'npm-cache'),
      npm_config_update_notifier: 'false',
      // docgen's own process: the Node 24 of node_modules, as `npm ci` arranges.
      PATH: `${path.join(repoRoot, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    };
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--require', preload, npxCli(), 'docgen', 'config', '--help'], {
      cwd: repoRoot,
      env,
    });
    expect(stdout).toContain('docgen config');
    expect(stderr).not.toContain('EBADENGINE');
  });
});

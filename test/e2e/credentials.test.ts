// `docgen credentials` where no service runs: it says so and how to point at one, and creates nothing
// (it used to mint keys into a new embedded database that no service reads: every request then got 401).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { docgenBin, repoRoot } from '../support/docgen-start.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-credentials-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('docgen credentials with no service at the data directory', () => {
  it('refuses, names the directory and how to point at a service, and writes nothing', async () => {
    const dataDir = path.join(tmp, 'data');
    const { DATABASE_URL: _db, ...env } = process.env;
    const res = await promisify(execFile)(process.execPath, [docgenBin, 'credentials', '--json'], {
      cwd: repoRoot,
      env: { ...env, DOCGEN_DATA_DIR: dataDir },
    }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain(`no docgen service is running from ${dataDir}`);
    expect(res.stderr).toContain('DOCGEN_DATA_DIR=');
    expect(res.stderr).toContain('DATABASE_URL=');
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});

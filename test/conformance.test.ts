import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const checker = path.resolve(repoRoot, '..', 'shared', 'conformance', 'docxtemplater', 'check.mjs');

describe('docxtemplater conformance corpus', () => {
  it('renders every case like docxtemplater does', async () => {
    expect(existsSync(checker), `conformance checker not found at ${checker}`).toBe(true);
    const run = promisify(execFile);
    const { code, stdout, stderr } = await run(process.execPath, ['--import', 'tsx', checker, '--engine', './test/support/engine.ts'], {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
    );
    const lines = stdout.trim().split('\n');
    const last = lines[lines.length - 1] ?? '';
    expect({ code, failures: lines.filter((l) => l.startsWith('FAIL')), stderr: stderr.slice(0, 2000) }).toEqual({ code: 0, failures: [], stderr: '' });
    expect(last).toMatch(/^(\d+) passed, 0 failed$/);
    expect(Number(/^(\d+)/.exec(last)?.[1])).toBeGreaterThanOrEqual(62);
  }, 120_000);
});

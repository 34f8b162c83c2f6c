import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { docxtemplaterCorpus, repoRoot, requireShared } from './corpus.ts';

requireShared();
const checker = path.join(docxtemplaterCorpus, 'check.mjs');
// docgen's own cases, in the shared corpus's format (test/conformance/docxtemplater/README.md).
const ownCases = path.join(repoRoot, 'test', 'conformance', 'docxtemplater', 'cases.json');

/** Runs the shared checker with the test engine (which keeps every output for schema validation). */
async function check(extra: string[]): Promise<{ code: number; failures: string[]; stderr: string; passed: number; last: string }> {
  const run = promisify(execFile);
  const { code, stdout, stderr } = await run(
    process.execPath,
    ['--import', 'tsx', checker, '--engine', './test/support/engine.ts', ...extra],
    {
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof e.code === 'number' ? e.code : 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    }),
  );
  const lines = stdout.trim().split('\n');
  const last = lines[lines.length - 1] ?? '';
  return {
    code,
    failures: lines.filter((l) => l.startsWith('FAIL')),
    stderr: stderr.slice(0, 2000),
    passed: Number(/^(\d+) passed/.exec(last)?.[1] ?? 0),
    last,
  };
}

describe('docxtemplater conformance corpus', () => {
  it('renders every case like docxtemplater does', async () => {
    expect(existsSync(checker), `conformance checker not found at ${checker}`).toBe(true);
    const r = await check([]);
    expect({ code: r.code, failures: r.failures, stderr: r.stderr }).toEqual({ code: 0, failures: [], stderr: '' });
    expect(r.last).toMatch(/^(\d+) passed, 0 failed$/);
    expect(r.passed).toBeGreaterThanOrEqual(62);
  }, 120_000);

  it("renders docgen's own cases (more of docxtemplater's fixtures) like docxtemplater does", async () => {
    const r = await check(['--cases', ownCases]);
    expect({ code: r.code, failures: r.failures, stderr: r.stderr }).toEqual({ code: 0, failures: [], stderr: '' });
    expect(r.last).toMatch(/^(\d+) passed, 0 failed$/);
    expect(r.passed).toBeGreaterThanOrEqual(6);
  }, 120_000);
});

// A process that owns a LibreOffice pool and dies (SIGKILL) in the middle of a long conversion takes its
// instances with it: nothing keeps converting a document nobody will read. (Between conversions the
// bridge notices its closed stdin; during one, its parent watchdog does.) The work directory it could not
// remove (its profile, the document in conversion) is removed by the next pool started beside it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { instanceProcesses, killAll } from '../../support/office-processes.ts';

it('the instances of a pool whose owner is killed mid-conversion stop at once', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-orphan-'));
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'orphan-child.ts'), '40000', tmp], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let baseDir = '';
  try {
    const deadline = Date.now() + 60_000;
    while (!out.includes('\n')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the pool did not start:\n${out}${err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    baseDir = (JSON.parse(out.slice(0, out.indexOf('\n'))) as { baseDir: string }).baseDir;
    // The conversion (~25 s on this machine) is under way: the instance's processes are busy with it.
    const started = Date.now();
    while (instanceProcesses(baseDir, 0, { bridge: true }).length < 2 && Date.now() - started < 30_000)
      await new Promise((r) => setTimeout(r, 50));
    expect(instanceProcesses(baseDir, 0, { bridge: true }).length).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 1_000));
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    while (instanceProcesses(baseDir, 0, { bridge: true }).length > 0 && Date.now() - killedAt < 15_000)
      await new Promise((r) => setTimeout(r, 100));
    // Without the watchdog they would keep going until the conversion ends, tens of seconds later.
    expect(instanceProcesses(baseDir, 0, { bridge: true })).toEqual([]);
    expect(out).not.toContain('finished');

    // Its work directory is still there, with the document it was converting; the next pool removes it.
    const left = fs.readdirSync(path.join(baseDir, 'jobs', '0'));
    expect(left.length).toBeGreaterThan(0);
    const next = new LibreOfficePool({ size: 1, tmpDir: tmp, log: () => {} });
    try {
      expect(await next.swept).toEqual([baseDir]);
      expect(fs.existsSync(baseDir)).toBe(false);
      expect(fs.readdirSync(tmp)).toEqual([path.basename(next.baseDir)]);
    } finally {
      await next.stop();
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    if (baseDir) killAll(instanceProcesses(baseDir, 0, { bridge: true }));
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}, 90_000);

// The converter's work directories left by killed processes: the first pool of a process removes those whose
// owner is gone, and only those (converter/work-dirs.ts). Owners are real processes: this one, a child that is
// still running, a child that has ended.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/pool.ts';
import { processStartTime } from '../../../converter/processes.ts';
import { makeWorkDir, staleWorkDirs } from '../../../converter/work-dirs.ts';

const onLinux = fs.existsSync('/proc/self/stat');
let tmp: string;
let sleeper: ChildProcess;

/** A work directory as a docgen of any version leaves it: profile and job files, an owner line or none. */
function leftDir(name: string, owner: string | undefined, ageMs = 0): string {
  const dir = path.join(tmp, `docgen-convert-${name}`);
  fs.mkdirSync(path.join(dir, 'profile-0', 'user'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'jobs', '0'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'jobs', '0', 'document.docx'), 'a subscription document');
  if (owner !== undefined) fs.writeFileSync(path.join(dir, 'owner'), owner);
  if (ageMs > 0) {
    const t = new Date(Date.now() - ageMs);
    fs.utimesSync(dir, t, t);
  }
  return dir;
}

const ns = () => fs.readlinkSync('/proc/self/ns/pid');
const HOUR = 60 * 60 * 1000;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-work-dirs-'));
  sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', path.join(tmp, 'docgen-convert-named', 'profile-0')], {
    stdio: 'ignore',
  });
});
afterAll(() => {
  sleeper.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe.runIf(onLinux)('converter work directories left behind', () => {
  it('judges each directory by its owner: gone, reused pid, alive, another namespace, none', async () => {
    const ended = spawnSync(process.execPath, ['-e', '0']).pid;
    const live = `${sleeper.pid} ${processStartTime(sleeper.pid!)}`;
    expect(live).toMatch(/^\d+ \d+$/);
    const mine = makeWorkDir(tmp);
    const dirs = {
      // the owner has ended
      ended: leftDir('ended', `${ended} 123 ${ns()}`),
      // the owner's pid is held by another process now (this one, started at another time)
      reused: leftDir('reused', `${process.pid} 1 ${ns()}`),
      // a live child owns it
      alive: leftDir('alive', `${live} ${ns()}`),
      // a process of another pid namespace: not seen from here, so not judged
      elsewhere: leftDir('elsewhere', `${ended} 123 pid:[1]`),
      // an older docgen's, an hour old and named by no process
      old: leftDir('old', undefined, 2 * HOUR),
      // an older docgen's, recent
      recent: leftDir('recent', undefined),
      // an older docgen's, old, but a running process names it (as LibreOffice names its profile)
      named: leftDir('named', undefined, 2 * HOUR),
    };
    fs.writeFileSync(path.join(tmp, 'docgen-convert-file'), 'not a directory');
    fs.mkdirSync(path.join(tmp, 'someone-else'));
    // Directories claimed for removal by another sweep: one whose remover was killed 20 minutes ago, one at it now.
    const claim = (name: string, ageMs: number) => {
      const dir = path.join(tmp, `docgen-convert.removing-${name}`);
      fs.mkdirSync(path.join(dir, 'profile-0'), { recursive: true });
      const t = new Date(Date.now() - ageMs);
      fs.utimesSync(dir, t, t);
      return dir;
    };
    const abandonedClaim = claim('abandoned-1', 20 * 60 * 1000);
    const activeClaim = claim('active-2', 0);

    expect(staleWorkDirs(tmp).sort()).toEqual([dirs.ended, dirs.old, dirs.reused].sort());
    // This process's own directory names it.
    expect(fs.readFileSync(path.join(mine, 'owner'), 'utf8')).toBe(`${process.pid} ${processStartTime(process.pid)} ${ns()}`);

    // The first pool of the process removes them (LibreOffice is not started by making a pool).
    const logged: string[] = [];
    const pool = new LibreOfficePool({ tmpDir: tmp, size: 1, log: (m) => logged.push(m) });
    try {
      expect((await pool.swept).sort()).toEqual([dirs.ended, dirs.old, dirs.reused].sort());
      for (const d of [dirs.ended, dirs.old, dirs.reused]) expect(fs.existsSync(d)).toBe(false);
      for (const d of [dirs.alive, dirs.elsewhere, dirs.recent, dirs.named, mine, pool.baseDir]) expect(fs.existsSync(d)).toBe(true);
      expect(fs.existsSync(abandonedClaim)).toBe(false);
      expect(fs.existsSync(activeClaim)).toBe(true);
      expect(fs.existsSync(path.join(tmp, 'docgen-convert-file'))).toBe(true);
      expect(fs.existsSync(path.join(tmp, 'someone-else'))).toBe(true);
      expect(logged.some((m) => m.includes('removed 3 work directories'))).toBe(true);
      // Its own directory names it, so a later sweep keeps it.
      expect(staleWorkDirs(tmp)).toEqual([]);
    } finally {
      await pool.stop();
    }
    expect(fs.existsSync(pool.baseDir)).toBe(false);

    // Once its owner is killed, the child's directory is stale too.
    sleeper.kill('SIGKILL');
    await new Promise((r) => sleeper.once('exit', r));
    await expect.poll(() => processStartTime(sleeper.pid!)).toBeUndefined();
    expect(staleWorkDirs(tmp).sort()).toEqual([dirs.alive, dirs.named].sort());
  });
});

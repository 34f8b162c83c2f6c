// A pool's work directory in the OS temp dir: its LibreOffice profiles and temp dirs, and its jobs' files
// (subscriptions' documents on their way through a conversion). The pool removes it when it stops, and the
// process on a plain exit (processes.ts). A process that is killed (SIGKILL, the OOM killer, a reset) cannot:
// so every work directory names its owner, and the first pool a process starts removes the directories of
// owners that are gone. Left alone, each is ~1.6 MB and ~600 files, and the document in conversion stays on
// the disk without an end: a machine that ran the test suites for a day held 559 of them (900 MB, 335,000
// files; removing them took 20 s).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

export const WORK_DIR_PREFIX = 'docgen-convert-';
/** The owner of a work directory, in it: "<pid> <start time> <pid namespace>" (processIdentity, and
 *  /proc/self/ns/pid: a process of another pid namespace sharing the temp dir, such as another container of a
 *  pod mounting the same volume, cannot be seen, so its directories are not judged). */
const OWNER_FILE = 'owner';
/** A work directory without an owner file (made by a docgen before this file existed, or an instant ago by
 *  another process) is left alone unless it is older than this and no live process names it. */
const OWNERLESS_GRACE_MS = 60 * 60 * 1000;

/** "<pid> <start time>" of a live process; the start time (Linux: /proc/<pid>/stat's 22nd field, clock
 *  ticks after boot) tells a pid reused by another process apart. Undefined when there is no such process;
 *  "<pid>" alone where /proc does not exist. */
export function processIdentity(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command (2nd field) is in parentheses and may hold spaces or parentheses: count after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${pid} ${fields[19]}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !fs.existsSync('/proc/self/stat'))
      return aliveBySignal(pid) ? String(pid) : undefined;
    return undefined;
  }
}

function aliveBySignal(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** This process's pid namespace ("pid:[4026531836]"), or "-" where /proc does not say. */
function pidNamespace(): string {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return '-';
  }
}

/** A new work directory in `tmpDir`, naming this process as its owner. */
export function makeWorkDir(tmpDir: string): string {
  const dir = fs.mkdtempSync(path.join(tmpDir, WORK_DIR_PREFIX));
  const me = processIdentity(process.pid) ?? String(process.pid);
  fs.writeFileSync(path.join(dir, OWNER_FILE), `${me.includes(' ') ? me : `${me} -`} ${pidNamespace()}`);
  return dir;
}

/** Whether the owner named in a work directory ("<pid> <start time> <pid namespace>") is gone. */
function ownerGone(owner: string): boolean {
  const [pidText, start, ns] = owner.split(' ');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0 || ns !== pidNamespace()) return false; // not ours to judge
  const now = processIdentity(pid);
  if (now === undefined) return true;
  // Where /proc gives start times, a pid now held by another process is gone too.
  return start !== '-' && now.includes(' ') ? now !== `${pid} ${start}` : false;
}

/** The command lines of the processes running now (Linux), to keep an ownerless directory a live one uses. */
function commandLines(): string[] {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const lines: string[] = [];
  for (const pid of pids) {
    try {
      lines.push(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    } catch {
      /* ended meanwhile */
    }
  }
  return lines;
}

/** The work directories in `tmpDir` whose owner is gone: named by an owner file whose process has ended,
 *  or, without one, older than an hour and named by no running process's command line (LibreOffice's
 *  instances carry their profile's path). */
export function staleWorkDirs(tmpDir: string, now = Date.now()): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(tmpDir).filter((n) => n.startsWith(WORK_DIR_PREFIX));
  } catch {
    return [];
  }
  const stale: string[] = [];
  const ownerless: string[] = [];
  for (const name of names) {
    const dir = path.join(tmpDir, name);
    let owner: string | undefined;
    try {
      owner = fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8').trim();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') continue; // a file of that name: not a work directory
      if (code !== 'ENOENT') continue; // unreadable (another user's): not ours to judge
    }
    if (owner !== undefined) {
      if (ownerGone(owner)) stale.push(dir);
      continue;
    }
    try {
      const st = fs.lstatSync(dir);
      if (st.isDirectory() && now - st.mtimeMs > OWNERLESS_GRACE_MS) ownerless.push(dir);
    } catch {
      /* removed meanwhile */
    }
  }
  if (ownerless.length > 0) {
    const lines = commandLines();
    for (const dir of ownerless) if (!lines.some((l) => l.includes(`${dir}/`) || l.includes(`${dir}\0`))) stale.push(dir);
  }
  return stale;
}

/** A stale directory is first renamed to this prefix (one atomic step: of several processes starting at
 *  once, one claims it and the others leave it), then removed. One whose remover was killed in turn is
 *  removed by a later sweep once it has waited CLAIM_GRACE_MS. */
const CLAIM_PREFIX = 'docgen-convert.removing-';
const CLAIM_GRACE_MS = 10 * 60 * 1000;

/** Removes the stale work directories of `tmpDir` (staleWorkDirs), in the background of the caller: the
 *  answer is the directories removed. A failure to remove one is no error (another process may be at it). */
export async function removeStaleWorkDirs(tmpDir: string, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const dir of staleWorkDirs(tmpDir, now)) {
    const claimed = path.join(tmpDir, `${CLAIM_PREFIX}${path.basename(dir).slice(WORK_DIR_PREFIX.length)}-${process.pid}`);
    try {
      fs.renameSync(dir, claimed);
      // A rename keeps the directory's mtime: the claim's age starts now.
      fs.utimesSync(claimed, new Date(now), new Date(now));
    } catch {
      continue; // claimed by another process, or gone
    }
    try {
      await fsp.rm(claimed, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      /* best effort */
    }
  }
  // Claims whose remover did not finish (it was killed too).
  for (const name of safeReaddir(tmpDir).filter((n) => n.startsWith(CLAIM_PREFIX))) {
    const dir = path.join(tmpDir, name);
    try {
      if (now - fs.lstatSync(dir).mtimeMs > CLAIM_GRACE_MS) await fsp.rm(dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  }
  return removed;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

const swept = new Map<string, Promise<string[]>>();
/** removeStaleWorkDirs once per process and temp dir (the first pool started sweeps; later ones share it). */
export function sweepWorkDirsOnce(tmpDir: string): Promise<string[]> {
  const key = path.resolve(tmpDir);
  let p = swept.get(key);
  if (!p) {
    p = removeStaleWorkDirs(key);
    swept.set(key, p);
  }
  return p;
}

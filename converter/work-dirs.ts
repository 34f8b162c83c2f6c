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
import { processCommandLine, processStartTime } from './processes.ts';

export const WORK_DIR_PREFIX = 'docgen-convert-';
/** The owner of a work directory, in it: "<pid> <start time> <pid namespace>" (processes.ts's start time tells
 *  a reused pid apart; a process of another pid namespace sharing the temp dir, such as another container of
 *  a pod mounting the same volume, cannot be seen from here, so its directories are not judged). */
const OWNER_FILE = 'owner';
/** A work directory without an owner file (made by a docgen before this file existed, or an instant ago by
 *  another process) is left alone unless it is older than this and no live process names it. */
const OWNERLESS_GRACE_MS = 60 * 60 * 1000;

/** This process's pid namespace ("pid:[4026531836]"); undefined where /proc does not say (not Linux: no
 *  owner can be judged there, so nothing is swept). */
function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** "<pid> <start time> <pid namespace>" of this process, as its work directories name it. */
function ownerLine(): string {
  return `${process.pid} ${processStartTime(process.pid) ?? '-'} ${pidNamespace() ?? '-'}`;
}

/** A new work directory in `tmpDir`, naming this process as its owner. */
export function makeWorkDir(tmpDir: string): string {
  const dir = fs.mkdtempSync(path.join(tmpDir, WORK_DIR_PREFIX));
  fs.writeFileSync(path.join(dir, OWNER_FILE), ownerLine());
  return dir;
}

/** Whether the owner named in a work directory is gone: same pid namespace, and its pid no longer runs the
 *  process that started at that time. */
function ownerGone(owner: string, ns: string): boolean {
  const [pidText, start, ownerNs] = owner.split(' ');
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0 || start === '-' || ownerNs !== ns) return false; // not ours to judge
  return processStartTime(pid) !== start;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** The work directories in `tmpDir` whose owner is gone: named by an owner file whose process has ended,
 *  or, without one, older than an hour and named by no running process's command line (LibreOffice's
 *  instances carry their profile's path). None where /proc does not exist. */
export function staleWorkDirs(tmpDir: string, now = Date.now()): string[] {
  const ns = pidNamespace();
  if (ns === undefined) return [];
  const stale: string[] = [];
  const ownerless: string[] = [];
  for (const name of safeReaddir(tmpDir).filter((n) => n.startsWith(WORK_DIR_PREFIX))) {
    const dir = path.join(tmpDir, name);
    let owner: string | undefined;
    try {
      owner = fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8').trim();
    } catch (err) {
      // Only a directory without the file is judged further: a file of that name (ENOTDIR) or another
      // user's directory is not ours.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') continue;
    }
    if (owner !== undefined) {
      if (ownerGone(owner, ns)) stale.push(dir);
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
    const args = safeReaddir('/proc')
      .filter((p) => /^\d+$/.test(p))
      .flatMap((pid) => processCommandLine(pid));
    for (const dir of ownerless) if (!args.some((a) => a === dir || a.includes(`${dir}/`))) stale.push(dir);
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

// Process bookkeeping shared by every pool: the instance process groups and temp dirs alive in this
// process (killed and removed on exit, so a plain exit never leaves a soffice behind), and whether a group
// still has a live process.
import fs from 'node:fs';

// Every live instance process group and pool temp dir, across pools, so a plain process exit
// never leaves a soffice or a profile behind.
export const liveGroups = new Set<number>();
export const liveDirs = new Set<string>();
let exitHookInstalled = false;
export function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const g of liveGroups) {
      try {
        process.kill(-g, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    for (const d of liveDirs) {
      try {
        fs.rmSync(d, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  });
}
export function trackGroup(pid: number): void {
  liveGroups.add(pid);
  installExitHook();
}

/** True while any non-zombie process of the group exists (zombies hold no memory). A group with no process
 *  at all answers signal 0 with ESRCH: that common end is one syscall; only a group that answers is looked
 *  for in /proc (every process's stat: costly on a busy machine), to tell live members from zombies. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return false;
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const f = statFields(n);
    if (f && Number(f[2]) === pgid && f[0] !== 'Z') return true;
  }
  return false;
}

/** The fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, ...: field 3 on); undefined when
 *  there is no such process or no /proc. The name (field 2) may hold spaces and parentheses: the fields are
 *  counted from the last ')'. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat: the process's start time, in clock ticks after boot, which tells a pid
 *  reused by another process apart. Undefined when there is no such process, for a zombie (it has ended;
 *  its parent has yet to reap it), and where /proc does not exist. */
export function processStartTime(pid: number): string | undefined {
  const fields = statFields(pid);
  return fields === undefined || fields[0] === 'Z' ? undefined : fields[19];
}

/** A process's arguments (/proc/<pid>/cmdline); none when it has ended or /proc does not exist. */
export function processCommandLine(pid: number | string): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

// Finding the processes of one LibreOffice pool instance in /proc, for tests that kill them or check
// they are gone. Matching the instance's profile directory (made by mkdtemp for that pool) means no
// other LibreOffice on the machine - other tests, other agents - can ever match.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { LibreOfficePool } from '../../converter/index.ts';

/**
 * Live (non-zombie) pids of instance `index` of the pool in `baseDir`: its soffice (oosplash) and
 * soffice.bin, which take the profile as `-env:UserInstallation=<file URL>`. With `bridge`, also the
 * Python bridge (`--profile <dir>`); with `pgid`, only members of that process group.
 */
export function instanceProcesses(baseDir: string, index: number, opts: { pgid?: number; bridge?: boolean } = {}): number[] {
  const profile = path.join(baseDir, `profile-${index}`);
  const profileArg = `-env:UserInstallation=${pathToFileURL(profile).href}`;
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      // After the ")" that ends the command name: state ppid pgrp ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || (opts.pgid !== undefined && Number(pgrp) !== opts.pgid)) continue;
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes(profileArg) || (opts.bridge && argv.includes(profile))) found.push(Number(name));
    } catch {
      /* the process ended while we looked */
    }
  }
  return found;
}

/** Kills the only instance of `pool` while it works for the run of `workflowType` that `request` started:
 *  waits for that run and for the instance to be busy, lets it work half a second (deep in a multi-second
 *  job), then SIGKILLs its processes. Fails early, with the answer, if the request is answered first.
 *  Returns the run and the killed process group. */
export async function killBusyInstance(opts: {
  temporal: Client;
  taskQueue: string;
  workflowType: string;
  pool: LibreOfficePool;
  request: Promise<{ body: unknown }>;
}): Promise<{ handle: WorkflowHandle; pgid: number; victims: number[] }> {
  let answered = false;
  void opts.request.finally(() => (answered = true)).catch(() => undefined);
  async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await check();
      if (v !== undefined) return v;
      if (answered) throw new Error(`the request was answered before ${what}: ${JSON.stringify((await opts.request).body)}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const query = `TaskQueue = "${opts.taskQueue}" AND WorkflowType = "${opts.workflowType}" AND ExecutionStatus = "Running"`;
  const handle = await until<WorkflowHandle>('the run to start', async () => {
    for await (const wf of opts.temporal.workflow.list({ query })) return opts.temporal.workflow.getHandle(wf.workflowId, wf.runId);
    return undefined;
  });
  const pgid = await until('the pool to be busy', () => {
    const s = opts.pool.status();
    return s.running === 1 && s.instances[0]!.state === 'busy' ? (s.instances[0]!.pid ?? undefined) : undefined;
  });
  await new Promise((r) => setTimeout(r, 500));
  const victims = instanceProcesses(opts.pool.baseDir, 0, { pgid });
  killAll(victims);
  return { handle, pgid, victims };
}

/** SIGKILLs each pid. A process that has ended since it was listed (the sandbox's intermediate processes
 *  come and go) is what the caller wanted: ESRCH is not an error. Returns the pids that were still there. */
export function killAll(pids: readonly number[], signal: NodeJS.Signals = 'SIGKILL'): number[] {
  const hit: number[] = [];
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
      hit.push(pid);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
  return hit;
}

// A process tree from /proc (Linux), for benchmarks: a process and its descendants, and their CPU time, a
// process's own or summed by what they are (docgen's node process, the Temporal dev server, LibreOffice, the
// Python bridges). Clock ticks are taken as 10 ms (CLK_TCK 100, Linux's default).
import fs from 'node:fs';

const TICK_MS = 10;

export interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  cpuMs: number;
}

function stat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone meanwhile
  }
  // "pid (comm) state ppid ... utime stime ...": comm may hold spaces and parentheses.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    ppid: Number(fields[1]),
    comm: text.slice(text.indexOf('(') + 1, close),
    cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS,
  };
}

/** utime + stime of one process, in ms. */
export function processCpuMs(pid: number): number {
  return stat(pid)?.cpuMs ?? NaN;
}

const GROUPS: [RegExp, string][] = [
  [/^temporal/, 'Temporal dev server'],
  [/^(soffice|oosplash)/, 'LibreOffice'],
  [/^python/, 'LibreOffice bridges (python)'],
  [/^(node|MainThread)/, 'docgen (node)'],
];

/** `rootPid` and its live descendants, each after its parent. */
export function processTree(rootPid: number): Stat[] {
  const all: Stat[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s) all.push(s);
  }
  const children = new Map<number, Stat[]>();
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const out: Stat[] = [];
  const root = all.find((s) => s.pid === rootPid);
  const todo = root ? [root] : [];
  while (todo.length > 0) {
    const s = todo.pop()!;
    out.push(s);
    todo.push(...(children.get(s.pid) ?? []));
  }
  return out;
}

/** The processes named `comm` whose parent is not (e.g. PostgreSQL's postmasters: their trees hold the
 *  backends), so that each tree is counted once. */
export function processTreeRoots(comm: string): number[] {
  const all = processTree(1);
  return all.filter((s) => s.comm === comm && all.find((p) => p.pid === s.ppid)?.comm !== comm).map((s) => s.pid);
}

/** CPU ms of `rootPid` and its descendants, summed per group. Processes that exited are not counted. */
export function treeCpuMs(rootPid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of processTree(rootPid)) {
    const group = GROUPS.find(([re]) => re.test(s.comm))?.[1] ?? `other (${s.comm})`;
    out.set(group, (out.get(group) ?? 0) + s.cpuMs);
  }
  return out;
}

const THREADS: [RegExp, string][] = [
  [/^(node|MainThread)$/, 'main thread (API, worker, PGlite)'],
  [/^WorkerThread/, 'merge threads (and the workflow sandbox)'],
  [/^V8Worker|^V8 DefaultWorke/, 'V8 workers (GC, compilers)'],
  [/^libuv-worker/, 'libuv pool (files, zlib, crypto)'],
  [/^tokio/, 'Temporal core (Rust)'],
];

/** CPU ms of one process's threads (/proc/<pid>/task), summed by what they are. */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tasks: string[];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    } catch {
      continue;
    }
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    const group = THREADS.find(([re]) => re.test(comm))?.[1] ?? 'other threads';
    out.set(group, (out.get(group) ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS);
  }
  return out;
}

/** What each group spent between two treeCpuMs readings. */
export function cpuSpent(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [group, ms] of after) out.set(group, ms - (before.get(group) ?? 0));
  return out;
}

/** RSS (MB) of a process and its descendants, split by whether the command is the Temporal CLI (the dev
 *  server and everything under it); `node` is the root process alone, `office` its LibreOffice processes
 *  (soffice, oosplash and the Python bridges). */
export function treeRss(root: number): { service: number; temporal: number; node: number; office: number } {
  const out = { service: 0, temporal: 0, node: 0, office: 0 };
  const temporal = new Set<number>();
  for (const p of processTree(root)) {
    let rss: number;
    let cmd: string;
    try {
      rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p.pid}/status`, 'latin1'))?.[1] ?? 0) / 1024;
      cmd = fs.readFileSync(`/proc/${p.pid}/cmdline`, 'utf8');
    } catch {
      continue; // gone
    }
    if (p.pid === root) out.node = rss;
    if (temporal.has(p.ppid) || cmd.includes('server\0start-dev')) {
      temporal.add(p.pid);
      out.temporal += rss;
    } else out.service += rss;
    if (cmd.includes('soffice') || cmd.includes('oosplash') || cmd.includes('uno_bridge')) out.office += rss;
  }
  return out;
}

/** Samples treeRss(root) every `everyMs` and keeps the peak of each figure (MB, rounded) until reset. */
export function rssPeaks(
  root: number,
  everyMs = 200,
): { reset(): void; peak(): Record<string, number>; now(): Record<string, number>; stop(): void } {
  const zero = { service: 0, temporal: 0, node: 0, office: 0 };
  let peak = { ...zero };
  const timer = setInterval(() => {
    const r = treeRss(root);
    peak = {
      service: Math.max(peak.service, r.service),
      temporal: Math.max(peak.temporal, r.temporal),
      node: Math.max(peak.node, r.node),
      office: Math.max(peak.office, r.office),
    };
  }, everyMs);
  const mb = (r: typeof zero) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)]));
  return {
    reset: () => void (peak = { ...zero }),
    peak: () => mb(peak),
    now: () => mb(treeRss(root)),
    stop: () => clearInterval(timer),
  };
}

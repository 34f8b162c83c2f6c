// The top costs of V8 CPU profiles (node --cpu-prof; bench:batch --cpu-prof writes them): self time summed per
// function and per source (a file of docgen, or a package of node_modules), over every profile of a directory
// (one per thread: the main thread and the merge threads), optionally per row of a batch.
// A third table gives each sample to the innermost docgen function on its stack (what of ours caused the
// time spent in node's internals, packages and the garbage collector is charged to the caller that was running).
// --skip-ms leaves out the first milliseconds of each profile (start-up); --timeline prints busy time per second.
// A directory with a windows.json (bench/batch.ts writes the span of each batch it ran, on the monotonic clock
// the profiles' timestamps use) counts only the samples inside those spans, of every thread, and its rows.
//   node bench/profile-top.ts <dir> [--rows N] [--top 20] [--skip-ms 15000] [--timeline]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rows: { type: 'string' },
    top: { type: 'string', default: '20' },
    'skip-ms': { type: 'string', default: '0' },
    timeline: { type: 'boolean' },
  },
});
const dir = positionals[0];
if (!dir) throw new Error('usage: node bench/profile-top.ts <dir> [--rows N] [--top 20]');
interface Window {
  format: string;
  rows: number;
  fromUs: number;
  toUs: number;
}
const windowsFile = path.join(dir, 'windows.json');
const windows = fs.existsSync(windowsFile) ? (JSON.parse(fs.readFileSync(windowsFile, 'utf8')) as Window[]) : [];
const inWindow = (us: number) => windows.length === 0 || windows.some((w) => us >= w.fromUs && us <= w.toUs);
const rows = values.rows ? Number(values.rows) : windows.length ? windows.reduce((n, w) => n + w.rows, 0) : undefined;
const top = Number(values.top);

interface Node {
  id: number;
  parent?: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  /** µs on the monotonic clock (CLOCK_MONOTONIC on Linux, as process.hrtime). */
  startTime: number;
}

const byFunction = new Map<string, number>();
const byOwnCaller = new Map<string, number>();
const bySource = new Map<string, number>();
let total = 0;
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
for (const file of files) {
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) nodes.get(c)!.parent = n.id;
  const ownCaller = new Map<number, string>();
  const ownOf = (id: number): string => {
    let found = ownCaller.get(id);
    if (found !== undefined) return found;
    const n = nodes.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const source = url ? sourceOf(url, functionName) : '';
    if (source && /^(api|activities|workflows|worker|engine|converter|connectors|store|core|telemetry|config|cli|security)\//.test(source))
      found = `${functionName || '(anonymous)'} ${source}:${lineNumber + 1}`;
    else found = n.parent !== undefined ? ownOf(n.parent) : '(no docgen frame)';
    ownCaller.set(id, found);
    return found;
  };
  const skipUs = Number(values['skip-ms']) * 1000;
  const busy: number[] = [];
  let at = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = nodes.get(profile.samples[i]!)!;
    const us = profile.timeDeltas[i] ?? 0;
    at += us;
    if (at < skipUs || !inWindow(profile.startTime + at)) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy[Math.floor(at / 1e6)] = (busy[Math.floor(at / 1e6)] ?? 0) + us;
    total += us;
    const source = sourceOf(url, functionName);
    const key = `${functionName || '(anonymous)'} ${source}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    bySource.set(source, (bySource.get(source) ?? 0) + us);
    const own = ownOf(node.id);
    byOwnCaller.set(own, (byOwnCaller.get(own) ?? 0) + us);
  }
  if (values.timeline) console.log(`${file}: busy ms per second: ${Array.from(busy, (x) => Math.round((x ?? 0) / 1000)).join(' ')}`);
}

/** A docgen file relative to the checkout, a package's name, or what V8 calls the frame. */
function sourceOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (file.startsWith('node:')) return file;
  const m = /\/(api|activities|workflows|worker|engine|converter|connectors|store|core|telemetry|config|cli|security)\/.*$/.exec(file);
  return m ? m[0].slice(1) : file;
}

const ms = (us: number) => (us / 1000).toFixed(0);
const perRow = (us: number) => (rows ? ` | ${(us / 1000 / rows).toFixed(3)}` : '');
console.log(
  `${files.length} profiles in ${dir}: ${ms(total)} ms of samples (idle excluded)${rows ? `, ${rows} rows` : ''}` +
    (windows.length
      ? `, only while ${windows.map((w) => `${w.format} (${((w.toUs - w.fromUs) / 1e6).toFixed(1)} s)`).join(', ')} ran`
      : ''),
);
for (const [title, map] of [
  ['function (self time)', byFunction],
  ['source (self time)', bySource],
  ['innermost docgen function (time below it included)', byOwnCaller],
] as const) {
  console.log('');
  console.log(`| ${title} | ms | share${rows ? ' | ms per row' : ''} |`);
  console.log(`|---|---:|---:|${rows ? '---:|' : ''}`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`| ${k} | ${ms(us)} | ${((100 * us) / total).toFixed(1)} %${perRow(us)} |`);
}

// Runs test files several times in a row with the machine loaded beside them (busy loops, one per --load),
// and lists every test that failed at least once: a test that depends on timing shows up here before it turns
// a CI run red. `npm run test:soak -- [--runs N] [--load K] [--out DIR] [vitest filters...]`; without filters it
// runs the suites that start processes and servers (test/integration, test/e2e). Exits 1 when a test failed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '3' },
    load: { type: 'string', default: '2' },
    out: { type: 'string' },
  },
});
const runs = Number(values.runs);
const load = Number(values.load);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number >= 1 (got ${values.runs})`);
if (!Number.isInteger(load) || load < 0) throw new Error(`--load must be a whole number >= 0 (got ${values.load})`);
const filters = positionals.length > 0 ? positionals : ['test/integration', 'test/e2e'];
const outDir = values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-soak-'));
fs.mkdirSync(outDir, { recursive: true });
const root = path.resolve(import.meta.dirname, '..');

interface VitestJson {
  numTotalTests: number;
  numFailedTests: number;
  testResults: {
    name: string;
    status: string;
    message?: string;
    assertionResults: { fullName: string; status: string; failureMessages: string[]; duration?: number }[];
  }[];
}

/** A busy loop in its own process: one core's worth of load until it is killed. */
function busyLoop() {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

function runOnce(i: number): Promise<{ code: number | null; report: VitestJson | undefined; ms: number }> {
  const file = path.join(outDir, `run-${i}.json`);
  const t0 = Date.now();
  const child = spawn('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${file}`, ...filters], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  const log = fs.createWriteStream(path.join(outDir, `run-${i}.log`));
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      const report = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as VitestJson) : undefined;
      resolve({ code, report, ms: Date.now() - t0 });
    });
  });
}

const failures = new Map<string, { count: number; firstMessage: string; runs: number[] }>();
const loops = Array.from({ length: load }, busyLoop);
const stopLoops = () => {
  for (const l of loops) l.kill('SIGKILL');
};
process.once('exit', stopLoops);
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

console.log(
  `soak: ${runs} run(s) of vitest ${filters.join(' ')} beside ${load} busy loop(s) on ${os.availableParallelism()} cores; logs in ${outDir}`,
);
let incomplete = 0;
for (let i = 1; i <= runs; i++) {
  const { code, report, ms } = await runOnce(i);
  if (!report) {
    incomplete++;
    console.log(`run ${i}: vitest exited ${code} without a report (see ${path.join(outDir, `run-${i}.log`)})`);
    continue;
  }
  let failed = 0;
  for (const f of report.testResults) {
    const rel = path.relative(root, f.name);
    // A file that failed as a whole (a hook, an import) has no failed test of its own to show it.
    if (f.status === 'failed' && !f.assertionResults.some((a) => a.status === 'failed')) {
      const key = `${rel} (the file: ${f.message?.split('\n')[0] ?? 'failed'})`;
      const entry = failures.get(key) ?? { count: 0, firstMessage: f.message ?? '', runs: [] };
      entry.count++;
      entry.runs.push(i);
      failures.set(key, entry);
      failed++;
    }
    for (const a of f.assertionResults) {
      if (a.status !== 'failed') continue;
      failed++;
      const key = `${rel} > ${a.fullName}`;
      const entry = failures.get(key) ?? { count: 0, firstMessage: a.failureMessages[0] ?? '', runs: [] };
      entry.count++;
      entry.runs.push(i);
      failures.set(key, entry);
    }
  }
  console.log(`run ${i}: ${report.numTotalTests} tests, ${failed} failed, ${(ms / 1000).toFixed(0)} s (vitest exit ${code})`);
}
stopLoops();

if (failures.size === 0 && incomplete === 0) {
  console.log(`soak: no test failed in ${runs} run(s)`);
} else {
  console.log(`soak: ${failures.size} test(s) failed at least once${incomplete ? `, ${incomplete} run(s) without a report` : ''}:`);
  for (const [name, f] of [...failures].sort((a, b) => b[1].count - a[1].count)) {
    console.log(`  ${f.count}/${runs}  ${name}  (runs ${f.runs.join(', ')})`);
    console.log(`        ${f.firstMessage.split('\n')[0]!.slice(0, 300)}`);
  }
  process.exitCode = 1;
}

// Benchmark (not a test): peak memory of one engine rendering the 10 000-row xlsx of
// ../shared/bench, each engine in its own fresh process so the figures do not mix (the shared benchmark
// runs all engines in one process). Reports the growth of max RSS over the process's baseline after
// loading the engine and the data.
//   node --import tsx bench/engine-memory.ts [--rows 10000] [--runs 3]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '10000' }, runs: { type: 'string', default: '3' }, child: { type: 'string' } },
});
const rows = Number(values.rows);
const bench = path.resolve(import.meta.dirname, '..', '..', 'shared', 'bench');

if (values.child) {
  const peers = (await import(path.join(bench, 'lib', 'peers.mjs'))) as {
    makeData(n: number): unknown;
    ensurePeers(): { require: NodeJS.Require };
    makeCarbone(req: NodeJS.Require): (p: string, d: unknown) => Promise<unknown>;
  };
  const data = peers.makeData(rows);
  let run: () => Promise<unknown>;
  if (values.child === 'project') {
    const { render } = await import('../engine/index.ts');
    const template = fs.readFileSync(path.join(bench, 'templates', 'report.xlsx'));
    run = () => render(new Uint8Array(template), data);
  } else {
    const carbone = peers.makeCarbone(peers.ensurePeers().require);
    const tpl = path.join(bench, 'templates', 'report-carbone.xlsx');
    run = () => carbone(tpl, data);
  }
  const before = process.resourceUsage().maxRSS;
  await run();
  const after = process.resourceUsage().maxRSS;
  process.stdout.write(JSON.stringify({ baselineKB: before, peakKB: after }));
} else {
  const results: Record<string, { growth: number[]; peak: number[] }> = {};
  for (let i = 0; i < Number(values.runs); i++) {
    for (const engine of i % 2 === 0 ? ['project', 'carbone'] : ['carbone', 'project']) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', engine, '--rows', String(rows)], {
        encoding: 'utf8',
      });
      const r = JSON.parse(out) as { baselineKB: number; peakKB: number };
      results[engine] ??= { growth: [], peak: [] };
      results[engine].growth.push((r.peakKB - r.baselineKB) / 1024);
      results[engine].peak.push(r.peakKB / 1024);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  console.log(`xlsx ${rows} rows, ${values.runs} runs per engine, median MB`);
  console.log('| engine | RSS growth during render | process peak RSS |');
  console.log('|---|---:|---:|');
  for (const [engine, r] of Object.entries(results)) console.log(`| ${engine} | ${med(r.growth).toFixed(1)} | ${med(r.peak).toFixed(1)} |`);
  const p = results.project;
  const c = results.carbone;
  if (p && c) console.log(`project/carbone growth: ${(med(p.growth) / med(c.growth)).toFixed(2)}`);
}

/**
 * What the bwrap sandbox costs (a benchmark, not a test): two warm pools of one instance, one sandboxed
 * (CONVERTER_SANDBOX=required) and one not (off; network namespace only), converting the same documents
 * alternately, in the same run. Prints the median of N warm conversions (and layout page counts) per
 * document and pool, their ratio, and each pool's instance start time.
 *
 *   node bench/converter/sandbox.ts [--runs 21] [--docs 1,40]
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { LibreOfficePool } from '../../converter/pool.ts';
import { benchDocx as docx } from './doc.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '21' }, docs: { type: 'string', default: '1,40' } } });
const runs = Number(values.runs);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const pools = {
  sandbox: new LibreOfficePool({ size: 1, sandbox: 'required', log: () => {} }),
  plain: new LibreOfficePool({ size: 1, sandbox: 'off', log: () => {} }),
};
try {
  const start: Record<string, number> = {};
  for (const [name, pool] of Object.entries(pools)) start[name] = await timed(() => pool.ready());
  console.log(
    `# bench-sandbox  ${new Date().toISOString()}  ${os.availableParallelism()} CPUs  ${runs} runs  load ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(`# isolation: sandbox = ${pools.sandbox.status().isolation}; plain = ${pools.plain.status().isolation}`);
  console.log(`# instance start: sandbox ${start.sandbox!.toFixed(0)} ms, plain ${start.plain!.toFixed(0)} ms`);
  console.log('| document | operation | sandbox median (ms) | plain median (ms) | sandbox / plain |');
  console.log('|---|---|---:|---:|---:|');
  for (const pages of values.docs!.split(',').map(Number)) {
    const input = docx(pages);
    for (const op of ['pdf', 'page count'] as const) {
      const run = (p: LibreOfficePool) =>
        op === 'pdf' ? p.convert(input, { from: 'docx', to: 'pdf' }) : p.pageCount(input, { from: 'docx' });
      // Warm-up, then alternate so that both pools see the same machine, each going first every other time
      // (the second of a pair runs measurably faster on a loaded machine).
      await run(pools.sandbox);
      await run(pools.plain);
      const ms = { sandbox: [] as number[], plain: [] as number[] };
      for (let i = 0; i < runs; i++) {
        for (const name of i % 2 === 0 ? (['sandbox', 'plain'] as const) : (['plain', 'sandbox'] as const))
          ms[name].push(await timed(() => run(pools[name])));
      }
      const s = median(ms.sandbox);
      const p = median(ms.plain);
      console.log(`| ${pages} page(s) | ${op} | ${s.toFixed(1)} | ${p.toFixed(1)} | ${(s / p).toFixed(2)} |`);
    }
  }
} finally {
  await Promise.all(Object.values(pools).map((p) => p.stop()));
}

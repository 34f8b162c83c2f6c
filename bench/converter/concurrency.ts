/**
 * Throughput of the pool with 1 vs N concurrent conversions (a benchmark, not a test).
 *
 *   node bench/converter/concurrency.ts [--docs 1,40] [--seconds 8] [--concurrency 2]
 *
 * Each case runs a fixed pool of `concurrency` instances, first with one conversion in flight at a
 * time, then with `concurrency` in flight, for `--seconds` each, and prints conversions/s and the
 * ratio. The documents are built here (1 page, ~40 pages of paragraphs), so no other file is needed.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { LibreOfficePool } from '../../converter/pool.ts';
import { benchDocx as docx } from './doc.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '1,40' },
    seconds: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: String(os.availableParallelism()) },
  },
});
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

async function throughput(pool: LibreOfficePool, input: Uint8Array, inFlight: number): Promise<{ perSec: number; n: number }> {
  // One untimed round per lane so every instance has loaded the document type once.
  await Promise.all(Array.from({ length: inFlight }, () => pool.convert(input, { from: 'docx', to: 'pdf' })));
  let n = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        await pool.convert(input, { from: 'docx', to: 'pdf' });
        n++;
      }
    }),
  );
  return { perSec: (n / (performance.now() - t0)) * 1000, n };
}

const pool = new LibreOfficePool({ size: concurrency, log: () => {} });
try {
  await pool.ready();
  console.log(
    `# bench-concurrency  ${new Date().toISOString()}  ${os.availableParallelism()} CPUs  pool ${concurrency}  ${seconds}s per case  load ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log('| document | 1 in flight (conv/s) | ' + concurrency + ' in flight (conv/s) | ratio |');
  console.log('|---|---:|---:|---:|');
  for (const pages of values.docs.split(',').map(Number)) {
    const input = docx(pages);
    const one = await throughput(pool, input, 1);
    const many = await throughput(pool, input, concurrency);
    console.log(
      `| ${pages} page(s) | ${one.perSec.toFixed(2)} (n=${one.n}) | ${many.perSec.toFixed(2)} (n=${many.n}) | ${(many.perSec / one.perSec).toFixed(2)} |`,
    );
  }
} finally {
  await pool.stop();
}

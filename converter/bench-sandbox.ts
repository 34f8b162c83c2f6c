/**
 * What the bwrap sandbox costs (a benchmark, not a test): two warm pools of one instance, one sandboxed
 * (CONVERTER_SANDBOX=required) and one not (off; network namespace only), converting the same documents
 * alternately, in the same run. Prints the median of N warm conversions (and layout page counts) per
 * document and pool, their ratio, and each pool's instance start time.
 *
 *   node converter/bench-sandbox.ts [--runs 21] [--docs 1,40]
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { LibreOfficePool } from './pool.ts';
import { makeEntry, writeZip } from './zip.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '21' }, docs: { type: 'string', default: '1,40' } } });
const runs = Number(values.runs);

function docx(pages: number): Uint8Array {
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  let body = '';
  for (let p = 0; p < pages; p++) {
    body += `<w:p><w:r><w:t>Invoice page ${p + 1}</w:t></w:r></w:p>`;
    for (let i = 0; i < 40; i++) body += `<w:p><w:r><w:t xml:space="preserve">item ${p * 40 + i}  qty ${i}  price ${i * 2}.00</w:t></w:r></w:p>`;
  }
  return writeZip([
    makeEntry('[Content_Types].xml', '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'),
    makeEntry('_rels/.rels', '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
    makeEntry('word/document.xml', `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`),
  ]);
}

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
  console.log(`# bench-sandbox  ${new Date().toISOString()}  ${os.availableParallelism()} CPUs  ${runs} runs  load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`# isolation: sandbox = ${pools.sandbox.status().isolation}; plain = ${pools.plain.status().isolation}`);
  console.log(`# instance start: sandbox ${start.sandbox!.toFixed(0)} ms, plain ${start.plain!.toFixed(0)} ms`);
  console.log('| document | operation | sandbox median (ms) | plain median (ms) | sandbox / plain |');
  console.log('|---|---|---:|---:|---:|');
  for (const pages of values.docs!.split(',').map(Number)) {
    const input = docx(pages);
    for (const op of ['pdf', 'page count'] as const) {
      const run = (p: LibreOfficePool) => (op === 'pdf' ? p.convert(input, { from: 'docx', to: 'pdf' }) : p.pageCount(input, { from: 'docx' }));
      // Warm-up, then alternate so that both pools see the same machine.
      await run(pools.sandbox);
      await run(pools.plain);
      const ms = { sandbox: [] as number[], plain: [] as number[] };
      for (let i = 0; i < runs; i++) {
        ms.sandbox.push(await timed(() => run(pools.sandbox)));
        ms.plain.push(await timed(() => run(pools.plain)));
      }
      const s = median(ms.sandbox);
      const p = median(ms.plain);
      console.log(`| ${pages} page(s) | ${op} | ${s.toFixed(1)} | ${p.toFixed(1)} | ${(s / p).toFixed(2)} |`);
    }
  }
} finally {
  await Promise.all(Object.values(pools).map((p) => p.stop()));
}

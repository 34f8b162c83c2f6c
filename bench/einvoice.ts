// The cost of an e-invoice over a plain pdf (issue 42), in-process on the warm LibreOffice pool: the same
// merged invoice converted to a plain pdf, and to a Factur-X EN16931 e-invoice (the XML built and checked by
// our rules and the official XSD + Schematron, PDF/A-3b export, the XML embedded). Runs alternate; medians and
// their ratio. Then the official validation alone (activities/einvoice-validate.ts): its first load (thread,
// XSD, SEF) per standard, its median per invoice, and the event loop's longest stall meanwhile.
//   node bench/einvoice.ts [runs=15]
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { EInvoiceOption } from '../core/einvoice.ts';
import { prepareEInvoiceRules } from '../activities/einvoice-rules.ts';
import { checkInvoiceXml, stopInvoiceChecks } from '../activities/einvoice-validate.ts';
import { convert, embedFacturX, shutdownConverter, startConverter } from '../converter/index.ts';
import { buildEInvoice } from '../einvoice/index.ts';
import { makeDocx } from '../test/support/office.ts';

const runs = Number(process.argv[2] ?? 15);
const invoice = JSON.parse(fs.readFileSync(new URL('../test/fixtures/einvoice/invoice.json', import.meta.url), 'utf8'));
const docx = makeDocx(['Invoice INV-2026-0117', ...invoice.lines.map((l: { name: string }) => l.name), 'Total 1001.52 EUR']);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const options: EInvoiceOption[] = [
  { standard: 'facturx', profile: 'EN16931', data: 'invoice' },
  { standard: 'facturx', profile: 'MINIMUM', data: 'invoice' },
  { standard: 'xrechnung-cii', profile: 'XRECHNUNG', data: 'invoice' },
  { standard: 'xrechnung-ubl', profile: 'XRECHNUNG', data: 'invoice' },
];
await prepareEInvoiceRules((line) => console.log(line));
// The peer of the stall measured below: the event loop's longest stall while this process idles as long.
const idle = monitorEventLoopDelay({ resolution: 1 });
idle.enable();
const idleStart = performance.now();
await new Promise((r) => setTimeout(r, 3000));
idle.disable();
// The official validation alone: each standard's first check loads its XSD and stylesheets.
const loop = monitorEventLoopDelay({ resolution: 1 });
const validationStart = performance.now();
const rssBefore = process.memoryUsage.rss();
loop.enable();
for (const option of options) {
  const xml = buildEInvoice({ invoice }, option).xml!;
  let t = performance.now();
  const first = await checkInvoiceXml(xml, option);
  const firstMs = performance.now() - t;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    t = performance.now();
    await checkInvoiceXml(xml, option);
    times.push(performance.now() - t);
  }
  console.log(
    `official validation ${option.standard} ${option.profile}: first ${firstMs.toFixed(0)} ms (load + run), then median ${median(times).toFixed(1)} ms per invoice (${first.length} findings)`,
  );
}
loop.disable();
console.log(
  `process RSS: ${(rssBefore / 2 ** 20).toFixed(0)} MB before the first check, ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0)} MB with every standard's rules loaded`,
);
console.log(
  `event loop meanwhile (${((performance.now() - validationStart) / 1000).toFixed(1)} s): longest stall ${(loop.max / 1e6).toFixed(1)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms (the checks run in a thread); idle peer (${((validationStart - idleStart) / 1000).toFixed(1)} s): longest ${(idle.max / 1e6).toFixed(1)} ms, p99 ${(idle.percentile(99) / 1e6).toFixed(1)} ms`,
);

await startConverter();
await convert(docx, { from: 'docx', to: 'pdf' }); // warm-up
const plain: number[] = [];
const einvoice: number[] = [];
const build: number[] = [];
let sizes = { plain: 0, einvoice: 0 };
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  const pdf = await convert(docx, { from: 'docx', to: 'pdf' });
  plain.push(performance.now() - t);
  t = performance.now();
  const built = buildEInvoice({ invoice }, options[0]!);
  await checkInvoiceXml(built.xml!, options[0]!);
  build.push(performance.now() - t);
  const pdfa = await convert(docx, { from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA3B' } });
  const out = embedFacturX(pdfa, built.xml!, { fileName: 'factur-x.xml', conformanceLevel: 'EN 16931', relationship: 'Alternative' });
  einvoice.push(performance.now() - t);
  sizes = { plain: pdf.byteLength, einvoice: out.byteLength };
}
await shutdownConverter();
await stopInvoiceChecks();
const p = median(plain);
const e = median(einvoice);
console.log(
  `runs ${runs}: plain pdf median ${p.toFixed(1)} ms; Factur-X EN16931 median ${e.toFixed(1)} ms (XML build, our rules and the official validation ${median(build).toFixed(1)} ms); ratio ${(e / p).toFixed(2)}`,
);
console.log(`sizes: plain ${sizes.plain} B, e-invoice ${sizes.einvoice} B`);

// The cost of an e-invoice over a plain pdf (issue 42), in-process on the warm LibreOffice pool: the same
// merged invoice converted to a plain pdf, and to a Factur-X EN16931 e-invoice (the XML built and checked,
// PDF/A-3b export, the XML embedded). Runs alternate; medians and their ratio.
//   node bench/einvoice.ts [runs=15]
import fs from 'node:fs';
import { convert, embedFacturX, shutdownConverter, startConverter } from '../converter/index.ts';
import { buildEInvoice } from '../einvoice/index.ts';
import { makeDocx } from '../test/support/office.ts';

const runs = Number(process.argv[2] ?? 15);
const invoice = JSON.parse(fs.readFileSync(new URL('../test/fixtures/einvoice/invoice.json', import.meta.url), 'utf8'));
const docx = makeDocx(['Invoice INV-2026-0117', ...invoice.lines.map((l: { name: string }) => l.name), 'Total 1001.52 EUR']);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

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
  const built = buildEInvoice({ invoice }, { standard: 'facturx', profile: 'EN16931', data: 'invoice' });
  build.push(performance.now() - t);
  const pdfa = await convert(docx, { from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA3B' } });
  const out = embedFacturX(pdfa, built.xml!, { fileName: 'factur-x.xml', conformanceLevel: 'EN 16931', relationship: 'Alternative' });
  einvoice.push(performance.now() - t);
  sizes = { plain: pdf.byteLength, einvoice: out.byteLength };
}
await shutdownConverter();
const p = median(plain);
const e = median(einvoice);
console.log(
  `runs ${runs}: plain pdf median ${p.toFixed(1)} ms; Factur-X EN16931 median ${e.toFixed(1)} ms (XML build + rules ${median(build).toFixed(2)} ms); ratio ${(e / p).toFixed(2)}`,
);
console.log(`sizes: plain ${sizes.plain} B, e-invoice ${sizes.einvoice} B`);

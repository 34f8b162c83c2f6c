// The cost of an e-invoice's XML from an XML template (document.einvoice.template, engine/xml-template.ts) on a
// 1,000-line invoice, against its peer, the JSON model writer with its rules (einvoice/buildEInvoice) on the same
// invoice. The template is test/fixtures/einvoice/invoice-cii.xml (its lines a loop); each render includes the
// well-formedness check of the output, and the root/BT-24 check the service adds (identityProblems). Warm runs,
// alternating; medians and their ratio. No LibreOffice: the XML only.
//   node bench/einvoice-xml-template.ts [runs=30] [lines=1000]
import { GUIDELINES } from '../einvoice/profiles.ts';
import { buildEInvoice, identityProblems } from '../einvoice/index.ts';
import { renderXmlTemplate } from '../engine/index.ts';
import { einvoiceFixture, templateInvoice } from '../test/support/einvoice-fixtures.ts';

const runs = Number(process.argv[2] ?? 30);
const lineCount = Number(process.argv[3] ?? 1000);
const template = einvoiceFixture('invoice-cii.xml');
const invoice = templateInvoice();
const line = invoice.lines[0];
invoice.lines = Array.from({ length: lineCount }, (_, i) => ({ ...line, id: String(i + 1), name: `${line.name} #${i + 1}` }));
const net = (Number(line.netAmount) * lineCount).toFixed(2);
const tax = ((Number(line.netAmount) * lineCount * 20) / 100).toFixed(2);
const grand = (Number(net) + Number(tax)).toFixed(2);
invoice.totals = { lineTotal: net, taxBasisTotal: net, taxTotal: tax, grandTotal: grand, duePayable: grand };
invoice.vatBreakdown = [{ category: 'S', rate: '20', taxableAmount: net, taxAmount: tax }];
const data = { guideline: GUIDELINES.EN16931, process: null, invoice };
const option = { standard: 'facturx', profile: 'EN16931', data: 'invoice' } as const;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const once = () => {
  const { output, warnings } = renderXmlTemplate(template, data, { locale: 'en-US', timezone: 'UTC' });
  if (warnings.length > 0 || identityProblems(output, option).length > 0) throw new Error('the template does not render this invoice');
  return output;
};
const built = buildEInvoice(data, option);
if (!built.xml) throw new Error(`the model refuses the invoice: ${JSON.stringify(built.problems.slice(0, 3))}`);
const xml = once();
for (let i = 0; i < 5; i++) {
  // warm-up
  once();
  buildEInvoice(data, option);
}

const templateMs: number[] = [];
const modelMs: number[] = [];
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  once();
  templateMs.push(performance.now() - t);
  t = performance.now();
  buildEInvoice(data, option);
  modelMs.push(performance.now() - t);
}
const tm = median(templateMs);
const mm = median(modelMs);
console.log(
  `runs ${runs}, ${lineCount} lines (${xml.split('\n').length} XML lines, ${xml.length} chars): XML template median ${tm.toFixed(2)} ms; model writer + rules median ${mm.toFixed(2)} ms; ratio ${(tm / mm).toFixed(2)}`,
);

import fs from 'node:fs';

/** A file of test/fixtures/einvoice. */
export const einvoiceFixture = (name: string): Buffer => fs.readFileSync(new URL(`../fixtures/einvoice/${name}`, import.meta.url));

/** The model's invoice (invoice.json) with what the XML template invoice-cii.xml takes as given rather than
 *  computes: the lines' net amounts and the VAT breakdown (the model accepts and checks both). */
export function templateInvoice(): Record<string, any> {
  const invoice = JSON.parse(einvoiceFixture('invoice.json').toString('utf8')) as Record<string, any>;
  const net = ['359.60', '160.00', '127.50', '187.50'];
  invoice.lines.forEach((line: Record<string, unknown>, i: number) => (line.netAmount = net[i]));
  invoice.vatBreakdown = [{ category: 'S', rate: '20', taxableAmount: '834.60', taxAmount: '166.92' }];
  return invoice;
}

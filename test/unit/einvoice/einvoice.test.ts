// The e-invoice model, its rules and its XML, without the service (einvoice/): decimal arithmetic, the
// calculation and VAT rules on cases a binary float gets wrong, the profiles' content, and XRechnung's rules.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { EInvoiceOption } from '../../../core/einvoice.ts';
import { add, dec, div, fixed, mul, plain, round } from '../../../einvoice/decimal.ts';
import { at, buildEInvoice, withAttachment } from '../../../einvoice/index.ts';
import { isDate } from '../../../einvoice/model.ts';

const invoice = JSON.parse(fs.readFileSync(new URL('../../fixtures/einvoice/invoice.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>;
const facturx = (profile: EInvoiceOption['profile'] = 'EN16931'): EInvoiceOption => ({ standard: 'facturx', profile, data: 'invoice' });
const rulesOf = (data: unknown, option = facturx()) => buildEInvoice(data, option).problems.map((p) => `${p.rule} ${p.field}`);

describe('decimals', () => {
  it('add and round exactly where binary floats do not', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(plain(add(dec('0.1'), dec('0.2')))).toBe('0.3');
    // 1.005 is 1.00499999999999989... as a double: Math.round(1.005 * 100) / 100 gives 1.
    expect(Math.round(1.005 * 100) / 100).toBe(1);
    expect(fixed(round(dec('1.005'), 2), 2)).toBe('1.01');
    expect(fixed(round(dec('-1.005'), 2), 2)).toBe('-1.01');
    expect(fixed(mul(dec('2.5'), dec('75.00')), 2)).toBe('187.50');
    expect(fixed(div(dec('10'), dec('3'), 4), 4)).toBe('3.3333');
    expect(fixed(div(dec('2'), dec('3'), 2), 2)).toBe('0.67');
  });

  it('reads calendar dates only', () => {
    expect(isDate('2024-02-29')).toBe(true);
    expect(isDate('2026-02-29')).toBe(false);
    expect(isDate('2026-13-01')).toBe(false);
    expect(isDate('02/11/2026')).toBe(false);
  });
});

describe('the invoice model and its rules', () => {
  it('the fixture is valid for every profile and standard', () => {
    for (const option of [
      facturx('MINIMUM'),
      facturx('BASIC WL'),
      facturx('BASIC'),
      facturx('EN16931'),
      facturx('EXTENDED'),
      { standard: 'xrechnung-cii', profile: 'XRECHNUNG', data: 'invoice' } as const,
      { standard: 'xrechnung-ubl', profile: 'XRECHNUNG', data: 'invoice' } as const,
    ]) {
      expect(buildEInvoice({ invoice }, option).problems, `${option.standard} ${option.profile}`).toEqual([]);
    }
  });

  it('computes the VAT breakdown per category and rate, with allowances and charges, rounding each group once', () => {
    const inv = structuredClone(invoice);
    delete inv.totals;
    inv.lines = [
      { name: 'a', quantity: '3', unitCode: 'C62', netPrice: '0.335', vat: { category: 'S', rate: '19' } },
      { name: 'b', quantity: '1', unitCode: 'C62', netPrice: '10', vat: { category: 'S', rate: '7' } },
      { name: 'c', quantity: '1', unitCode: 'C62', netPrice: '5', vat: { category: 'E', rate: '0' } },
    ];
    inv.allowances = [{ amount: '1.00', reason: 'loyalty', vat: { category: 'S', rate: '7' } }];
    inv.charges = [{ amount: '2.50', reason: 'shipping', vat: { category: 'S', rate: '19' } }];
    inv.exemptionReasons = { E: 'Exempt under article 261 CGI' };
    const { xml, problems } = buildEInvoice({ invoice: inv }, facturx());
    expect(problems).toEqual([]);
    // Lines: 1.01 (3 × 0.335 = 1.005, rounded up), 10.00, 5.00. S19: 1.01 + 2.50 = 3.51 → 0.67; S7: 9.00 → 0.63.
    expect(xml).toContain('<ram:LineTotalAmount>1.01</ram:LineTotalAmount>');
    expect(xml).toContain(
      '<ram:ApplicableTradeTax><ram:CalculatedAmount>0.67</ram:CalculatedAmount><ram:TypeCode>VAT</ram:TypeCode><ram:BasisAmount>3.51</ram:BasisAmount><ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent></ram:ApplicableTradeTax>',
    );
    expect(xml).toContain(
      '<ram:BasisAmount>9.00</ram:BasisAmount><ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>7</ram:RateApplicablePercent>',
    );
    expect(xml).toContain('<ram:ExemptionReason>Exempt under article 261 CGI</ram:ExemptionReason>');
    // 16.01 - 1.00 + 2.50 = 17.51; VAT 1.30; 18.81.
    expect(xml).toContain('<ram:TaxBasisTotalAmount>17.51</ram:TaxBasisTotalAmount>');
    expect(xml).toContain('<ram:GrandTotalAmount>18.81</ram:GrandTotalAmount>');
  });

  it('names each broken rule and its field', () => {
    const spoil = (f: (i: Record<string, any>) => void) => {
      const i = structuredClone(invoice);
      f(i);
      return { invoice: i };
    };
    expect(rulesOf(spoil((i) => (i.totals.lineTotal = '834.61')))).toEqual(['BR-CO-10 invoice.totals.lineTotal']);
    expect(rulesOf(spoil((i) => (i.vatBreakdown = [{ category: 'S', rate: '20', taxableAmount: '834.60', taxAmount: '166.93' }])))).toEqual(
      ['BR-CO-17 invoice.vatBreakdown[0].taxAmount'],
    );
    expect(rulesOf(spoil((i) => (i.lines[0].vat = { category: 'E', rate: '0' })))).toEqual(
      expect.arrayContaining(['BR-E-10 invoice.vatBreakdown', 'BR-CO-14 invoice.totals.taxTotal']),
    );
    expect(rulesOf(spoil((i) => (i.lines[0].vat = { category: 'AE', rate: '5' })))).toContain('BR-AE-05 invoice.lines[0].vat.rate');
    expect(rulesOf(spoil((i) => (i.seller.vatId = '123456789')))).toEqual(['BR-CO-09 invoice.seller.vatId']);
    expect(rulesOf(spoil((i) => (i.lines[0].quantity = '1e3')))).toEqual(['BR-22 invoice.lines[0].quantity']);
    expect(rulesOf(spoil((i) => (i.paymentMeans = { typeCode: '58' })))).toEqual(['BR-61 invoice.paymentMeans.iban']);
    expect(
      rulesOf(
        spoil((i) => {
          delete i.dueDate;
          delete i.paymentTerms;
        }),
      ),
    ).toEqual(['BR-CO-25 invoice.dueDate']);
    expect(rulesOf({ other: {} })).toEqual(['BR-01 invoice']);
    expect(
      rulesOf(
        spoil((i) => delete i.seller.electronicAddress),
        { standard: 'xrechnung-ubl', profile: 'XRECHNUNG', data: 'invoice' },
      ),
    ).toEqual(['PEPPOL-EN16931-R020 invoice.seller.electronicAddress']);
  });

  it('MINIMUM and BASIC WL carry no lines; only EN16931 and EXTENDED the seller contact and item descriptions', () => {
    const inv = structuredClone(invoice);
    inv.lines[0].description = 'Printed on cotton';
    const xmlOf = (p: EInvoiceOption['profile']) => buildEInvoice({ invoice: inv }, facturx(p)).xml!;
    expect(xmlOf('MINIMUM')).not.toContain('IncludedSupplyChainTradeLineItem');
    expect(xmlOf('MINIMUM')).not.toContain('PostcodeCode');
    expect(xmlOf('BASIC WL')).not.toContain('IncludedSupplyChainTradeLineItem');
    expect(xmlOf('BASIC WL')).toContain('<ram:PostcodeCode>75004</ram:PostcodeCode>');
    expect(xmlOf('BASIC')).toContain('IncludedSupplyChainTradeLineItem');
    expect(xmlOf('BASIC')).not.toContain('DefinedTradeContact');
    expect(xmlOf('BASIC')).not.toContain('Printed on cotton');
    expect(xmlOf('EN16931')).toContain('<ram:PersonName>Claire Martin</ram:PersonName>');
    expect(xmlOf('EXTENDED')).toContain('<ram:Description>Printed on cotton</ram:Description>');
  });

  it('escapes text, finds the invoice at a path, and puts an attachment where each XSD wants it', () => {
    const inv = structuredClone(invoice);
    inv.note = 'A <b> & "c"';
    const xml = buildEInvoice({ invoice: inv }, facturx()).xml!;
    expect(xml).toContain('<ram:Content>A &lt;b&gt; &amp; &quot;c&quot;</ram:Content>');
    expect(at({ a: { b: [1, { c: 2 }] } }, 'a.b[1].c')).toBe(2);
    expect(at({ a: 1 }, '')).toEqual({ a: 1 });
    expect(at({ a: 1 }, 'constructor')).toBeUndefined();
    const ubl = buildEInvoice({ invoice }, { standard: 'xrechnung-ubl', profile: 'XRECHNUNG', data: 'invoice' }).xml!;
    const attached = withAttachment(
      ubl,
      { standard: 'xrechnung-ubl', profile: 'XRECHNUNG', data: 'invoice' },
      {
        id: 'i.pdf',
        filename: 'i.pdf',
        mimeCode: 'application/pdf',
        base64: 'JVBERi0=',
      },
    );
    expect(attached.indexOf('<cac:AdditionalDocumentReference>')).toBeLessThan(attached.indexOf('<cac:AccountingSupplierParty>'));
    expect(attached.indexOf('<cbc:BuyerReference>')).toBeLessThan(attached.indexOf('<cac:AdditionalDocumentReference>'));
  });
});

// What docgen checks of any e-invoice XML before delivery besides the standard's XSD and Schematron
// (einvoice/identify.ts, called by activities/einvoice.ts checkedXml): the standard's root element and
// namespace, whatever its prefix, and the profile's guideline id (BT-24).
import { describe, expect, it } from 'vitest';
import type { EInvoiceOption } from '../../../core/einvoice.ts';
import { buildEInvoice, identityProblems } from '../../../einvoice/index.ts';
import { GUIDELINES, XRECHNUNG_GUIDELINE } from '../../../einvoice/profiles.ts';
import { einvoiceFixture } from '../../support/einvoice-fixtures.ts';

const CII = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100';
const RAM = 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100';
const facturx = (profile: EInvoiceOption['profile']): EInvoiceOption => ({ standard: 'facturx', profile, data: 'invoice' });
const ubl: EInvoiceOption = { standard: 'xrechnung-ubl', profile: 'XRECHNUNG', data: 'invoice' };
const cii = (root: string, ns: string, id: string) =>
  `<?xml version="1.0"?><!-- <x:Other/> <a:GuidelineSpecifiedDocumentContextParameter><a:ID>urn:commented-out</a:ID> --><${root} ${ns}><a:ExchangedDocumentContext xmlns:a="${RAM}"><a:GuidelineSpecifiedDocumentContextParameter><a:ID>${id}</a:ID></a:GuidelineSpecifiedDocumentContextParameter></a:ExchangedDocumentContext></${root}>`;

describe("an e-invoice XML's identity", () => {
  it("accepts what docgen's own writers make, for every standard", () => {
    const invoice = JSON.parse(einvoiceFixture('invoice.json').toString('utf8'));
    for (const option of [facturx('MINIMUM'), facturx('BASIC'), facturx('EXTENDED'), ubl, { ...ubl, standard: 'xrechnung-cii' } as const]) {
      const built = buildEInvoice({ invoice }, option);
      expect(identityProblems(built.xml!, option), option.profile).toEqual([]);
    }
  });

  it('matches the root by namespace, whatever its prefix (none, rsm, another)', () => {
    expect(identityProblems(cii('CrossIndustryInvoice', `xmlns="${CII}"`, GUIDELINES.EN16931), facturx('EN16931'))).toEqual([]);
    expect(identityProblems(cii('x:CrossIndustryInvoice', `xmlns:x="${CII}"`, GUIDELINES.BASIC), facturx('BASIC'))).toEqual([]);
    expect(identityProblems(cii('rsm:CrossIndustryInvoice', 'xmlns:rsm="urn:wrong"', GUIDELINES.BASIC), facturx('BASIC'))).toEqual([
      expect.objectContaining({ rule: 'ROOT', field: '/rsm:CrossIndustryInvoice', level: 'error' }),
    ]);
  });

  it('takes a UBL Invoice or CreditNote for xrechnung-ubl, nothing else', () => {
    const doc = (root: string, ns: string) =>
      `<${root} xmlns="${ns}" xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"><cbc:CustomizationID>${XRECHNUNG_GUIDELINE}</cbc:CustomizationID></${root}>`;
    expect(identityProblems(doc('CreditNote', 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2'), ubl)).toEqual([]);
    expect(identityProblems(doc('Invoice', 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2'), ubl)).toEqual([]);
    expect(identityProblems(doc('Order', 'urn:oasis:names:specification:ubl:schema:xsd:Order-2'), ubl)[0]).toMatchObject({
      rule: 'ROOT',
      field: '/Order',
    });
  });

  it("names BT-24 when the guideline id is another profile's, or absent", () => {
    const xml = cii('rsm:CrossIndustryInvoice', `xmlns:rsm="${CII}"`, GUIDELINES.EN16931);
    expect(identityProblems(xml, facturx('MINIMUM'))).toEqual([
      {
        rule: 'BT-24',
        field: '/rsm:CrossIndustryInvoice/rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID',
        level: 'error',
        message: `the guideline id (BT-24) is ${GUIDELINES.EN16931}, but facturx MINIMUM needs ${GUIDELINES.MINIMUM}`,
      },
    ]);
    expect(identityProblems(`<rsm:CrossIndustryInvoice xmlns:rsm="${CII}"/>`, facturx('EN16931'))[0]!.message).toContain(
      'has no guideline id',
    );
  });
});

// E-invoices through the real stack (issue 42): a generate with document.einvoice makes the XML from the
// invoice in its data, checks it against EN 16931's rules (and XRechnung's) before anything is merged, and
// delivers a PDF/A-3b with the CII XML embedded (Factur-X / ZUGFeRD) or the XML itself (XRechnung). An
// invalid invoice is a 400 naming each rule and field, and nothing is delivered. Every output is kept for
// the independent validators CI runs (test/support/einvoice-outputs.ts: Mustang, veraPDF).
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { pdfaIdentification } from '../../../converter/index.ts';
import { GUIDELINES, XRECHNUNG_GUIDELINE } from '../../../einvoice/profiles.ts';
import { documentCount, embeddedXml, uploadFile } from '../../support/einvoice-fixtures.ts';
import { keepEInvoice } from '../../support/einvoice-outputs.ts';
import { keepPdfA } from '../../support/pdfa-outputs.ts';
import { client, generateBody } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';

const invoice = JSON.parse(fs.readFileSync(new URL('../../fixtures/einvoice/invoice.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;
const template = makeDocx([
  'Invoice {invoice.number} of {invoice.issueDate}',
  '{#invoice.lines}{name}: {quantity} × {netPrice}{/invoice.lines}',
  'Total {invoice.totals.grandTotal} {invoice.currency}',
]);

describe('e-invoices', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const upload = (kind: 'template' | 'data', name: string, bytes: Uint8Array | string) => uploadFile(api, kind, name, bytes);
  const documents = () => documentCount(stack, creds.subscriptionId);
  async function generate(data: unknown, einvoice: unknown, fileFormat = 'pdf') {
    // An upload is consumed by the generate that names it: a template each time.
    const templateUrn = await upload('template', 'invoice.docx', template);
    const body = generateBody(templateUrn, await upload('data', 'invoice.json', JSON.stringify(data)), {
      document: { name: 'invoice', fileFormat, einvoice },
    });
    return api.call('POST', '/documents/document/generate', { json: body });
  }

  for (const [standard, profile] of [
    ['facturx', 'MINIMUM'],
    ['facturx', 'BASIC WL'],
    ['facturx', 'BASIC'],
    ['facturx', 'EN16931'],
    ['facturx', 'EXTENDED'],
    ['zugferd', 'EN16931'],
  ] as const) {
    it(`${standard} ${profile}: a PDF/A-3b with factur-x.xml embedded, its guideline id and the fx: XMP`, async () => {
      const res = await generate({ invoice }, { standard, profile });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const file = await api.download(res.body.result.data.document.urn);
      keepEInvoice(file.bytes, `${standard}-${profile}`, 'pdf');
      keepPdfA(file.bytes, `${standard}-${profile}`);
      expect(pdfaIdentification(file.bytes)).toEqual({ part: 3, conformance: 'B' });
      const text = Buffer.from(file.bytes).toString('latin1');
      expect(text).toContain('/UF (factur-x.xml)');
      expect(text).toContain(`/AFRelationship /${profile === 'MINIMUM' || profile === 'BASIC WL' ? 'Data' : 'Alternative'}`);
      expect(text).toMatch(/\/AF \[\d+ 0 R\]/);
      expect(text).toContain(`<fx:ConformanceLevel>${profile === 'EN16931' ? 'EN 16931' : profile}</fx:ConformanceLevel>`);
      const xml = embeddedXml(file.bytes);
      expect(xml).toContain(`<ram:ID>${GUIDELINES[profile]}</ram:ID>`);
      expect(xml).toContain('<ram:GrandTotalAmount>1001.52</ram:GrandTotalAmount>');
      expect(xml.includes('IncludedSupplyChainTradeLineItem')).toBe(profile !== 'MINIMUM' && profile !== 'BASIC WL');
    });
  }

  for (const standard of ['xrechnung-cii', 'xrechnung-ubl'] as const) {
    it(`${standard}: the XML is the document, with XRechnung's guideline id; with pdf: true the pdf rides inside`, async () => {
      const res = await generate({ invoice }, { standard }, 'xml');
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.result.data.document.fileFormat).toBe('xml');
      const file = await api.download(res.body.result.data.document.urn);
      const xml = Buffer.from(file.bytes).toString('utf8');
      keepEInvoice(file.bytes, standard, 'xml');
      expect(xml).toContain(XRECHNUNG_GUIDELINE);
      expect(xml).toContain(
        standard === 'xrechnung-ubl'
          ? '<cbc:PayableAmount currencyID="EUR">1001.52</cbc:PayableAmount>'
          : '<ram:DuePayableAmount>1001.52</ram:DuePayableAmount>',
      );
      expect(xml).not.toContain('application/pdf');

      const withPdf = await generate({ invoice }, { standard, pdf: true }, 'xml');
      expect(withPdf.status, JSON.stringify(withPdf.body)).toBe(201);
      const both = Buffer.from((await api.download(withPdf.body.result.data.document.urn)).bytes).toString('utf8');
      keepEInvoice(Buffer.from(both), `${standard}-pdf`, 'xml');
      const b64 = /mimeCode="application\/pdf" filename="invoice.pdf">([^<]+)</.exec(both)?.[1];
      expect(Buffer.from(b64!, 'base64').subarray(0, 5).toString()).toBe('%PDF-');
    });
  }

  it('the invoice can be anywhere in the data (einvoice.data), and warnings list warning-level rules', async () => {
    const { paymentMeans: _pm, ...noPayment } = invoice;
    const res = await generate({ order: { invoices: [noPayment] } }, { standard: 'facturx', data: 'order.invoices[0]' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The template's own tags (invoice.*) render empty here: MISSING_VALUE warnings beside the rule's.
    const rules = (res.body.result.data.warnings as { code: string }[]).filter((w) => w.code === 'EINVOICE_RULE');
    expect(rules).toEqual([
      expect.objectContaining({ code: 'EINVOICE_RULE', tag: 'BG-16', location: { part: 'order.invoices[0].paymentMeans' } }),
    ]);
  });

  const bad: [string, (i: Record<string, any>) => void, string, string, string?][] = [
    ['wrong grand total', (i) => (i.totals.grandTotal = '1001.53'), 'BR-CO-15', 'invoice.totals.grandTotal'],
    ['wrong VAT total', (i) => (i.totals.taxTotal = '166.90'), 'BR-CO-14', 'invoice.totals.taxTotal'],
    [
      'a line whose net amount is not quantity × price',
      (i) => (i.lines[1].netAmount = '160.01'),
      'BR-LIN-04',
      'invoice.lines[1].netAmount',
    ],
    ['missing seller VAT id', (i) => delete i.seller.vatId, 'BR-S-02', 'invoice.seller.vatId'],
    ['a bad issue date', (i) => (i.issueDate = '2026-02-30'), 'BT-2', 'invoice.issueDate'],
    ['an unknown currency', (i) => (i.currency = 'EUX'), 'BR-CL-04', 'invoice.currency'],
    ['a line without unit code', (i) => delete i.lines[0].unitCode, 'BR-23', 'invoice.lines[0].unitCode'],
    ['a unit code outside UN/ECE Rec 20', (i) => (i.lines[2].unitCode = 'BOX'), 'BR-CL-23', 'invoice.lines[2].unitCode'],
    ['a standard-rated line without rate', (i) => delete i.lines[0].vat.rate, 'BR-S-05', 'invoice.lines[0].vat.rate'],
    ['no lines', (i) => (i.lines = []), 'BR-16', 'invoice.lines'],
    ['no buyer name', (i) => delete i.buyer.name, 'BR-07', 'invoice.buyer.name'],
    ['an unknown seller country', (i) => (i.seller.address.countryCode = 'XY'), 'BR-CL-14', 'invoice.seller.address.countryCode'],
    ['a float amount with three decimals', (i) => (i.totals.prepaid = 0.005), 'BR-DEC-16', 'invoice.totals.prepaid'],
    ['XRechnung without buyer reference', (i) => delete i.buyerReference, 'BR-DE-15', 'invoice.buyerReference', 'xrechnung-ubl'],
    ['XRechnung without seller contact', (i) => delete i.seller.contact, 'BR-DE-2', 'invoice.seller.contact', 'xrechnung-cii'],
  ];
  for (const [what, spoil, rule, field, standard = 'facturx'] of bad) {
    it(`refuses ${what}: 400 EINVOICE_INVALID naming ${rule} and ${field}; nothing delivered`, async () => {
      const spoiled = structuredClone(invoice);
      spoil(spoiled);
      const before = await documents();
      const res = await generate({ invoice: spoiled }, { standard }, standard === 'facturx' ? 'pdf' : 'xml');
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const inner = res.body.error.innerErrors as { code: string; message: string }[];
      expect(
        inner.some((e) => e.code === 'EINVOICE_INVALID' && e.message.startsWith(`${rule} ${field}:`)),
        JSON.stringify(inner),
      ).toBe(true);
      expect(await documents()).toBe(before);
    });
  }

  it('refuses what only the official EN 16931 Schematron knows (BR-CL-25: an electronic address scheme outside the EAS list): 400 naming the rule and where; nothing delivered', async () => {
    const spoiled = structuredClone(invoice) as Record<string, any>;
    spoiled.seller.electronicAddress = { value: 'billing@northwind.example', scheme: 'ZZZ' };
    const before = await documents();
    const res = await generate({ invoice: spoiled }, { standard: 'facturx', profile: 'EN16931' });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const inner = res.body.error.innerErrors as { code: string; message: string; eventId?: string }[];
    expect(inner).toEqual([
      expect.objectContaining({
        code: 'EINVOICE_INVALID',
        eventId: 'BR-CL-25',
        message: expect.stringMatching(
          /^BR-CL-25 \/CrossIndustryInvoice\/SupplyChainTradeTransaction\/ApplicableHeaderTradeAgreement\/SellerTradeParty\S*: .*EAS/,
        ),
      }),
    ]);
    expect(await documents()).toBe(before);
  });

  it("lists the official Schematron's warning-level rules as EINVOICE_RULE warnings (XRechnung's BR-DE-27: a phone without three digits)", async () => {
    const odd = structuredClone(invoice) as Record<string, any>;
    odd.seller.contact.phone = 'n/a';
    const res = await generate({ invoice: odd }, { standard: 'xrechnung-cii' }, 'xml');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    keepEInvoice((await api.download(res.body.result.data.document.urn)).bytes, 'xrechnung-cii-warning', 'xml');
    const rules = (res.body.result.data.warnings as { code: string; tag?: string; location?: { part?: string } }[]).filter(
      (w) => w.code === 'EINVOICE_RULE',
    );
    expect(rules).toEqual([
      expect.objectContaining({
        tag: 'BR-DE-27',
        location: { part: expect.stringMatching(/^\/CrossIndustryInvoice\/.*DefinedTradeContact/) },
      }),
    ]);
  });

  it('the API refuses a wrong combination before queueing, naming the field', async () => {
    const cases: [unknown, string, string][] = [
      [{ standard: 'facturx' }, 'docx', 'document.einvoice.standard facturx makes a pdf'],
      [{ standard: 'xrechnung-ubl' }, 'pdf', 'document.fileFormat must be xml'],
      [{ standard: 'facturx', profile: 'XRECHNUNG' }, 'pdf', 'document.einvoice.profile XRECHNUNG is not a profile of facturx'],
      [{ standard: 'facturx', data: 'a..b' }, 'pdf', 'document.einvoice.data must be a path'],
      [{ standard: 'facturx', pdf: true }, 'pdf', 'document.einvoice.pdf is for xrechnung standards'],
      [undefined, 'xml', 'document.fileFormat xml is an e-invoice'],
    ];
    for (const [einvoice, fileFormat, message] of cases) {
      const before = await documents();
      const res = await generate({ invoice }, einvoice, fileFormat);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body.error.innerErrors)).toContain(message);
      expect(await documents()).toBe(before);
    }
  });
});

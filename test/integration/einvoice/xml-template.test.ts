// E-invoices from an XML template (issue 42: "an XML template with the same tag syntax as the Office templates"):
// document.einvoice.template names an uploaded .xml written with the Office tags; docgen renders it with the
// data (engine/xml-template.ts), checks the result (activities/einvoice.ts checkedXml: well-formed, the
// standard's root element, the profile's guideline id) before anything is merged, and delivers it as the
// model's XML is delivered: embedded in a PDF/A-3b (Factur-X) or as the document (XRechnung). Outputs are kept
// for CI's Mustang and veraPDF checks (test/support/einvoice-outputs.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { pdfaIdentification } from '../../../converter/index.ts';
import { GUIDELINES, PEPPOL_PROCESS, XRECHNUNG_GUIDELINE } from '../../../einvoice/profiles.ts';
import { documentCount, einvoiceFixture, embeddedXml, templateInvoice, uploadFile } from '../../support/einvoice-fixtures.ts';
import { keepEInvoice } from '../../support/einvoice-outputs.ts';
import { keepPdfA } from '../../support/pdfa-outputs.ts';
import { client, generateBody } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';

const ciiTemplate = einvoiceFixture('invoice-cii.xml');
const facturx = () => ({ guideline: GUIDELINES.EN16931, process: null, invoice: templateInvoice() });
const xrechnung = () => ({ guideline: XRECHNUNG_GUIDELINE, process: PEPPOL_PROCESS, invoice: templateInvoice() });

describe('e-invoices from an XML template', () => {
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
  async function generate(data: unknown, xml: Uint8Array | string, einvoice: Record<string, unknown>, fileFormat = 'pdf') {
    const docx = await upload('template', 'invoice.docx', makeDocx(['Invoice {invoice.number}', 'Total {invoice.totals.grandTotal}']));
    const xmlUrn = await upload('template', 'invoice.xml', xml);
    const body = generateBody(docx, await upload('data', 'invoice.json', JSON.stringify(data)), {
      document: { name: 'invoice', fileFormat, einvoice: { ...einvoice, template: { urn: xmlUrn, loadMethod: 'Storage' } } },
    });
    return api.call('POST', '/documents/document/generate', { json: body });
  }
  /** A refusal: its status, code and inner messages, and that nothing was delivered. */
  async function refused(data: unknown, xml: Uint8Array | string, einvoice: Record<string, unknown>, fileFormat = 'pdf') {
    const before = await documents();
    const res = await generate(data, xml, einvoice, fileFormat);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(await documents()).toBe(before);
    return {
      code: res.body.error.innerErrors[0]?.code as string,
      messages: (res.body.error.innerErrors as { message: string }[]).map((e) => e.message),
    };
  }

  it('facturx EN16931: the rendered XML embedded in a PDF/A-3b, values escaped, the lines from the loop', async () => {
    const res = await generate(facturx(), ciiTemplate, { standard: 'facturx', profile: 'EN16931' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.warnings).toBeUndefined();
    const file = await api.download(res.body.result.data.document.urn);
    keepEInvoice(file.bytes, 'xml-template-facturx-EN16931', 'pdf');
    keepPdfA(file.bytes, 'xml-template-facturx-EN16931');
    expect(pdfaIdentification(file.bytes)).toEqual({ part: 3, conformance: 'B' });
    expect(Buffer.from(file.bytes).toString('latin1')).toContain('<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>');
    const xml = embeddedXml(file.bytes);
    expect(xml).toContain(`<ram:ID>${GUIDELINES.EN16931}</ram:ID>`);
    expect(xml).toContain('<ram:Name>Northwind Print &amp; Paper SAS</ram:Name>');
    expect(xml.match(/<ram:IncludedSupplyChainTradeLineItem>/g)).toHaveLength(4);
    expect(xml).toContain('<udt:DateTimeString format="102">20261102</udt:DateTimeString>');
    expect(xml).toContain('<ram:TaxTotalAmount currencyID="EUR">166.92</ram:TaxTotalAmount>');
    expect(xml).not.toContain('BusinessProcessSpecifiedDocumentContextParameter');
    // Tags in comments stay as written (docs/einvoice.md); none is left elsewhere.
    expect(xml.replace(/<!--[\s\S]*?-->/g, '')).not.toMatch(/\{[#/]?[a-z]/i);
  });

  it('xrechnung-cii: the rendered XML is the document, with the PEPPOL process and XRechnung guideline', async () => {
    const res = await generate(xrechnung(), ciiTemplate, { standard: 'xrechnung-cii' }, 'xml');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.document.fileFormat).toBe('xml');
    const file = await api.download(res.body.result.data.document.urn);
    keepEInvoice(file.bytes, 'xml-template-xrechnung-cii', 'xml');
    const xml = Buffer.from(file.bytes).toString('utf8');
    expect(xml).toContain(`<ram:ID>${XRECHNUNG_GUIDELINE}</ram:ID>`);
    expect(xml).toContain(`<ram:ID>${PEPPOL_PROCESS}</ram:ID>`);
    expect(xml).toContain('<ram:DuePayableAmount>1001.52</ram:DuePayableAmount>');
  });

  it('a tag without data renders empty and is listed with its line and column', async () => {
    const data = facturx();
    delete data.invoice.orderReference;
    delete data.invoice.seller.contact.phone;
    const res = await generate(data, ciiTemplate, { standard: 'facturx' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // {#orderReference} renders nothing (a section); {contact.phone} an empty element.
    expect(res.body.result.data.warnings).toEqual([
      {
        code: 'MISSING_VALUE',
        message: expect.stringContaining('no value for tag "contact.phone" (document.einvoice.template, line 61, column'),
        tag: 'contact.phone',
        location: expect.objectContaining({ part: 'document.einvoice.template', line: 61 }),
      },
      {
        code: 'MISSING_VALUE',
        message: expect.stringContaining('no value for tag "#orderReference"'),
        tag: '#orderReference',
        location: expect.objectContaining({ part: 'document.einvoice.template', line: 94 }),
      },
    ]);
  });

  it('refuses a root element of another standard: 400 EINVOICE_INVALID, nothing delivered', async () => {
    const ubl = '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>{invoice.number}</ID></Invoice>';
    const r = await refused(facturx(), ubl, { standard: 'facturx' });
    expect(r.code).toBe('EINVOICE_INVALID');
    expect(r.messages).toEqual([
      expect.stringMatching(/^ROOT \/Invoice: the root element is Invoice .* facturx needs CII rsm:CrossIndustryInvoice/),
    ]);
    const cii = await refused(xrechnung(), ciiTemplate, { standard: 'xrechnung-ubl' }, 'xml');
    expect(cii.messages).toEqual([
      expect.stringMatching(/^ROOT \/rsm:CrossIndustryInvoice: .*xrechnung-ubl needs UBL 2.1 Invoice or CreditNote/),
    ]);
  });

  it('refuses a guideline id (BT-24) of another profile: 400 EINVOICE_INVALID naming BT-24', async () => {
    const r = await refused(facturx(), ciiTemplate, { standard: 'facturx', profile: 'EXTENDED' });
    expect(r.code).toBe('EINVOICE_INVALID');
    expect(r.messages).toEqual([
      `BT-24 /rsm:CrossIndustryInvoice/rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID: the guideline id (BT-24) is ${GUIDELINES.EN16931}, but facturx EXTENDED needs ${GUIDELINES.EXTENDED}`,
    ]);
  });

  it('refuses a template whose output is not well-formed, or with a template error: 400 TEMPLATE_ERROR with where', async () => {
    // The loop closes inside the element it opened: every line leaves a </ram:IncludedSupplyChainTradeLineItem> short.
    const broken = ciiTemplate
      .toString('utf8')
      .replace('</ram:IncludedSupplyChainTradeLineItem>{/lines}', '{/lines}</ram:IncludedSupplyChainTradeLineItem>');
    const r = await refused(facturx(), broken, { standard: 'facturx' });
    expect(r.code).toBe('TEMPLATE_ERROR');
    expect(r.messages).toEqual([
      expect.stringMatching(
        /^the rendered XML is not well-formed at line \d+, column \d+ of the output: .* \(document.einvoice.template \(rendered\), line \d+, column \d+\)$/,
      ),
    ]);
    const filter = ciiTemplate.toString('utf8').replace('{number}', '{number | nosuch}');
    const f = await refused(facturx(), filter, { standard: 'facturx' });
    expect(f).toEqual({
      code: 'TEMPLATE_ERROR',
      messages: ['unknown filter "nosuch" in tag "number | nosuch" (document.einvoice.template, line 15, column 13)'],
    });
  });

  it('consumes the XML template upload, as the template: a second generate naming it is TEMPLATE_NOT_FOUND', async () => {
    const xmlUrn = await upload('template', 'invoice.xml', ciiTemplate);
    const once = async () => {
      const docx = await upload('template', 'invoice.docx', makeDocx(['Invoice {invoice.number}']));
      const body = generateBody(docx, await upload('data', 'invoice.json', JSON.stringify(xrechnung())), {
        document: { name: 'invoice', fileFormat: 'xml', einvoice: { standard: 'xrechnung-cii', template: { urn: xmlUrn } } },
      });
      return api.call('POST', '/documents/document/generate', { json: body });
    };
    expect((await once()).status).toBe(201);
    const again = await once();
    expect(again.status, JSON.stringify(again.body)).toBe(400);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
  });

  it('the API refuses einvoice.template with einvoice.data, or another loadMethod, naming the field; a .xml uploads as a template', async () => {
    const xmlUrn = await upload('template', 'invoice.xml', ciiTemplate);
    for (const [template, extra, message] of [
      [{ urn: xmlUrn }, { data: 'invoice' }, 'document.einvoice.data is where the invoice model is'],
      [{ urn: xmlUrn, loadMethod: 'DriveA' }, {}, 'document.einvoice.template.loadMethod must be'],
      [{ urn: '' }, {}, 'document.einvoice.template.urn must be the id of an XML template'],
    ] as const) {
      const docx = await upload('template', 'invoice.docx', makeDocx(['x']));
      const body = generateBody(docx, await upload('data', 'd.json', JSON.stringify(facturx())), {
        document: { name: 'invoice', fileFormat: 'pdf', einvoice: { standard: 'facturx', template, ...extra } },
      });
      const res = await api.call('POST', '/documents/document/generate', { json: body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body.error.innerErrors)).toContain(message);
    }
    const doctype = await api.upload('template', [{ name: 'x.xml', bytes: '<!DOCTYPE a><a/>' }]);
    expect(doctype.status).toBe(400);
    expect(doctype.body.error.innerErrors[0].code).toBe('INVALID_TEMPLATE_FORMAT');
  });
});

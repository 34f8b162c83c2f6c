// E-invoices from the invoice in a document's data (docs/einvoice.md): the JSON model read and checked
// against EN 16931's rules (and XRechnung's) with decimal arithmetic, then written as CII (Factur-X /
// ZUGFeRD, XRechnung CII) or UBL (XRechnung UBL). Pure: no I/O, no Node built-ins; the pdf side (PDF/A-3b
// with the XML embedded) is converter/facturx.ts.
import type { EInvoiceOption } from '../core/einvoice.ts';
import { toCii } from './cii.ts';
import { type Problem, readInvoice } from './model.ts';
import type { CiiProfile } from './profiles.ts';
import { computeAndCheck } from './rules.ts';
import { esc } from './xml.ts';
import { type Attachment, toUbl } from './ubl.ts';

export type { Problem } from './model.ts';
export { CONFORMANCE_LEVEL } from './profiles.ts';
export { guidelineOf, identityProblems } from './identify.ts';

export interface Built {
  /** The XML, when no rule of the error level failed. */
  xml?: string;
  /** Every failed rule: errors refuse the e-invoice, warnings are listed with the result. */
  problems: Problem[];
}

/** The value at `path` (invoice, order.invoice, invoices[0]; empty: the data itself), or undefined. */
export function at(data: unknown, path: string): unknown {
  if (path === '') return data;
  let v: unknown = data;
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (v === null || typeof v !== 'object') return undefined;
    const key = m[1] ?? Number(m[2]);
    v = Object.hasOwn(v, key) ? (v as Record<string | number, unknown>)[key] : undefined;
  }
  return v;
}

/** The e-invoice of `data` as `option` asks for it. */
export function buildEInvoice(data: unknown, option: EInvoiceOption): Built {
  const root = option.data === '' ? 'data' : option.data;
  const found = at(data, option.data);
  if (found === undefined)
    return {
      problems: [{ rule: 'BR-01', field: root, level: 'error', message: `the data has no invoice at ${root} (document.einvoice.data)` }],
    };
  const read = readInvoice(found, root);
  if (!read.invoice) return { problems: read.problems };
  const inv = read.invoice;
  const problems = [...read.problems];
  if (option.standard === 'xrechnung-ubl' && inv.typeCode === '381')
    problems.push({
      rule: 'BR-CL-01',
      field: `${root}.typeCode`,
      level: 'error',
      message: 'a credit note (381) is a UBL CreditNote, which docgen does not write: use xrechnung-cii',
    });
  const checked = computeAndCheck(inv, root, option);
  problems.push(...checked.problems);
  if (problems.some((p) => p.level === 'error')) return { problems };
  const xml =
    option.standard === 'xrechnung-ubl'
      ? toUbl(inv, checked.computed)
      : toCii(inv, checked.computed, option.standard === 'xrechnung-cii' ? 'XRECHNUNG' : (option.profile as CiiProfile));
  return { xml, problems };
}

/** The name the XML has inside a pdf (Factur-X 1.07 and ZUGFeRD 2.x: factur-x.xml) or as a file. */
export function xmlFileName(option: EInvoiceOption): string {
  return option.standard.startsWith('xrechnung') ? 'xrechnung.xml' : 'factur-x.xml';
}

/** The XML with a file inside it as an additional supporting document (BG-24: BT-122 its id, BT-125 the
 *  file, base64): UBL's AdditionalDocumentReference before the parties, CII's AdditionalReferencedDocument
 *  (type 916) at the end of the header trade agreement, where the XSDs' sequences put them. */
export function withAttachment(xml: string, option: EInvoiceOption, a: Attachment): string {
  if (attachmentProblem(xml, option)) throw new Error('the XML has no place for the attachment');
  if (option.standard === 'xrechnung-ubl') {
    const at = xml.indexOf('<cac:AccountingSupplierParty>');
    const ref =
      `<cac:AdditionalDocumentReference><cbc:ID>${esc(a.id)}</cbc:ID><cac:Attachment>` +
      `<cbc:EmbeddedDocumentBinaryObject mimeCode="${esc(a.mimeCode)}" filename="${esc(a.filename)}">${a.base64}</cbc:EmbeddedDocumentBinaryObject>` +
      `</cac:Attachment></cac:AdditionalDocumentReference>`;
    return xml.slice(0, at) + ref + xml.slice(at);
  }
  const at = xml.indexOf('</ram:ApplicableHeaderTradeAgreement>');
  const ref =
    `<ram:AdditionalReferencedDocument><ram:IssuerAssignedID>${esc(a.id)}</ram:IssuerAssignedID><ram:TypeCode>916</ram:TypeCode>` +
    `<ram:AttachmentBinaryObject mimeCode="${esc(a.mimeCode)}" filename="${esc(a.filename)}">${a.base64}</ram:AttachmentBinaryObject>` +
    `</ram:AdditionalReferencedDocument>`;
  return xml.slice(0, at) + ref + xml.slice(at);
}

/** With einvoice.pdf, whether the XML has the element withAttachment puts the pdf before (an XML template's
 *  may use other prefixes than docgen's cac:/ram:). */
export function attachmentProblem(xml: string, option: EInvoiceOption): Problem | undefined {
  if (!option.pdf) return undefined;
  const [marker, field] =
    option.standard === 'xrechnung-ubl'
      ? ['<cac:AccountingSupplierParty>', 'cac:AccountingSupplierParty']
      : ['</ram:ApplicableHeaderTradeAgreement>', 'ram:ApplicableHeaderTradeAgreement'];
  if (xml.includes(marker)) return undefined;
  return {
    rule: 'BG-24',
    field,
    level: 'error',
    message: `document.einvoice.pdf puts the pdf in the XML before ${marker}, which the XML does not have (written with these prefixes)`,
  };
}

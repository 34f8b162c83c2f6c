// The e-invoice steps of a generate (docs/einvoice.md), shared by a single generate and a batch's rows:
// the XML built from the data and checked before anything is merged, first by our own rules (which name the
// JSON field), then by the official XSD and Schematron (activities/einvoice-validate.ts); a failure is a 400
// EINVOICE_INVALID naming each rule and field: nothing delivered, nothing metered. And the delivered file made of it after the
// conversion: the PDF/A-3b with the XML embedded (Factur-X / ZUGFeRD), or the XML itself, with the pdf
// inside when asked (XRechnung).
import type { EInvoiceOption } from '../core/einvoice.ts';
import { innerError } from '../core/errors.ts';
import { callerFailure } from '../core/failures.ts';
import type { GenerateWarning } from '../core/generate.ts';
import { embedFacturX } from '../converter/index.ts';
import { buildEInvoice, CONFORMANCE_LEVEL, type Problem, withAttachment, xmlFileName } from '../einvoice/index.ts';
import { checkInvoiceXml } from './einvoice-validate.ts';

/** The XML of the invoice in `data` (JSON bytes), or the failure that refuses it; warning-level rules as
 *  the generate's warnings (code EINVOICE_RULE). Our rules run first (a refusal names the JSON field); the
 *  XML they accept is then judged by the official XSD and Schematron, whose findings our rules did not
 *  already report for the same rule are added. */
export async function invoiceXml(data: Uint8Array, option: EInvoiceOption): Promise<{ xml: string; warnings: GenerateWarning[] }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(data));
  } catch {
    throw callerFailure('DATA_INVALID', 'document.einvoice reads the invoice from JSON data, and the data is not JSON');
  }
  const built = buildEInvoice(parsed, option);
  if (built.xml && !built.problems.some((p) => p.level === 'error')) {
    const known = new Set(built.problems.map((p) => p.rule));
    built.problems.push(...(await checkInvoiceXml(built.xml, option)).filter((p) => !known.has(p.rule)));
  }
  const errors = built.problems.filter((p) => p.level === 'error');
  if (!built.xml || errors.length > 0) throw refusal(option, errors);
  const warnings = built.problems.map((p): GenerateWarning => ({
    code: 'EINVOICE_RULE',
    message: `${p.rule} ${p.field}: ${p.message}`,
    tag: p.rule,
    location: { part: p.field },
  }));
  return { xml: built.xml, warnings };
}

/** 400 EINVOICE_INVALID with one inner error per failed rule (its eventId the rule). */
function refusal(option: EInvoiceOption, errors: Problem[]) {
  const inner = errors.map((p) => ({ ...innerError('EINVOICE_INVALID', `${p.rule} ${p.field}: ${p.message}`), eventId: p.rule }));
  return callerFailure(
    'EINVOICE_INVALID',
    `the ${option.standard} e-invoice (${option.profile}) breaks ${errors.length} rule${errors.length === 1 ? '' : 's'}: ${errors.map((p) => `${p.rule} (${p.field})`).join(', ')}`,
    inner,
  );
}

/** The delivered file: for facturx/zugferd the PDF/A-3b (`rendered`) with the XML embedded; for xrechnung
 *  the XML, with `rendered` (a plain pdf) inside it when the option asks for it. */
export function eInvoiceDocument(xml: string, option: EInvoiceOption, rendered: Uint8Array | undefined, pdfName: string): Uint8Array {
  if (option.standard === 'facturx' || option.standard === 'zugferd') {
    if (!rendered) throw new Error('a Factur-X invoice needs its pdf');
    const profile = option.profile as keyof typeof CONFORMANCE_LEVEL;
    return embedFacturX(rendered, xml, {
      fileName: xmlFileName(option),
      conformanceLevel: CONFORMANCE_LEVEL[profile],
      relationship: profile === 'MINIMUM' || profile === 'BASIC WL' ? 'Data' : 'Alternative',
    });
  }
  const out = rendered
    ? withAttachment(xml, option, {
        id: pdfName,
        filename: pdfName,
        mimeCode: 'application/pdf',
        base64: Buffer.from(rendered).toString('base64'),
      })
    : xml;
  return new TextEncoder().encode(out);
}

/** A whole e-invoice from one data value (a batch's row): the XML checked first, then `merge` and `pdf`
 *  (the rendition, PDF/A-3b for facturx/zugferd), then the delivered file. `name`: the document's name. */
export async function eInvoiceOf(
  option: EInvoiceOption,
  data: unknown,
  name: string,
  steps: { merge(): Promise<Uint8Array>; pdf(merged: Uint8Array, options: { conformance?: string }): Promise<Uint8Array> },
): Promise<Uint8Array> {
  const { xml } = await invoiceXml(new TextEncoder().encode(JSON.stringify(data)), option);
  const cii = option.standard === 'facturx' || option.standard === 'zugferd';
  const rendered = cii || option.pdf ? await steps.pdf(await steps.merge(), cii ? { conformance: 'PdfA3B' } : {}) : undefined;
  return eInvoiceDocument(xml, option, rendered, `${name.replace(/\.xml$/i, '')}.pdf`);
}

// The e-invoice steps of a generate (docs/einvoice.md), shared by a single generate and a batch's rows:
// the XML built from the data and checked before anything is merged (a 400 EINVOICE_INVALID naming each
// rule and field: nothing delivered, nothing metered), and the delivered file made of it after the
// conversion: the PDF/A-3b with the XML embedded (Factur-X / ZUGFeRD), or the XML itself, with the pdf
// inside when asked (XRechnung).
import type { EInvoiceOption } from '../core/einvoice.ts';
import { innerError } from '../core/errors.ts';
import { callerFailure } from '../core/failures.ts';
import type { GenerateWarning } from '../core/generate.ts';
import { embedFacturX } from '../converter/index.ts';
import { renderXmlTemplate, TemplateError, wellFormedProblem } from '../engine/index.ts';
import {
  attachmentProblem,
  buildEInvoice,
  CONFORMANCE_LEVEL,
  identityProblems,
  type Problem,
  withAttachment,
  xmlFileName,
} from '../einvoice/index.ts';
import { checkInvoiceXml } from './einvoice-validate.ts';
import { mergeWarnings, templateFailure } from './template-errors.ts';

/** How an XML template renders: the document's locale, time zone and strictness. */
export interface XmlTemplateRender {
  locale: string;
  timezone: string;
  strict?: boolean;
}

/** The e-invoice's XML and its warnings: from the XML template when the option names one (`template`: its
 *  bytes), else from the invoice model in the data; checked (checkedXml) either way. */
export async function eInvoiceXml(
  option: EInvoiceOption,
  data: Uint8Array,
  template: Uint8Array | undefined,
  render: XmlTemplateRender,
): Promise<{ xml: string; warnings: GenerateWarning[] }> {
  const made = option.template ? templateXml(template ?? new Uint8Array(), data, render) : invoiceXml(data, option);
  const ruled = await checkedXml(made.xml, option, new Set(made.warnings.map((w) => w.tag)));
  return { xml: made.xml, warnings: [...made.warnings, ...ruled] };
}

/** document.einvoice.template rendered with the data (the engine's XML templates): its errors a 400
 *  TEMPLATE_ERROR located by line and column, its missing values MISSING_VALUE warnings. */
export function templateXml(
  template: Uint8Array,
  data: Uint8Array,
  render: XmlTemplateRender,
): { xml: string; warnings: GenerateWarning[] } {
  if (template[0] === 0x50 && template[1] === 0x4b)
    throw callerFailure('INVALID_TEMPLATE_FORMAT', 'document.einvoice.template is an Office package, not an XML template (.xml)');
  const parsed = jsonOf(data, 'document.einvoice.template renders JSON data');
  try {
    const { output, warnings } = renderXmlTemplate(template, parsed, {
      locale: render.locale,
      timezone: render.timezone,
      ...(render.strict ? { strict: true } : {}),
      name: 'document.einvoice.template',
    });
    return { xml: output, warnings: mergeWarnings(warnings).warnings ?? [] };
  } catch (err) {
    if (err instanceof TemplateError) throw templateFailure(err, 'document.einvoice.template');
    throw err;
  }
}

/**
 * The one check of an e-invoice's XML before anything is merged or delivered, whoever wrote it (docgen's
 * model writer or an XML template): well-formed, the standard's root element and namespace, the profile's
 * guideline id (BT-24), the place for einvoice.pdf's attachment, then the standard's official XSD and
 * Schematron. Errors refuse it (400 EINVOICE_INVALID naming each rule and field: nothing delivered or
 * metered); warnings come back as EINVOICE_RULE.
 */
export async function checkedXml(xml: string, option: EInvoiceOption, reported = new Set<string>()): Promise<GenerateWarning[]> {
  const formed = wellFormedProblem(xml);
  const problems: Problem[] = formed
    ? [
        {
          rule: 'XML',
          field: '/',
          level: 'error',
          message: `the XML is not well-formed: ${formed.message} (character ${formed.offset + 1})`,
        },
      ]
    : identityProblems(xml, option);
  const attachment = formed ? undefined : attachmentProblem(xml, option);
  if (attachment) problems.push(attachment);
  // Then the official XSD and Schematron (activities/einvoice-validate.ts); a rule the model's own rules
  // already reported (`reported`: they name the JSON field) is not said twice.
  if (!problems.some((p) => p.level === 'error'))
    problems.push(...(await checkInvoiceXml(xml, option)).filter((p) => !reported.has(p.rule)));
  refuseErrors(problems, option);
  return rulesAsWarnings(problems);
}

function jsonOf(data: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    throw callerFailure('DATA_INVALID', `${what}, and the data is not JSON`);
  }
}

/** A 400 EINVOICE_INVALID with one inner error per failed rule of the error level, when there is one. */
function refuseErrors(problems: Problem[], option: EInvoiceOption): void {
  const errors = problems.filter((p) => p.level === 'error');
  if (errors.length === 0) return;
  const inner = errors.map((p) => ({ ...innerError('EINVOICE_INVALID', `${p.rule} ${p.field}: ${p.message}`), eventId: p.rule }));
  throw callerFailure(
    'EINVOICE_INVALID',
    `the ${option.standard} e-invoice (${option.profile}) breaks ${errors.length} rule${errors.length === 1 ? '' : 's'}: ${errors.map((p) => `${p.rule} (${p.field})`).join(', ')}`,
    inner,
  );
}

/** Warning-level rules as the generate's warnings (code EINVOICE_RULE: tag the rule, location.part the field). */
function rulesAsWarnings(problems: Problem[]): GenerateWarning[] {
  return problems
    .filter((p) => p.level === 'warning')
    .map((p): GenerateWarning => ({
      code: 'EINVOICE_RULE',
      message: `${p.rule} ${p.field}: ${p.message}`,
      tag: p.rule,
      location: { part: p.field },
    }));
}

/** The XML of the invoice model in `data` (JSON bytes) at option.data, or the failure that refuses it;
 *  warning-level rules as the generate's warnings (code EINVOICE_RULE). */
export function invoiceXml(data: Uint8Array, option: EInvoiceOption): { xml: string; warnings: GenerateWarning[] } {
  const parsed = jsonOf(data, 'document.einvoice reads the invoice from JSON data');
  const built = buildEInvoice(parsed, option);
  refuseErrors(built.problems, option);
  return { xml: built.xml!, warnings: rulesAsWarnings(built.problems) };
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

/** A whole e-invoice from one data value (a batch's row): the XML made and checked first, then `merge` and
 *  `pdf` (the rendition, PDF/A-3b for facturx/zugferd), then the delivered file, with the XML's warnings
 *  (EINVOICE_RULE; MISSING_VALUE of an XML template). `name`: the document's name. */
export async function eInvoiceOf(
  option: EInvoiceOption,
  data: unknown,
  name: string,
  xml: { template?: Uint8Array; render: XmlTemplateRender },
  steps: { merge(): Promise<Uint8Array>; pdf(merged: Uint8Array, options: { conformance?: string }): Promise<Uint8Array> },
): Promise<{ bytes: Uint8Array; warnings: GenerateWarning[] }> {
  const made = await eInvoiceXml(option, new TextEncoder().encode(JSON.stringify(data)), xml.template, xml.render);
  const cii = option.standard === 'facturx' || option.standard === 'zugferd';
  const rendered = cii || option.pdf ? await steps.pdf(await steps.merge(), cii ? { conformance: 'PdfA3B' } : {}) : undefined;
  return { bytes: eInvoiceDocument(made.xml, option, rendered, `${name.replace(/\.xml$/i, '')}.pdf`), warnings: made.warnings };
}

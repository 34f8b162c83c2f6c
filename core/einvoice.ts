// document.einvoice (docs/einvoice.md): an EN 16931 e-invoice made from the same data as the document.
// The option's contract and the rules the API checks before any workflow starts; the invoice model, its
// rules and the XML are einvoice/'s.
import Type from 'typebox';
import { type InnerError, innerError } from './errors.ts';

export const EINVOICE_STANDARDS = ['facturx', 'zugferd', 'xrechnung-cii', 'xrechnung-ubl'] as const;
export const EINVOICE_PROFILES = ['MINIMUM', 'BASIC WL', 'BASIC', 'EN16931', 'EXTENDED', 'XRECHNUNG'] as const;

/** What the workflow carries: the standard, its profile, where the invoice is in the data. */
export interface EInvoiceOption {
  standard: (typeof EINVOICE_STANDARDS)[number];
  profile: (typeof EINVOICE_PROFILES)[number];
  /** A path in the data: `invoice`, `order.invoice`, `invoices[0]`; empty for the data itself. */
  data: string;
  /** xrechnung-*: the template rendered to pdf rides in the XML as a supporting document (BG-24). */
  pdf?: true;
  /** The XML comes from this XML template (an upload: Storage), rendered with the whole data, instead of the
   *  invoice model at `data` (docs/einvoice.md "XML templates"). */
  template?: { urn: string; loadMethod: 'Storage' };
}

/** Where an XML template may be read from (uploads with POST /documents/template/upload). */
export const EINVOICE_TEMPLATE_METHODS = ['Storage'] as const;

export const EInvoiceSchema = Type.Object(
  {
    standard: Type.Unsafe<string>({
      type: 'string',
      enum: [...EINVOICE_STANDARDS],
      description:
        'facturx or zugferd (Factur-X 1.07 / ZUGFeRD 2.3, the same file): document.fileFormat pdf, delivered as PDF/A-3b with the CII XML embedded as factur-x.xml. xrechnung-cii or xrechnung-ubl (XRechnung 3.0): document.fileFormat xml, the XML is the document',
    }),
    profile: Type.Optional(
      Type.Unsafe<string>({
        type: 'string',
        enum: [...EINVOICE_PROFILES],
        description:
          "facturx/zugferd: MINIMUM, BASIC WL, BASIC, EN16931 (default) or EXTENDED; the profile's guideline id (BT-24) goes into the XML. xrechnung-*: XRECHNUNG (the default, the only one)",
      }),
    ),
    data: Type.Optional(
      Type.String({
        description:
          'Where the invoice is in the data (the JSON invoice model of docs/einvoice.md): a path such as invoice (the default), order.invoice or invoices[0]; an empty string for the data itself',
      }),
    ),
    pdf: Type.Optional(
      Type.Boolean({
        description:
          'xrechnung-* only, default false: the template rendered to pdf travels inside the XML as an additional supporting document (BG-24, base64)',
      }),
    ),
    template: Type.Optional(
      Type.Object(
        {
          urn: Type.String({ description: 'The id POST /documents/template/upload gave the .xml file' }),
          loadMethod: Type.Optional(
            Type.Unsafe<string>({ type: 'string', enum: [...EINVOICE_TEMPLATE_METHODS], description: 'Storage (the default)' }),
          ),
        },
        {
          description:
            "Instead of the JSON invoice model: an XML template (a .xml file uploaded with POST /documents/template/upload, consumed by the generate like the template) written with the Office templates' tags ({value}, {#lines}...{/lines}, conditions, filters), rendered with the whole data; values are XML-escaped, the result must be well-formed (else 400 TEMPLATE_ERROR with line and column). Its root element must be the standard's (CII rsm:CrossIndustryInvoice, UBL Invoice or CreditNote) and its guideline id (BT-24) the profile's, else 400 EINVOICE_INVALID. Not with einvoice.data. See docs/einvoice.md",
        },
      ),
    ),
  },
  {
    description:
      "Extension: an EN 16931 e-invoice made from the invoice in the data, checked before delivery against the standard's business rules and then its XML against the standard's XSD and the official EN 16931 Schematron (XRechnung's too for xrechnung-*; Factur-X's own for MINIMUM and BASIC WL). A failure is a 400 EINVOICE_INVALID with one inner error per rule, naming the rule and the field (the JSON field, or the XML location for a rule only the official Schematron checks); nothing is delivered or metered; warning-level rules are listed in result.data.warnings. A worker without the official rules (never fetched from Maven Central) refuses with NOT_SUPPORTED",
  },
);

const PATH = /^(?:[A-Za-z_$][\w$]*|\[\d+\])(?:\.[A-Za-z_$][\w$]*|\[\d+\])*$/;

/** document.einvoice checked against the rest of the document: facturx/zugferd make a pdf (PDF/A-3b: no
 *  other conformance), xrechnung an xml; the profile belongs to the standard; the data path is one. */
export function parseEInvoice(
  value: unknown,
  document: { fileFormat: string; saveOptions?: { pdf?: { conformance?: string } } },
  problems: InnerError[],
): EInvoiceOption | undefined {
  if (value === undefined || value === null) {
    if (document.fileFormat === 'xml')
      problems.push(bad('document.fileFormat xml is an e-invoice: it needs document.einvoice with an xrechnung standard'));
    return undefined;
  }
  const o = value as { standard?: unknown; profile?: unknown; data?: unknown; pdf?: unknown; template?: unknown };
  const standard = EINVOICE_STANDARDS.find((s) => s === o.standard);
  const before = problems.length;
  if (!standard) problems.push(bad(`document.einvoice.standard must be one of ${EINVOICE_STANDARDS.join(', ')}`));
  const xrechnung = standard?.startsWith('xrechnung') ?? false;
  const profile = EINVOICE_PROFILES.find((p) => p === (o.profile ?? (xrechnung ? 'XRECHNUNG' : 'EN16931')));
  if (!profile) problems.push(bad(`document.einvoice.profile must be one of ${EINVOICE_PROFILES.join(', ')}`));
  else if (standard && xrechnung !== (profile === 'XRECHNUNG'))
    problems.push(
      bad(
        xrechnung
          ? `document.einvoice.profile must be XRECHNUNG (or left out) for ${standard}`
          : `document.einvoice.profile ${profile} is not a profile of ${standard}: MINIMUM, BASIC WL, BASIC, EN16931 or EXTENDED`,
      ),
    );
  const data = o.data ?? 'invoice';
  if (typeof data !== 'string' || (data !== '' && !PATH.test(data)))
    problems.push(
      bad('document.einvoice.data must be a path in the data such as invoice, order.invoice or invoices[0] (empty for the data itself)'),
    );
  const template = templateOf(o.template, o.data, problems);
  if (o.pdf !== undefined && typeof o.pdf !== 'boolean') problems.push(bad('document.einvoice.pdf must be true or false'));
  if (o.pdf === true && standard && !xrechnung)
    problems.push(bad(`document.einvoice.pdf is for xrechnung standards: ${standard} embeds the XML in the pdf, the document itself`));
  if (standard && !xrechnung && document.fileFormat !== 'pdf')
    problems.push(
      bad(`document.einvoice.standard ${standard} makes a pdf (PDF/A-3b with the XML inside): document.fileFormat must be pdf`),
    );
  if (standard && xrechnung && document.fileFormat !== 'xml')
    problems.push(
      bad(
        `document.einvoice.standard ${standard} makes the XML itself: document.fileFormat must be xml (document.einvoice.pdf: true puts the pdf inside it)`,
      ),
    );
  const conformance = document.saveOptions?.pdf?.conformance;
  if (standard && !xrechnung && conformance !== undefined && conformance.toLowerCase().replace(/[-_/ ]/g, '') !== 'pdfa3b')
    problems.push(
      bad(
        `document.options.pdfSaveOptions.pdfConformanceLevel must be PdfA3B (or left out) for ${standard}: the e-invoice is a PDF/A-3b file`,
      ),
    );
  if (problems.length > before || !standard || !profile) return undefined;
  return { standard, profile, data: data as string, ...(o.pdf === true ? { pdf: true } : {}), ...(template ? { template } : {}) };
}

/** document.einvoice.template: an uploaded XML template, instead of the model at einvoice.data. */
function templateOf(value: unknown, data: unknown, problems: InnerError[]): EInvoiceOption['template'] {
  if (value === undefined || value === null) return undefined;
  const t = value as { urn?: unknown; loadMethod?: unknown };
  const before = problems.length;
  if (typeof t !== 'object' || typeof t.urn !== 'string' || t.urn.trim() === '')
    problems.push(bad('document.einvoice.template.urn must be the id of an XML template uploaded with POST /documents/template/upload'));
  const loadMethod = t.loadMethod ?? 'Storage';
  if (!EINVOICE_TEMPLATE_METHODS.includes(loadMethod as 'Storage'))
    problems.push(bad(`document.einvoice.template.loadMethod must be ${EINVOICE_TEMPLATE_METHODS.join(' or ')} (an uploaded .xml file)`));
  if (data !== undefined)
    problems.push(
      bad('document.einvoice.data is where the invoice model is: with document.einvoice.template, the XML template renders the whole data'),
    );
  return problems.length > before ? undefined : { urn: (t.urn as string).trim(), loadMethod: 'Storage' };
}

function bad(message: string): InnerError {
  return innerError('VALIDATION_ERROR', message);
}

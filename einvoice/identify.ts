// What docgen can tell of an e-invoice's XML without the standard's XSD and Schematron: whether its root element
// is the standard's (name and namespace) and its guideline id (BT-24) the profile's. Asked of every XML before
// delivery (activities/einvoice.ts checkedXml), whether docgen wrote it from the model or an XML template
// rendered it. The text must be well-formed XML already (the engine checks that).
import type { EInvoiceOption } from '../core/einvoice.ts';
import type { Problem } from './model.ts';
import { type CiiProfile, GUIDELINES, XRECHNUNG_GUIDELINE } from './profiles.ts';

const CII_NS = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100';
const UBL_NS: Record<string, string> = {
  Invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  CreditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
};

/** The guideline id (BT-24) the option asks for. */
export function guidelineOf(option: EInvoiceOption): string {
  return option.standard.startsWith('xrechnung') ? XRECHNUNG_GUIDELINE : GUIDELINES[option.profile as CiiProfile];
}

/** The root element and guideline problems of `xml` for `option` (errors: the XML is not this e-invoice). */
export function identityProblems(xml: string, option: EInvoiceOption): Problem[] {
  const ubl = option.standard === 'xrechnung-ubl';
  const expected = ubl ? 'UBL 2.1 Invoice or CreditNote' : 'CII rsm:CrossIndustryInvoice';
  // Comments and processing instructions are not the document: blanked before anything is looked for.
  const body = xml.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->/g, (m) => ' '.repeat(m.length));
  const root = rootOf(body);
  if (!root) return [problem('ROOT', '/', `no root element: ${option.standard} needs ${expected}`)];
  const [prefix, local] = root.name.includes(':') ? root.name.split(':', 2) : ['', root.name];
  const ns = root.namespaces[prefix ?? ''];
  const wanted = ubl ? UBL_NS[local ?? ''] : local === 'CrossIndustryInvoice' ? CII_NS : undefined;
  if (wanted === undefined || ns !== wanted)
    return [
      problem(
        'ROOT',
        `/${root.name}`,
        `the root element is ${root.name} in namespace ${ns ? JSON.stringify(ns) : 'none'}; ${option.standard} needs ${expected} (${ubl ? Object.values(UBL_NS).join(' or ') : CII_NS})`,
      ),
    ];
  const guideline = guidelineOf(option);
  const field = ubl
    ? `/${root.name}/cbc:CustomizationID`
    : `/${root.name}/rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID`;
  const found = ubl
    ? /<(?:[\w.-]+:)?CustomizationID\b[^>]*>([^<]*)</.exec(body)?.[1]
    : /<(?:[\w.-]+:)?GuidelineSpecifiedDocumentContextParameter\b[^>]*>\s*<(?:[\w.-]+:)?ID\b[^>]*>([^<]*)</.exec(body)?.[1];
  const id = found === undefined ? undefined : decode(found).trim();
  if (id !== guideline)
    return [
      problem(
        'BT-24',
        field,
        id === undefined
          ? `the XML has no guideline id (BT-24): ${option.standard} ${option.profile} needs ${guideline}`
          : `the guideline id (BT-24) is ${id}, but ${option.standard} ${option.profile} needs ${guideline}`,
      ),
    ];
  return [];
}

/** The first element's name and the namespaces its start tag declares ('' the default one). */
function rootOf(body: string): { name: string; namespaces: Record<string, string> } | undefined {
  const m = /<([^\s/>!?]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/?>/.exec(body);
  if (!m) return undefined;
  const namespaces: Record<string, string> = {};
  for (const a of (m[2] ?? '').matchAll(/\s+xmlns(?::([^\s=]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
    namespaces[a[1] ?? ''] = decode(a[2] ?? a[3] ?? '');
  return { name: m[1] ?? '', namespaces };
}

function decode(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e]!);
}

function problem(rule: string, field: string, message: string): Problem {
  return { rule, field, level: 'error', message };
}

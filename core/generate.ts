// The generate request (spec 4.8) as the workflow sees it, and the combination rules that are checked
// before any workflow starts (a 400 means nothing was queued and nothing written).
import { type InnerError, innerError } from './errors.ts';

export const TEMPLATE_FORMATS = ['docx', 'xlsx', 'pptx', 'gdoc', 'gsheet', 'gslide'] as const;
export const OFFICE_FORMATS = ['docx', 'xlsx', 'pptx'] as const;
export const DRIVEB_NATIVE_FORMATS = ['gdoc', 'gsheet', 'gslide'] as const;
export const OUTPUT_FORMATS = [...TEMPLATE_FORMATS, 'pdf', 'csv'] as const;
export const LOAD_METHODS = ['Storage', 'DriveA', 'DriveB'] as const;
export const DELIVERY_METHODS = ['Storage', 'DriveA', 'DriveB'] as const;

export interface Variable {
  name: string;
  value: unknown;
  type: string;
}

export interface GenerateRequest {
  template: {
    urn?: string;
    loadMethod?: string;
    url?: string;
    name?: string;
    fileFormat: string;
    options?: Record<string, unknown>;
    relatedItems?: { name: string; urn?: string; fileFormat?: string; loadMethod?: string; options?: unknown }[];
  };
  data: {
    loadMethod: string;
    urn: string;
    variables?: Variable[];
    query?: string;
    embedded?: string;
  };
  document: {
    timezone: string;
    locale: string;
    name: string;
    fileFormat: string;
    deliveryMethod: string;
    path: string;
    options?: Record<string, unknown>;
  };
  externalContext?: Record<string, unknown>;
}

/** What the generate workflow receives: references and settings, never document bytes. */
export interface GenerateInput {
  operationId: string;
  subscriptionId: string;
  userId: string;
  template: { urn: string; loadMethod: string; fileFormat: string; name?: string };
  data: { urn: string; loadMethod: string; variables?: Variable[]; embedded?: string };
  document: { name: string; fileFormat: string; deliveryMethod: string; path: string; locale: string; timezone: string };
}

export interface GeneratedDocument {
  deliveryMethod: string;
  name: string;
  fileFormat: string;
  urn: string;
}

export interface GenerateResult {
  document: GeneratedDocument;
  documentGuid: string;
  consumption: { dimension: string; value: number }[];
}

const isIn = (list: readonly string[], v: string | undefined): boolean => v !== undefined && list.includes(v);

/** Section 4.8 "Validated combinations" plus the template-locating rule. Returns every problem at once. */
export function checkGenerateRules(req: GenerateRequest): InnerError[] {
  const errors: InnerError[] = [];
  const t = req.template;
  const d = req.document;
  const hasUrnPair = Boolean(t.urn) || Boolean(t.loadMethod);
  if (!t.url && !(t.urn && t.loadMethod)) {
    errors.push(
      innerError(
        'TEMPLATE_NOT_FOUND',
        hasUrnPair
          ? 'template.urn and template.loadMethod must be given together'
          : 'template: give either template.urn with template.loadMethod, or template.url',
      ),
    );
  } else if (t.url && hasUrnPair) {
    errors.push(innerError('VALIDATION_ERROR', 'template: give either template.urn with template.loadMethod, or template.url, not both'));
  }
  if (!isIn(TEMPLATE_FORMATS, t.fileFormat)) {
    errors.push(innerError('VALIDATION_ERROR', `template.fileFormat must be one of ${TEMPLATE_FORMATS.join(', ')}`));
  }
  if (t.loadMethod !== undefined && !isIn(LOAD_METHODS, t.loadMethod)) {
    errors.push(innerError('VALIDATION_ERROR', `template.loadMethod must be one of ${LOAD_METHODS.join(', ')}`));
  }
  // Rule 1: native formats only from DriveB, office formats only from Storage or DriveA.
  if (t.loadMethod && isIn(TEMPLATE_FORMATS, t.fileFormat) && isIn(LOAD_METHODS, t.loadMethod)) {
    const native = isIn(DRIVEB_NATIVE_FORMATS, t.fileFormat);
    if (native !== (t.loadMethod === 'DriveB')) {
      errors.push(
        innerError(
          'VALIDATION_ERROR',
          native
            ? `template.fileFormat ${t.fileFormat} loads only from DriveB (template.loadMethod is ${t.loadMethod})`
            : `template.fileFormat ${t.fileFormat} loads only from Storage or DriveA (template.loadMethod is ${t.loadMethod})`,
        ),
      );
    }
  }
  if (!isIn(OUTPUT_FORMATS, d.fileFormat)) {
    errors.push(innerError('VALIDATION_ERROR', `document.fileFormat must be one of ${OUTPUT_FORMATS.join(', ')}`));
  } else if (isIn(TEMPLATE_FORMATS, t.fileFormat)) {
    // Rule 2: same format, except pdf from anything and csv only from xlsx.
    const ok =
      d.fileFormat === t.fileFormat || d.fileFormat === 'pdf' || (d.fileFormat === 'csv' && t.fileFormat === 'xlsx');
    if (!ok) {
      errors.push(
        innerError(
          'VALIDATION_ERROR',
          d.fileFormat === 'csv'
            ? `document.fileFormat csv can only be produced from an xlsx template (template.fileFormat is ${t.fileFormat})`
            : `document.fileFormat must equal template.fileFormat (${t.fileFormat}), or be pdf${t.fileFormat === 'xlsx' ? ' or csv' : ''}`,
        ),
      );
    }
  }
  if (!isIn(DELIVERY_METHODS, d.deliveryMethod)) {
    errors.push(innerError('VALIDATION_ERROR', `document.deliveryMethod must be one of ${DELIVERY_METHODS.join(', ')}`));
  } else if (isIn(OUTPUT_FORMATS, d.fileFormat)) {
    // Rule 3: native formats only to DriveB; office formats to Storage or DriveA; pdf and csv anywhere.
    if (isIn(DRIVEB_NATIVE_FORMATS, d.fileFormat) && d.deliveryMethod !== 'DriveB') {
      errors.push(innerError('VALIDATION_ERROR', `document.fileFormat ${d.fileFormat} can only be delivered to DriveB`));
    }
    if (isIn(OFFICE_FORMATS, d.fileFormat) && d.deliveryMethod === 'DriveB') {
      errors.push(innerError('VALIDATION_ERROR', `document.fileFormat ${d.fileFormat} can be delivered to Storage or DriveA, not DriveB`));
    }
  }
  if (d.deliveryMethod === 'Storage' && d.path !== 'root' && !d.path.startsWith('root/')) {
    errors.push(innerError('VALIDATION_ERROR', "document.path must be 'root' or start with 'root/' for Storage delivery"));
  }
  if (!isValidTimeZone(d.timezone)) {
    errors.push(innerError('VALIDATION_ERROR', `document.timezone ${JSON.stringify(d.timezone)} is not an IANA time zone`));
  }
  if (!isValidLocale(d.locale)) {
    errors.push(innerError('VALIDATION_ERROR', `document.locale ${JSON.stringify(d.locale)} is not a BCP 47 locale`));
  }
  if (d.name.trim() === '' || /[\\/\u0000-\u001f]/.test(d.name) || d.name.length > 255) {
    errors.push(innerError('VALIDATION_ERROR', 'document.name must be a file name without slashes or control characters (1-255 characters)'));
  }
  if (req.data.embedded !== undefined) {
    try {
      const parsed: unknown = JSON.parse(req.data.embedded);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    } catch {
      errors.push(innerError('VALIDATION_ERROR', 'data.embedded must be JSON text of an object'));
    }
  }
  return errors;
}

function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return tz.length > 0;
  } catch {
    return false;
  }
}

function isValidLocale(locale: string): boolean {
  try {
    return Intl.getCanonicalLocales(locale).length === 1;
  } catch {
    return false;
  }
}

/** The file name the delivered document gets: the requested name with the output format's extension. */
export function outputFileName(name: string, fileFormat: string): string {
  const ext = `.${fileFormat}`;
  return name.toLowerCase().endsWith(ext) ? name : `${name}${ext}`;
}

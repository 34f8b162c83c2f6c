// The generate request (spec 4.8) as the workflow sees it, and the combination rules that are checked
// before any workflow starts (a 400 means nothing was queued and nothing written).
import { parse as parseGraphql } from 'graphql';
import { type InnerError, innerError } from './errors.ts';
import { ALL_FORMATS, canConvert, FORMATS, isFormat, type LocationMethod, TEMPLATE_FORMATS } from './formats.ts';

export const OUTPUT_FORMATS = ALL_FORMATS;
export const LOAD_METHODS = ['Storage', 'DriveA', 'DriveB'] as const;
export const DELIVERY_METHODS = ['Storage', 'DriveA', 'DriveB'] as const;
/** data.loadMethod values: a file at a location, or a GraphQL query run at generation time. Whether a
 *  location is available (implemented, connected) is the location registry's answer (connectors/). */
export const DATA_LOAD_METHODS = ['Storage', 'GraphQL', 'DriveA', 'DriveB'] as const;

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

/** document.options.driveA / driveB (spec 4.8): who gets links or invitations to the delivered file. */
export interface SharingRequest {
  viewAnonymous?: boolean;
  editAnonymous?: boolean;
  viewUsers?: string[];
  editUsers?: string[];
  /** Extension: e-mail the invited users (the drive's own invitation mail); default false. */
  sendInvitation?: boolean;
}

/** Name clash policy of drive writes: rename (default: the drive picks "name 1.docx"), replace the
 *  existing file, or fail. Extension field `conflictBehavior` of document.options.driveA / driveB. */
export type ConflictBehavior = 'rename' | 'replace' | 'fail';
export const CONFLICT_BEHAVIORS: readonly ConflictBehavior[] = ['rename', 'replace', 'fail'];

/** What a drive delivery reads from its options object. */
export interface DriveDelivery {
  sharing?: SharingRequest;
  conflict?: ConflictBehavior;
}

/** A template pulled in by an include directive ({>name}), located like the main template. */
export interface RelatedTemplate {
  name: string;
  urn: string;
  loadMethod: string;
  fileFormat: string;
}

/** What the generate workflow receives: references and settings, never document bytes. */
export interface GenerateInput {
  operationId: string;
  subscriptionId: string;
  userId: string;
  /** `url` (template.url) replaces urn + loadMethod: its display form (no query, user-info or fragment),
   *  the URL itself sealed in `sealedUrl` (connectors/url); relatedItems feed the include directive. */
  template: { urn: string; loadMethod: string; fileFormat: string; name?: string; url?: string; sealedUrl?: string; relatedItems?: RelatedTemplate[] };
  /** For GraphQL: urn is the endpoint URL and query the GraphQL document (see graphqlRequestOf). */
  data: { urn: string; loadMethod: string; variables?: Variable[]; query?: string; embedded?: string };
  document: {
    name: string;
    fileFormat: string;
    deliveryMethod: string;
    path: string;
    locale: string;
    timezone: string;
    /** Parsed from document.options.pdfSaveOptions / csvSaveOptions (only the one matching the format). */
    saveOptions?: SaveOptions;
    /** Parsed from document.options.driveA / driveB, the one of the delivery's own drive. */
    sharing?: SharingRequest;
    conflict?: ConflictBehavior;
    /** document.options.driveBGenerate: merge the native template in place (DriveB), images too if asked. */
    nativeMerge?: { images: boolean };
  };
  /** Location method -> the id of the subscription's connection it uses (resolved by the API; the activity
   *  opens it, so no secret is ever in the workflow's input or history). */
  connections?: Record<string, string>;
}

export interface SaveOptions {
  pdf?: { conformance?: string; version?: string };
  csv?: { sheet?: number | string; separator?: string; encoding?: string };
}

export const LINK_FIELDS = ['viewAnonymousLink', 'editAnonymousLink', 'viewUserLink', 'editUserLink', 'viewOrganizationLink', 'editOrganizationLink'] as const;
export type LinkField = (typeof LINK_FIELDS)[number];

export interface GeneratedDocument {
  deliveryMethod: string;
  name: string;
  fileFormat: string;
  urn: string;
  /** Drive deliveries: where the file opens, and the sharing links that were made. */
  uri?: string;
  viewAnonymousLink?: string;
  editAnonymousLink?: string;
  viewUserLink?: string;
  editUserLink?: string;
  viewOrganizationLink?: string;
  editOrganizationLink?: string;
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
  if (t.loadMethod && isIn(TEMPLATE_FORMATS, t.fileFormat) && isIn(LOAD_METHODS, t.loadMethod) && isFormat(t.fileFormat)) {
    const from: readonly LocationMethod[] = FORMATS[t.fileFormat].templateFrom;
    if (!from.includes(t.loadMethod as LocationMethod)) {
      errors.push(
        innerError('VALIDATION_ERROR', `template.fileFormat ${t.fileFormat} loads only from ${from.join(' or ')} (template.loadMethod is ${t.loadMethod})`),
      );
    }
  }
  if (!isIn(OUTPUT_FORMATS, d.fileFormat)) {
    errors.push(innerError('VALIDATION_ERROR', `document.fileFormat must be one of ${OUTPUT_FORMATS.join(', ')}`));
  } else if (isIn(TEMPLATE_FORMATS, t.fileFormat)) {
    // Rule 2: same format, except pdf from anything and csv only from xlsx.
    if (d.fileFormat !== t.fileFormat && !canConvert(t.fileFormat, d.fileFormat)) {
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
    const to: readonly LocationMethod[] = FORMATS[d.fileFormat as keyof typeof FORMATS].deliverTo;
    if (!to.includes(d.deliveryMethod as LocationMethod)) {
      const targets = to.filter((m) => isIn(DELIVERY_METHODS, m));
      errors.push(innerError('VALIDATION_ERROR', `document.fileFormat ${d.fileFormat} can be delivered to ${targets.join(' or ')}, not ${d.deliveryMethod}`));
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
  errors.push(...parseSaveOptions(d).errors);
  errors.push(...nativeMergeOf(req).errors);
  if (!isIn(DATA_LOAD_METHODS, req.data.loadMethod)) {
    errors.push(innerError('VALIDATION_ERROR', `data.loadMethod must be one of ${DATA_LOAD_METHODS.join(', ')}`));
  } else if (req.data.loadMethod === 'GraphQL') {
    errors.push(...graphqlRequestOf(req.data).errors.map((m) => innerError('VALIDATION_ERROR', m)));
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

/** document.options.driveA / driveB (prefix names the object in messages): sharing flags, e-mail lists
 *  (arrays, or comma-separated text as the records spell them), and the extension fields conflictBehavior
 *  and sendInvitation. Every problem at once. */
export function parseDriveOptions(raw: unknown, prefix: string): { delivery: DriveDelivery; errors: InnerError[] } {
  const errors: InnerError[] = [];
  const delivery: DriveDelivery = {};
  if (raw === undefined || raw === null) return { delivery, errors };
  if (typeof raw !== 'object' || Array.isArray(raw)) return { delivery, errors: [innerError('VALIDATION_ERROR', `${prefix} must be an object`)] };
  const o = raw as Record<string, unknown>;
  const sharing: SharingRequest = {};
  for (const flag of ['viewAnonymous', 'editAnonymous', 'sendInvitation'] as const) {
    const v = o[flag];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') errors.push(innerError('VALIDATION_ERROR', `${prefix}.${flag} must be true or false`));
    else if (v) sharing[flag] = true;
  }
  for (const list of ['viewUsers', 'editUsers'] as const) {
    const v = o[list];
    if (v === undefined || v === null || v === '') continue;
    const items = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : undefined;
    if (!items || items.some((e) => typeof e !== 'string')) {
      errors.push(innerError('VALIDATION_ERROR', `${prefix}.${list} must be an array of e-mail addresses`));
      continue;
    }
    const emails = (items as string[]).map((e) => e.trim()).filter(Boolean);
    const bad = emails.filter((e) => !/^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/.test(e));
    if (bad.length > 0) errors.push(innerError('VALIDATION_ERROR', `${prefix}.${list}: ${bad.map((b) => JSON.stringify(b.slice(0, 80))).join(', ')} is not an e-mail address`));
    else if (emails.length > 100) errors.push(innerError('VALIDATION_ERROR', `${prefix}.${list}: at most 100 addresses`));
    else if (emails.length > 0) sharing[list] = [...new Set(emails.map((e) => e.toLowerCase()))];
  }
  if (Object.keys(sharing).some((k) => k !== 'sendInvitation')) delivery.sharing = sharing;
  const c = o.conflictBehavior;
  if (c !== undefined && c !== null && c !== '') {
    if (typeof c !== 'string' || !(CONFLICT_BEHAVIORS as readonly string[]).includes(c)) {
      errors.push(innerError('VALIDATION_ERROR', `${prefix}.conflictBehavior must be one of ${CONFLICT_BEHAVIORS.join(', ')}`));
    } else delivery.conflict = c as ConflictBehavior;
  }
  return { delivery, errors };
}

/** The options object of a delivery's own drive (spec 4.8: the other drive's is ignored). */
export function driveOptionsKey(deliveryMethod: string): 'driveA' | 'driveB' | undefined {
  return deliveryMethod === 'DriveA' ? 'driveA' : deliveryMethod === 'DriveB' ? 'driveB' : undefined;
}

/** Save options are JSON text (spec 4.8) or, leniently, an object; only the property matching the output
 *  format is read. pdfSaveOptions: {pdfConformanceLevel: PdfA1B|PdfA2B|PdfA3B|PdfUa1|Pdf15|Pdf16|Pdf17, pdfVersion: 1.5|1.6|1.7};
 *  csvSaveOptions: {sheet: index or name, separator: one character, encoding: e.g. utf-8}. */
export function parseSaveOptions(document: GenerateRequest['document']): { options: SaveOptions; errors: InnerError[] } {
  const errors: InnerError[] = [];
  const options: SaveOptions = {};
  const read = (name: string): Record<string, unknown> | undefined => {
    const raw = document.options?.[name];
    if (raw === undefined || raw === null || raw === '') return undefined;
    let value: unknown = raw;
    if (typeof raw === 'string') {
      try {
        value = JSON.parse(raw);
      } catch {
        errors.push(innerError('VALIDATION_ERROR', `document.options.${name} must be JSON text of an object`));
        return undefined;
      }
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push(innerError('VALIDATION_ERROR', `document.options.${name} must be an object (or JSON text of one)`));
      return undefined;
    }
    return value as Record<string, unknown>;
  };
  if (document.fileFormat === 'pdf') {
    const o = read('pdfSaveOptions');
    if (o) {
      const conformance = o.pdfConformanceLevel ?? o.conformance;
      const version = o.pdfVersion ?? o.version;
      if (conformance !== undefined && (typeof conformance !== 'string' || !/^(PdfA[123]B|PdfUa1|Pdf1[567])$/i.test(conformance))) {
        errors.push(innerError('VALIDATION_ERROR', 'document.options.pdfSaveOptions.pdfConformanceLevel must be one of PdfA1B, PdfA2B, PdfA3B, PdfUa1, Pdf15, Pdf16, Pdf17'));
      }
      if (version !== undefined && !['1.5', '1.6', '1.7'].includes(String(version))) {
        errors.push(innerError('VALIDATION_ERROR', 'document.options.pdfSaveOptions.pdfVersion must be 1.5, 1.6 or 1.7'));
      }
      options.pdf = {
        ...(typeof conformance === 'string' ? { conformance } : {}),
        ...(version !== undefined ? { version: String(version) } : {}),
      };
    }
  }
  if (document.fileFormat === 'csv') {
    const o = read('csvSaveOptions');
    if (o) {
      if (o.sheet !== undefined && typeof o.sheet !== 'string' && !(Number.isInteger(o.sheet) && (o.sheet as number) >= 0)) {
        errors.push(innerError('VALIDATION_ERROR', 'document.options.csvSaveOptions.sheet must be a sheet name or a 0-based index'));
      }
      if (o.separator !== undefined && (typeof o.separator !== 'string' || [...o.separator].length !== 1)) {
        errors.push(innerError('VALIDATION_ERROR', 'document.options.csvSaveOptions.separator must be one character'));
      }
      if (o.encoding !== undefined && typeof o.encoding !== 'string') {
        errors.push(innerError('VALIDATION_ERROR', 'document.options.csvSaveOptions.encoding must be a string such as utf-8'));
      }
      options.csv = {
        ...(o.sheet !== undefined ? { sheet: o.sheet as number | string } : {}),
        ...(typeof o.separator === 'string' ? { separator: o.separator } : {}),
        ...(typeof o.encoding === 'string' ? { encoding: o.encoding } : {}),
      };
    }
  }
  return { options, errors };
}

/** document.options.driveBGenerate {nativeMergeEnabled, nativeImageMergeEnabled} (an object or JSON text;
 *  booleans or "true"/"false"). Native merge copies a gdoc/gsheet/gslide template from DriveB and merges
 *  it in place, so it produces that same native file in DriveB: anything else is refused here, before
 *  anything is queued. */
export function nativeMergeOf(req: Pick<GenerateRequest, 'template' | 'document'>): { merge?: { images: boolean }; errors: InnerError[] } {
  const errors: InnerError[] = [];
  const field = 'document.options.driveBGenerate';
  let raw: unknown = req.document.options?.driveBGenerate;
  if (raw === undefined || raw === null || raw === '') return { errors };
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      return { errors: [innerError('VALIDATION_ERROR', `${field} must be JSON text of an object`)] };
    }
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { errors: [innerError('VALIDATION_ERROR', `${field} must be an object (or JSON text of one)`)] };
  const o = raw as Record<string, unknown>;
  const flag = (k: string): boolean => {
    const v = o[k];
    if (v === undefined || v === null || v === false || v === 'false' || v === '') return false;
    if (v === true || v === 'true') return true;
    errors.push(innerError('VALIDATION_ERROR', `${field}.${k} must be true or false`));
    return false;
  };
  const enabled = flag('nativeMergeEnabled');
  const images = flag('nativeImageMergeEnabled');
  if (images && !enabled) errors.push(innerError('VALIDATION_ERROR', `${field}.nativeImageMergeEnabled needs ${field}.nativeMergeEnabled`));
  if (!enabled) return { errors };
  const t = req.template;
  if (!isIn(['gdoc', 'gsheet', 'gslide'], t.fileFormat) || t.loadMethod !== 'DriveB') {
    errors.push(innerError('VALIDATION_ERROR', `${field}.nativeMergeEnabled merges a gdoc, gsheet or gslide template loaded from DriveB in place (template is ${t.fileFormat} from ${t.loadMethod ?? t.url ?? 'nowhere'})`));
  } else if (req.document.fileFormat !== t.fileFormat) {
    errors.push(
      innerError(
        'VALIDATION_ERROR',
        `${field}.nativeMergeEnabled produces the template's own format (${t.fileFormat}), not ${req.document.fileFormat}: for ${req.document.fileFormat}, leave native merge off (the default route exports, merges and converts)`,
      ),
    );
  }
  return errors.length > 0 ? { errors } : { merge: { images }, errors };
}

/** Zones that passed, remembered because making a DateTimeFormat to check one costs 0.2-0.4 ms of every
 *  generate request. Bounded: Intl also accepts any mix of case ("EUROPE/paris"), so callers could invent
 *  valid names without end; past the bound a zone is checked every time. Failures are never remembered. */
const validTimeZones = new Set<string>();

function isValidTimeZone(tz: string): boolean {
  if (validTimeZones.has(tz)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    return false;
  }
  if (tz.length === 0) return false;
  if (validTimeZones.size < 1000) validTimeZones.add(tz);
  return true;
}

function isValidLocale(locale: string): boolean {
  try {
    return Intl.getCanonicalLocales(locale).length === 1;
  } catch {
    return false;
  }
}

/** Headers a `header` variable may not set: the transport's own. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'connection', 'transfer-encoding', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);

export interface GraphqlRequest {
  endpoint: string;
  query: string;
  variables: Record<string, unknown>;
  headers: Record<string, string>;
  /** Problems with the request (empty when it can run). */
  errors: string[];
}

/**
 * The GraphQL call a generate request describes (data.loadMethod GraphQL):
 * - `data.urn`: the endpoint, an absolute http or https URL without credentials in it;
 * - `data.query`: the GraphQL document, or JSON text of `{"query": "...", "variables": {...}}`;
 * - `data.variables` of type `graphql`: the query's variables, name -> value (they win over the JSON
 *   text's variables);
 * - `data.variables` of type `header`: request headers for the endpoint, e.g. name `Authorization`, value
 *   `Bearer <token>`. They are never visible to the template, and the API seals their values before the
 *   workflow starts (security/sealed.ts), so the history shows only `sealed:...`.
 */
export function graphqlRequestOf(data: { urn: string; query?: string; variables?: Variable[] | undefined }): GraphqlRequest {
  const errors: string[] = [];
  const variables: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  let endpoint = data.urn;
  try {
    const u = new URL(data.urn);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') errors.push(`data.urn must be the GraphQL endpoint's http or https URL (got ${u.protocol})`);
    else if (u.username || u.password) errors.push('data.urn must not carry credentials; pass them as a data.variables entry of type header');
    endpoint = u.toString();
  } catch {
    errors.push('data.urn must be the GraphQL endpoint as an absolute http or https URL');
  }
  let query = typeof data.query === 'string' ? data.query.trim() : '';
  if (query.startsWith('{')) {
    // JSON text ({"query": ..., "variables": ...}) or a GraphQL shorthand query ({ field }).
    let parsed: unknown;
    try {
      parsed = JSON.parse(query);
    } catch {
      parsed = undefined;
    }
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const o = parsed as Record<string, unknown>;
      query = typeof o.query === 'string' ? o.query.trim() : '';
      if (o.variables !== undefined && o.variables !== null) {
        if (typeof o.variables === 'object' && !Array.isArray(o.variables)) Object.assign(variables, o.variables);
        else errors.push('data.query: "variables" in the JSON text must be an object');
      }
    }
  }
  if (query === '') {
    errors.push('data.query is required for data.loadMethod GraphQL: the GraphQL query text (or JSON text with a "query" field)');
  } else {
    try {
      parseGraphql(query);
    } catch (err) {
      errors.push(`data.query is not a valid GraphQL document: ${(err as Error).message}`);
    }
  }
  for (const v of data.variables ?? []) {
    if (v.type === 'graphql') {
      if (!/^[_A-Za-z][_0-9A-Za-z]*$/.test(v.name)) errors.push(`data.variables: ${JSON.stringify(v.name)} is not a GraphQL variable name`);
      else variables[v.name] = v.value;
    } else if (v.type === 'header') {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v.name) || RESERVED_HEADERS.has(v.name.toLowerCase())) {
        errors.push(`data.variables: ${JSON.stringify(v.name)} cannot be sent as a header`);
      } else if (typeof v.value !== 'string' || /[\r\n\0]/.test(v.value)) {
        errors.push(`data.variables: header ${v.name} needs a single-line string value`);
      } else {
        headers[v.name] = v.value;
      }
    }
  }
  return { endpoint, query, variables, headers, errors };
}

/** Variables the template sees: everything except `header` entries (credentials for the data source). */
export function templateVariables(variables: Variable[] | undefined): Variable[] | undefined {
  return variables?.filter((v) => v.type !== 'header');
}

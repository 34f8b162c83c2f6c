// The generate request (spec 4.8) as the API receives it and as the workflow sees it, and the rules checked
// before any workflow starts (a 400 means nothing was queued, nothing written and nothing consumed).
import { parse as parseGraphql } from 'graphql';
import Type, { type Static } from 'typebox';
import { EInvoiceSchema, type EInvoiceOption, parseEInvoice } from './einvoice.ts';
import { type InnerError, innerError } from './errors.ts';
import { ALL_FORMATS, canConvert, isFormat, isOfficeFormat, TEMPLATE_FORMATS } from './formats.ts';
import {
  dataLoadMethods,
  entryOf,
  formatWording,
  GRAPHQL,
  holds,
  type LocationCatalog,
  type LocationNeed,
  methodsFor,
  orList,
  pathWording,
  urnWording,
} from './locations.ts';
import { jsonObject } from './save-options.ts';
import type { RunContext } from './run.ts';
import { parseTarget, type Target } from './target.ts';

export interface Variable {
  name: string;
  value: unknown;
  type: string;
}

/** The location methods each field of a generate may name (from the location registry). */
export interface GenerateMethods {
  template: readonly string[];
  data: readonly string[];
  delivery: readonly string[];
}

export function generateMethods(catalog: LocationCatalog): GenerateMethods {
  return {
    template: methodsFor(catalog, 'generate', 'readTemplate'),
    data: dataLoadMethods(catalog),
    delivery: methodsFor(catalog, 'generate', 'write'),
  };
}

const JsonObject = Type.Object({}, { additionalProperties: true });

/** A string field that must be one of `values`: an enum of the schema (validation, the OpenAPI document and
 *  the unions of generated clients), typed as a string for the rules below, which name the field. */
export const oneOf = (values: readonly string[], description?: string) =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

/** The body of generate and async generate (spec 4.8) but externalContext (the API's, as every operation's),
 *  its descriptions naming the registered locations. */
export function generateRequestSchema(catalog: LocationCatalog) {
  const methods = generateMethods(catalog);
  const what = (capability: 'readTemplate' | 'readData') =>
    catalog
      .filter((e) => e.wording && e.requests.includes('generate') && e.can.includes(capability))
      .map((e) => `${e.method} (${e.wording!.what})`);
  return Type.Object({
    template: Type.Object({
      urn: Type.Optional(Type.String({ description: `With loadMethod: ${urnWording(catalog, 'generate', 'readTemplate')}` })),
      loadMethod: Type.Optional(oneOf(methods.template, `Where the template is: ${orList(what('readTemplate'))}`)),
      url: Type.Optional(Type.String({ description: 'Alternative to urn + loadMethod' })),
      name: Type.Optional(Type.String()),
      fileFormat: oneOf(
        TEMPLATE_FORMATS,
        `Where each format loads from (spec 4.8 rule 1): ${formatWording(catalog, 'generate', 'readTemplate')}`,
      ),
      options: Type.Optional(JsonObject),
      relatedItems: Type.Optional(
        Type.Array(
          Type.Object({
            name: Type.String(),
            urn: Type.Optional(Type.String()),
            fileFormat: Type.Optional(Type.String()),
            loadMethod: Type.Optional(Type.String()),
            options: Type.Optional(Type.Unknown()),
          }),
        ),
      ),
    }),
    data: Type.Object({
      loadMethod: oneOf(
        methods.data,
        `A JSON file at ${orList(what('readData'))} (DriveB also reads a Google Sheet as rows), or the result of a ${GRAPHQL} query`,
      ),
      urn: Type.String({ description: `The GraphQL endpoint, or the data file: ${urnWording(catalog, 'generate', 'readData')}` }),
      variables: Type.Optional(Type.Array(Type.Object({ name: Type.String(), value: Type.Unknown(), type: Type.String() }))),
      query: Type.Optional(Type.String()),
      embedded: Type.Optional(Type.String({ description: 'JSON text of an object written to the output file properties' })),
    }),
    document: Type.Object({
      timezone: Type.String({ description: 'IANA time zone, e.g. Europe/Paris' }),
      locale: Type.String({ description: 'BCP 47 locale, e.g. en-US' }),
      name: Type.String({ minLength: 1 }),
      fileFormat: oneOf(
        ALL_FORMATS,
        "The template's own format, or pdf (from any template) or csv (from xlsx) (spec 4.8 rule 2); xml only for an XRechnung e-invoice (document.einvoice)",
      ),
      deliveryMethod: oneOf(
        methods.delivery,
        `Where the document goes; where each format may go (spec 4.8 rule 3): ${formatWording(catalog, 'generate', 'write')}`,
      ),
      path: Type.String({ description: pathWording(catalog, 'generate') }),
      einvoice: Type.Optional(EInvoiceSchema),
      options: Type.Optional(
        Type.Object(
          {
            accessible: Type.Optional(
              Type.Boolean({
                description:
                  "Extension, default false; pdf output from a docx or pptx template only. true: a tagged pdf conforming to PDF/UA-1 (ISO 14289-1): structure tree from the template's headings, lists, tables and pictures, the pictures' alternative text (an image tag's value {src or data, alt} or the picture's own description in the template), the title from the template's title property (tags in it are filled from the data) or else document.name, the language from the template's default language or else document.locale. With pdfSaveOptions.pdfConformanceLevel PdfA2B or PdfA3B the file is PDF/A-2a or PDF/A-3a. result.data.warnings lists what a screen reader would miss (IMAGE_WITHOUT_ALT_TEXT, TABLE_WITHOUT_HEADER_ROW); with strict they fail the generate (400 TEMPLATE_ERROR, an inner error each). See docs/accessibility.md.",
              }),
            ),
            strict: Type.Optional(
              Type.Boolean({
                description:
                  'Extension, default false. true: a tag whose data is missing fails the generate with 400 TEMPLATE_ERROR, one inner error per tag naming it and where it is, and nothing is delivered. false: such a tag renders empty and the 201 lists it in result.data.warnings. Not with driveBGenerate.nativeMergeEnabled.',
              }),
            ),
          },
          {
            additionalProperties: true,
            description:
              'Save options (pdfSaveOptions, csvSaveOptions...), the options of the delivery location (driveA, driveB, driveBGenerate), accessible and strict',
          },
        ),
      ),
    }),
  });
}

/** A generate request as its schema admits it. */
export type GenerateRequest = Static<ReturnType<typeof generateRequestSchema>>;

/** A template pulled in by an include directive ({>name}), located like the main template. */
export interface RelatedTemplate {
  name: string;
  urn: string;
  loadMethod: string;
  fileFormat: string;
}

/** What the generate workflow receives: references and settings, never document bytes. */
export interface GenerateInput {
  run: RunContext;
  /** `url` (template.url) replaces urn + loadMethod: its display form (no query, user-info or fragment),
   *  the URL itself sealed in `sealedUrl` (connectors/url); relatedItems feed the include directive. */
  template: {
    urn: string;
    loadMethod: string;
    fileFormat: string;
    name?: string;
    url?: string;
    sealedUrl?: string;
    relatedItems?: RelatedTemplate[];
  };
  /** For GraphQL: urn is the endpoint URL and query the GraphQL document (see graphqlRequestOf). */
  data: { urn: string; loadMethod: string; variables?: Variable[]; query?: string; embedded?: string };
  /** The target (core/target.ts), and how the template renders: its locale and time zone. */
  document: Target & {
    locale: string;
    timezone: string;
    /** document.options.driveBGenerate: merge the native template in place (DriveB), images too if asked. */
    nativeMerge?: { images: boolean };
    /** document.options.strict: a tag whose data is missing fails the generate instead of rendering empty. */
    strict?: true;
    /** document.einvoice: an EN 16931 e-invoice made from the invoice in the data (docs/einvoice.md). */
    einvoice?: EInvoiceOption;
  };
  /** The uploads the request names (template, data, relatedItems at a location whose reads are uploads):
   *  the run consumes them, whether it succeeds or fails (spec 3). */
  uploads: string[];
}

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

/** Where a tag is in its template, as the engine and `docgen inspect` locate it: the part and, in Word and
 *  PowerPoint, its 1-based paragraph; in a workbook its sheet and cell; the offset in the part's visible text. */
export interface TemplateLocation {
  part: string;
  paragraph?: number;
  sheet?: string;
  cell?: string;
  offset?: number;
  /** An e-invoice's XML template (document.einvoice.template): 1-based line and column. */
  line?: number;
  column?: number;
}

/** A tag that rendered empty because the data has no value for it, or whose image was left out because
 *  its bytes are damaged; with document.options.accessible, a picture without alternative text or a table
 *  without a header row (located by part only; `tag` empty) (extension: result.data.warnings). */
export interface GenerateWarning {
  /** EINVOICE_RULE: a warning-level rule of the e-invoice's standard (tag: the rule, location.part: the field). */
  code: 'MISSING_VALUE' | 'IMAGE_INVALID' | 'IMAGE_WITHOUT_ALT_TEXT' | 'TABLE_WITHOUT_HEADER_ROW' | 'EINVOICE_RULE';
  /** For people: which tag, and where. */
  message: string;
  /** The tag as written between its delimiters. */
  tag: string;
  location: TemplateLocation;
}

/** The most warnings a result lists (the rest are counted in `warningsOmitted`): they travel in the
 *  workflow's history and the response. */
export const MAX_GENERATE_WARNINGS = 100;

/** What a merge reports besides its file: its warnings, when there are any. */
export interface MergeWarnings {
  warnings?: GenerateWarning[];
  /** How many more there were than the `warnings` listed. */
  warningsOmitted?: number;
}

export interface GenerateResult extends MergeWarnings {
  document: GeneratedDocument;
  documentGuid: string;
  consumption: { dimension: string; value: number }[];
}

/** A request checked by parseGenerateRequest: the workflow input less its run (who asks, the connections),
 *  `header` variables not yet sealed; what it asks of the locations; or every problem with it. */
export interface ParsedGenerate {
  input: Omit<GenerateInput, 'run'>;
  needs: LocationNeed[];
  problems: InnerError[];
}

/** Every rule of spec 4.8 for generate (template location, the three combination rules, the target, the
 *  data source, the included templates), each field parsed once. Returns every problem at once. */
export function parseGenerateRequest(req: GenerateRequest, catalog: LocationCatalog): ParsedGenerate {
  const problems: InnerError[] = [];
  const bad = (message: string) => problems.push(innerError('VALIDATION_ERROR', message));
  const t = req.template;
  const d = req.document;
  const hasUrnPair = Boolean(t.urn) || Boolean(t.loadMethod);
  if (!t.url && !(t.urn && t.loadMethod)) {
    problems.push(
      innerError(
        'TEMPLATE_NOT_FOUND',
        hasUrnPair
          ? 'template.urn and template.loadMethod must be given together'
          : 'template: give either template.urn with template.loadMethod, or template.url',
      ),
    );
  } else if (t.url && hasUrnPair) {
    bad('template: give either template.urn with template.loadMethod, or template.url, not both');
  }
  const templateFormat = (TEMPLATE_FORMATS as readonly string[]).includes(t.fileFormat);
  if (!templateFormat) bad(`template.fileFormat must be one of ${TEMPLATE_FORMATS.join(', ')}`);
  const templateMethods = methodsFor(catalog, 'generate', 'readTemplate');
  if (t.loadMethod !== undefined && !templateMethods.includes(t.loadMethod))
    bad(`template.loadMethod must be one of ${templateMethods.join(', ')}`);
  // Rule 1: a template format loads only from the locations that hold it as a template.
  const from = entryOf(catalog, t.loadMethod);
  if (t.loadMethod && templateFormat && from && templateMethods.includes(t.loadMethod) && !holds(from, 'readTemplate', t.fileFormat)) {
    bad(
      `template.fileFormat ${t.fileFormat} loads only from ${methodsFor(catalog, 'generate', 'readTemplate', t.fileFormat).join(' or ')} (template.loadMethod is ${t.loadMethod})`,
    );
  }
  const { target, needs: targetNeeds, problems: targetProblems } = parseTarget(d, { field: 'document', request: 'generate' }, catalog);
  problems.push(...targetProblems);
  // Rule 2: the template's own format, or one the converter makes from it (pdf from anything, csv from xlsx).
  const einvoice = parseEInvoice(
    d.einvoice,
    { fileFormat: d.fileFormat, ...(target.saveOptions ? { saveOptions: target.saveOptions } : {}) },
    problems,
  );
  if (
    isFormat(d.fileFormat) &&
    templateFormat &&
    d.fileFormat !== t.fileFormat &&
    !canConvert(t.fileFormat, d.fileFormat) &&
    !(d.fileFormat === 'xml' && d.einvoice !== undefined)
  ) {
    bad(
      d.fileFormat === 'csv'
        ? `document.fileFormat csv can only be produced from an xlsx template (template.fileFormat is ${t.fileFormat})`
        : `document.fileFormat must equal template.fileFormat (${t.fileFormat}), or be pdf${t.fileFormat === 'xlsx' ? ' or csv' : ''}`,
    );
  }
  // LibreOffice 7.4 exports spreadsheets untagged: no PDF/UA from a workbook (docs/accessibility.md).
  if (target.saveOptions?.pdf?.accessible && (t.fileFormat === 'xlsx' || t.fileFormat === 'gsheet'))
    bad(
      `document.options.accessible needs a docx or pptx template (template.fileFormat is ${t.fileFormat}): LibreOffice exports spreadsheets without the tags PDF/UA requires`,
    );
  if (!isValidTimeZone(d.timezone)) bad(`document.timezone ${JSON.stringify(d.timezone)} is not an IANA time zone`);
  if (!isValidLocale(d.locale)) bad(`document.locale ${JSON.stringify(d.locale)} is not a BCP 47 locale`);
  const native = nativeMergeOf(req);
  problems.push(...native.errors);
  const strict = strictOf(req, native.merge !== undefined, problems);
  if (einvoice && native.merge)
    bad("document.einvoice needs docgen's own merge: leave document.options.driveBGenerate.nativeMergeEnabled off");
  const dataMethods = dataLoadMethods(catalog);
  if (!dataMethods.includes(req.data.loadMethod)) bad(`data.loadMethod must be one of ${dataMethods.join(', ')}`);
  else if (req.data.loadMethod === GRAPHQL)
    problems.push(...graphqlRequestOf(req.data).errors.map((m) => innerError('VALIDATION_ERROR', m)));
  if (req.data.embedded !== undefined && !isJsonObjectText(req.data.embedded)) bad('data.embedded must be JSON text of an object');
  const related = relatedTemplates(req, problems);

  const needs: LocationNeed[] = [];
  if (t.url) needs.push({ method: 'url', capability: 'readTemplate', field: 'template.url' });
  else
    needs.push({
      method: t.loadMethod ?? '',
      capability: 'readTemplate',
      field: 'template.loadMethod',
      fileFormat: t.fileFormat,
      ...(t.urn ? { urn: t.urn } : {}),
    });
  for (const [i, item] of related.entries()) {
    // Its format is checked above (an included template is docx, xlsx or pptx wherever the main one is).
    if (item.loadMethod)
      needs.push({ method: item.loadMethod, capability: 'readTemplate', field: `template.relatedItems[${i}].loadMethod` });
  }
  if (req.data.loadMethod !== GRAPHQL) needs.push({ method: req.data.loadMethod, capability: 'readData', field: 'data.loadMethod' });
  // document.einvoice.template: an uploaded XML template, read (and consumed) like the template.
  if (einvoice?.template)
    needs.push({ method: einvoice.template.loadMethod, capability: 'readTemplate', field: 'document.einvoice.template.loadMethod' });
  needs.push(...targetNeeds);
  return {
    input: {
      template: {
        urn: t.urn ?? '',
        loadMethod: t.loadMethod ?? '',
        fileFormat: t.fileFormat,
        ...(t.name ? { name: t.name } : {}),
        ...(t.url ? { url: t.url } : {}),
        ...(related.length > 0 ? { relatedItems: related } : {}),
      },
      data: {
        urn: req.data.urn,
        loadMethod: req.data.loadMethod,
        ...(req.data.variables ? { variables: req.data.variables } : {}),
        ...(req.data.query ? { query: req.data.query } : {}),
        ...(req.data.embedded ? { embedded: req.data.embedded } : {}),
      },
      document: {
        ...target,
        locale: d.locale,
        timezone: d.timezone,
        ...(native.merge ? { nativeMerge: native.merge } : {}),
        ...(strict ? { strict } : {}),
        ...(einvoice ? { einvoice } : {}),
      },
      uploads: uploadsOf(catalog, [
        [t.loadMethod, t.urn],
        [req.data.loadMethod, req.data.urn],
        ...related.map((r): [string, string] => [r.loadMethod, r.urn]),
        ...(einvoice?.template ? [[einvoice.template.loadMethod, einvoice.template.urn] as [string, string]] : []),
      ]),
    },
    needs,
    problems,
  };
}

/** The urns read at locations whose reads are uploads (Storage), once each. */
function uploadsOf(catalog: LocationCatalog, reads: [string | undefined, string | undefined][]): string[] {
  return [...new Set(reads.filter(([method, urn]) => urn && entryOf(catalog, method)?.uploads).map(([, urn]) => urn!))];
}

/** template.relatedItems as the workflow reads them: each a name, a urn and a location (default: the main
 *  template's), in a format the include directive can use. Problems are added to `problems`. */
function relatedTemplates(req: GenerateRequest, problems: InnerError[]): RelatedTemplate[] {
  const out: RelatedTemplate[] = [];
  const names = new Set<string>();
  for (const [i, item] of (req.template.relatedItems ?? []).entries()) {
    const field = `template.relatedItems[${i}]`;
    const name = item.name.trim();
    if (name === '') problems.push(innerError('VALIDATION_ERROR', `${field}.name is required (the name the include directive uses)`));
    else if (names.has(name)) problems.push(innerError('VALIDATION_ERROR', `${field}.name ${JSON.stringify(name)} is given twice`));
    names.add(name);
    if (!item.urn) problems.push(innerError('VALIDATION_ERROR', `${field}.urn is required`));
    const loadMethod = item.loadMethod ?? req.template.loadMethod ?? '';
    if (!item.loadMethod && !req.template.loadMethod) problems.push(innerError('VALIDATION_ERROR', `${field}.loadMethod is required`));
    const fileFormat = item.fileFormat ?? req.template.fileFormat;
    if (!isOfficeFormat(fileFormat)) problems.push(innerError('VALIDATION_ERROR', `${field}.fileFormat must be docx, xlsx or pptx`));
    out.push({ name, urn: item.urn ?? '', loadMethod, fileFormat });
  }
  return out;
}

/** JSON text of an object (data.embedded: the output's custom properties). */
export function isJsonObjectText(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** document.options.driveBGenerate {nativeMergeEnabled, nativeImageMergeEnabled} (an object or JSON text;
 *  booleans or "true"/"false"). Native merge copies a gdoc/gsheet/gslide template from DriveB and merges
 *  it in place, so it produces that same native file in DriveB: anything else is refused here, before
 *  anything is queued. */
export function nativeMergeOf(req: Pick<GenerateRequest, 'template' | 'document'>): { merge?: { images: boolean }; errors: InnerError[] } {
  const errors: InnerError[] = [];
  const field = 'document.options.driveBGenerate';
  const o = jsonObject((req.document.options as Record<string, unknown> | undefined)?.driveBGenerate, field, errors);
  if (!o) return { errors };
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
  if (!['gdoc', 'gsheet', 'gslide'].includes(t.fileFormat) || t.loadMethod !== 'DriveB') {
    errors.push(
      innerError(
        'VALIDATION_ERROR',
        `${field}.nativeMergeEnabled merges a gdoc, gsheet or gslide template loaded from DriveB in place (template is ${t.fileFormat} from ${t.loadMethod ?? t.url ?? 'nowhere'})`,
      ),
    );
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

/** document.options.strict (true or false, default false): with true, a tag whose data is missing fails the
 *  generate (400 TEMPLATE_ERROR naming each tag and where it is) instead of rendering empty. Native merge
 *  fills the template in Google's editors, which cannot tell a missing value from an empty one. */
function strictOf(req: Pick<GenerateRequest, 'document'>, nativeMerge: boolean, problems: InnerError[]): true | undefined {
  const v = (req.document.options as Record<string, unknown> | undefined)?.strict;
  if (v === undefined || v === false) return undefined;
  if (v !== true) {
    problems.push(innerError('VALIDATION_ERROR', `document.options.strict must be true or false (got ${JSON.stringify(v)})`));
    return undefined;
  }
  if (nativeMerge) {
    problems.push(
      innerError(
        'VALIDATION_ERROR',
        "document.options.strict needs docgen's own merge: native merge (document.options.driveBGenerate.nativeMergeEnabled) cannot tell which tags had no value",
      ),
    );
    return undefined;
  }
  return true;
}

/** Zones that passed, remembered because making a DateTimeFormat to check one is a large share of a
 *  generate request's checks. Bounded: Intl also accepts any mix of case ("EUROPE/paris"), so callers could invent
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
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
]);

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
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      errors.push(`data.urn must be the GraphQL endpoint's http or https URL (got ${u.protocol})`);
    else if (u.username || u.password)
      errors.push('data.urn must not carry credentials; pass them as a data.variables entry of type header');
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

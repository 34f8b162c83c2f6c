// Save options of an output (spec 4.8: document.options.pdfSaveOptions, csvSaveOptions; manage's
// targetDocument.options the same): the converter's own option types, and the rules the API checks before
// anything is queued. The converter (converter/options.ts) maps these names to LibreOffice's values and
// refuses nothing these rules accept.
import { type InnerError, innerError } from './errors.ts';

/** pdfSaveOptions.pdfConformanceLevel. LibreOffice writes the B ("basic") levels of PDF/A and PDF/UA-1; the A
 *  and U levels are refused rather than silently downgraded. */
export const PDF_CONFORMANCE_LEVELS = ['PdfA1B', 'PdfA2B', 'PdfA3B', 'PdfUa1', 'Pdf15', 'Pdf16', 'Pdf17'] as const;
/** A conformance name; the converter also takes other spellings of these (case, dashes). */
export type PdfConformance = (typeof PDF_CONFORMANCE_LEVELS)[number] | (string & {});
export const PDF_VERSIONS = ['1.5', '1.6', '1.7'] as const;
/** Why an accessible pdf is not PDF/A-1 (docs/accessibility.md): measured with veraPDF on LibreOffice 7.4. */
export const ACCESSIBLE_PDFA1 =
  "LibreOffice's PDF/A-1 export (PDF 1.4) leaves out what PDF/UA-1 needs (a table's header cells lose their scope); use PdfA2B or PdfA3B, which give PDF/A-2a or PDF/A-3a";

/** csvSaveOptions.encoding: the labels the converter knows (lower case; WHATWG/IANA names and aliases). */
export const CSV_ENCODINGS = [
  'utf-8',
  'utf8',
  'utf-16',
  'utf-16le',
  'windows-1252',
  'cp1252',
  'iso-8859-1',
  'latin1',
  'iso-8859-15',
  'us-ascii',
  'ascii',
  'windows-1250',
  'windows-1251',
  'iso-8859-2',
  'ibm850',
  'cp850',
  'ibm437',
  'macintosh',
] as const;
export type CsvEncoding = (typeof CSV_ENCODINGS)[number];

export interface PdfOptions {
  conformance?: PdfConformance;
  /** '1.5' | '1.6' | '1.7'; ignored when a PDF/A conformance fixes the version. */
  version?: string;
  /** document.options.accessible: tagged PDF conforming to PDF/UA-1, with a title and a language
   *  (docs/accessibility.md). With a PDF/A conformance, both. */
  accessible?: true;
}

export interface CsvOptions {
  /** A sheet number counted from 1, or a sheet name; default the first sheet. */
  sheet?: number | string;
  /** One character; default ','. */
  separator?: string;
  /** One of CSV_ENCODINGS (any case); default utf-8. */
  encoding?: string;
}

/** The save options of one output: only the property matching its format is read. */
export interface SaveOptions {
  pdf?: PdfOptions;
  csv?: CsvOptions;
}

const isIn = (list: readonly string[], v: string) => list.includes(v);

/** A csvSaveOptions.sheet the converter can pick: a whole number from 1 (or its digits), or a name. */
function isSheet(v: unknown): boolean {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 1;
  if (typeof v !== 'string' || v.trim() === '') return false;
  return !/^\d+$/.test(v) || Number(v) >= 1;
}

/** Save options are JSON text (spec 4.8) or, leniently, an object; only the one matching `fileFormat` is
 *  read. `accessible` (extension: true or false) asks for a tagged PDF/UA-1 pdf (docs/accessibility.md). `field` names the options object in messages (document.options, targetDocument.options).
 *  pdfSaveOptions: {pdfConformanceLevel, pdfVersion}; csvSaveOptions: {sheet, separator, encoding}. Every
 *  problem at once. */
export function parseSaveOptions(
  raw: Record<string, unknown> | undefined,
  fileFormat: string,
  field: string,
): { options: SaveOptions; problems: InnerError[] } {
  const problems: InnerError[] = [];
  const options: SaveOptions = {};
  const bad = (message: string) => problems.push(innerError('VALIDATION_ERROR', message));
  const read = (name: string): Record<string, unknown> | undefined => {
    const value = jsonObject(raw?.[name], `${field}.${name}`, problems);
    return value ?? undefined;
  };
  const accessible = raw?.accessible;
  if (accessible !== undefined && accessible !== false) {
    if (accessible !== true) bad(`${field}.accessible must be true or false (got ${JSON.stringify(accessible)})`);
    else if (fileFormat !== 'pdf') bad(`${field}.accessible applies to pdf output only (fileFormat is ${fileFormat})`);
    else options.pdf = { accessible: true };
  }
  if (fileFormat === 'pdf') {
    const o = read('pdfSaveOptions');
    if (o) {
      const at = `${field}.pdfSaveOptions`;
      const conformance = o.pdfConformanceLevel ?? o.conformance;
      const version = o.pdfVersion ?? o.version;
      const levels = PDF_CONFORMANCE_LEVELS.map((l) => l.toLowerCase());
      if (conformance !== undefined && (typeof conformance !== 'string' || !isIn(levels, conformance.toLowerCase()))) {
        bad(`${at}.pdfConformanceLevel must be one of ${PDF_CONFORMANCE_LEVELS.join(', ')}`);
      }
      if (version !== undefined && !isIn(PDF_VERSIONS, String(version)))
        bad(`${at}.pdfVersion must be ${PDF_VERSIONS.slice(0, -1).join(', ')} or ${PDF_VERSIONS.at(-1)}`);
      if (options.pdf?.accessible && typeof conformance === 'string' && conformance.toLowerCase() === 'pdfa1b')
        bad(`${field}.accessible cannot be combined with PdfA1B: ${ACCESSIBLE_PDFA1}`);
      options.pdf = {
        ...options.pdf,
        ...(typeof conformance === 'string' ? { conformance } : {}),
        ...(version !== undefined ? { version: String(version) } : {}),
      };
    }
  }
  if (fileFormat === 'csv') {
    const o = read('csvSaveOptions');
    if (o) {
      const at = `${field}.csvSaveOptions`;
      if (o.sheet !== undefined && !isSheet(o.sheet))
        bad(`${at}.sheet must be a sheet name or a sheet number from 1 (1 is the first sheet)`);
      if (o.separator !== undefined && (typeof o.separator !== 'string' || [...o.separator].length !== 1))
        bad(`${at}.separator must be one character`);
      if (o.encoding !== undefined && (typeof o.encoding !== 'string' || !isIn(CSV_ENCODINGS, o.encoding.trim().toLowerCase()))) {
        bad(`${at}.encoding must be one of ${CSV_ENCODINGS.join(', ')}`);
      }
      options.csv = {
        ...(o.sheet !== undefined ? { sheet: o.sheet as number | string } : {}),
        ...(typeof o.separator === 'string' ? { separator: o.separator } : {}),
        ...(typeof o.encoding === 'string' ? { encoding: o.encoding } : {}),
      };
    }
  }
  return { options, problems };
}

/** An options object sent as JSON text (spec 4.8) or, leniently, as an object: undefined when absent, null
 *  (with the problem added) when it is neither. */
export function jsonObject(raw: unknown, field: string, problems: InnerError[]): Record<string, unknown> | null | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      problems.push(innerError('VALIDATION_ERROR', `${field} must be JSON text of an object`));
      return null;
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push(innerError('VALIDATION_ERROR', `${field} must be an object (or JSON text of one)`));
    return null;
  }
  return value as Record<string, unknown>;
}

/** data.embedded (JSON text of an object) as the output's custom properties, which are text: strings as
 *  written, anything else as JSON. */
export function customProperties(embedded: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(JSON.parse(embedded) as Record<string, unknown>))
    out[k] = typeof v === 'string' ? v : JSON.stringify(v);
  return out;
}

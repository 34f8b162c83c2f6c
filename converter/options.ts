/**
 * Validates a ConvertOptions and turns it into what LibreOffice needs (export filter, FilterData,
 * FilterOptions). Shared by the pool and the Gotenberg adapter so both refuse the same things.
 */
import { ACCESSIBLE_PDFA1, type CsvEncoding } from '../core/save-options.ts';
import { checkCsvEscapable } from './csv.ts';
import { ConvertError } from './errors.ts';
import { converterSettings } from './settings.ts';
import type { ConvertOptions, OfficeFormat } from './types.ts';

export interface ConversionPlan {
  from: OfficeFormat;
  to: 'pdf' | 'csv' | OfficeFormat;
  filter: string;
  filterData?: Record<string, number | boolean | string>;
  filterOptions?: string;
  csvSheet?: number | string;
  /** csv: cells that would run as formulas are written as text (CSV_ESCAPE_FORMULAS), in this export's
   *  separator and encoding. */
  csvEscape?: { separator: string; encoding: string };
  /** PDF/A part (1..3) when requested: the output is checked for it. */
  pdfaPart?: number;
  /** An accessible pdf (pdf.accessible): tagged, PDF/UA-1 (converter/accessible.ts). */
  accessible?: {
    /** The title when the document has none of its own. */
    title?: string;
    /** The language (BCP 47) when the template sets none. */
    language?: string;
  };
  embedded?: Record<string, string>;
}

const OFFICE: ReadonlySet<string> = new Set(['docx', 'xlsx', 'pptx']);

const PDF_FILTER: Record<OfficeFormat, string> = {
  docx: 'writer_pdf_Export',
  xlsx: 'calc_pdf_Export',
  pptx: 'impress_pdf_Export',
};

/** LibreOffice's SelectPdfVersion values (filter/source/pdf/pdfexport.cxx, LibreOffice 7.4). */
const CONFORMANCE: Record<string, { select: number; part?: number; ua?: boolean }> = {
  pdfa1b: { select: 1, part: 1 },
  pdfa2b: { select: 2, part: 2 },
  pdfa3b: { select: 3, part: 3 },
  pdfua1: { select: 0, ua: true },
  pdf15: { select: 15 },
  pdf16: { select: 16 },
  pdf17: { select: 17 },
  pdf: { select: 0 },
};
const VERSION: Record<string, number> = { '1.5': 15, '1.6': 16, '1.7': 17 };

/**
 * rtl_TextEncoding numbers (include/rtl/textenc.h) for the CSV filter's third token, for each label the
 * API accepts (core/save-options.ts CSV_ENCODINGS: the type keeps the two lists equal).
 */
export const CSV_ENCODINGS: Record<CsvEncoding, number> = {
  'utf-8': 76,
  utf8: 76,
  'utf-16': 65535,
  'utf-16le': 65535,
  'windows-1252': 1,
  cp1252: 1,
  'iso-8859-1': 12,
  latin1: 12,
  'iso-8859-15': 22,
  'us-ascii': 11,
  ascii: 11,
  'windows-1250': 33,
  'windows-1251': 34,
  'iso-8859-2': 13,
  ibm850: 4,
  cp850: 4,
  ibm437: 3,
  macintosh: 2,
};

/** Why a workbook cannot become an accessible pdf (the API says it before queueing: core/generate.ts). */
export const ACCESSIBLE_XLSX =
  'LibreOffice 7.4 exports spreadsheets without a structure tree (no tags), so an xlsx template cannot give an accessible (PDF/UA) pdf; use a docx or pptx template for the accessible rendition';

export function normalizeFormat(f: string): string {
  return f.trim().toLowerCase().replace(/^\./, '');
}

export function planConversion(options: ConvertOptions): ConversionPlan {
  const from = normalizeFormat(options.from ?? '');
  const to = normalizeFormat(options.to ?? '');
  if (!OFFICE.has(from)) {
    throw new ConvertError('UNSUPPORTED', `cannot convert from '${options.from}': the converter accepts docx, xlsx and pptx`);
  }
  const src = from as OfficeFormat;
  const embedded = validateEmbedded(options.embedded);
  if (to === 'pdf') {
    const plan: ConversionPlan = { from: src, to, filter: PDF_FILTER[src] };
    const filterData: Record<string, number | boolean | string> = {};
    const conf = options.pdf?.conformance;
    if (conf) {
      const c = CONFORMANCE[conf.toLowerCase().replace(/[^a-z0-9]/g, '')];
      if (!c) {
        throw new ConvertError(
          'BAD_OPTIONS',
          `pdf conformance '${conf}' is not supported; use one of PdfA1B, PdfA2B, PdfA3B, PdfUa1, Pdf15, Pdf16, Pdf17`,
        );
      }
      filterData.SelectPdfVersion = c.select;
      if (c.ua) filterData.PDFUACompliance = true;
      if (c.part) plan.pdfaPart = c.part;
    }
    const ver = options.pdf?.version?.trim();
    if (ver) {
      const v = VERSION[ver.replace(/^pdf-?/i, '')];
      if (v === undefined) throw new ConvertError('BAD_OPTIONS', `pdf version '${ver}' is not supported; use 1.5, 1.6 or 1.7`);
      // PDF/A fixes the version itself; a plain version request only applies without it.
      if (plan.pdfaPart === undefined) filterData.SelectPdfVersion = v;
    }
    if (options.pdf?.accessible) {
      if (src === 'xlsx') throw new ConvertError('UNSUPPORTED', ACCESSIBLE_XLSX);
      if (plan.pdfaPart === 1) throw new ConvertError('BAD_OPTIONS', `an accessible pdf cannot be PDF/A-1: ${ACCESSIBLE_PDFA1}`);
      // Tagged (structure tree, alternative text of figures, header cells), PDF/UA-1's identification, and
      // the title in the viewer's title bar. With PDF/A the part stays; LibreOffice tags it too.
      filterData.UseTaggedPDF = true;
      filterData.PDFUACompliance = true;
      filterData.DisplayPDFDocumentTitle = true;
      const title = options.title?.trim();
      const language = options.language?.trim();
      plan.accessible = { ...(title ? { title } : {}), ...(language ? { language } : {}) };
    }
    if (Object.keys(filterData).length) plan.filterData = filterData;
    if (embedded) plan.embedded = embedded;
    return plan;
  }
  if (to === 'csv') {
    if (src !== 'xlsx') throw new ConvertError('UNSUPPORTED', `csv can only be produced from xlsx, not from ${src}`);
    const csv = options.csv ?? {};
    const sep = csv.separator ?? ',';
    if ([...sep].length !== 1) throw new ConvertError('BAD_OPTIONS', `csv separator must be one character, got '${sep}'`);
    const encName = (csv.encoding ?? 'utf-8').trim().toLowerCase();
    const enc = (CSV_ENCODINGS as Record<string, number>)[encName];
    if (enc === undefined) {
      throw new ConvertError(
        'BAD_OPTIONS',
        `csv encoding '${csv.encoding}' is not supported; use one of ${Object.keys(CSV_ENCODINGS).join(', ')}`,
      );
    }
    let sheet: number | string = 1;
    if (csv.sheet !== undefined) {
      if (typeof csv.sheet === 'number') {
        if (!Number.isInteger(csv.sheet) || csv.sheet < 1)
          throw new ConvertError('BAD_OPTIONS', `csv sheet must be a 1-based number or a name, got ${csv.sheet}`);
        sheet = csv.sheet;
      } else if (/^\d+$/.test(csv.sheet)) sheet = Number(csv.sheet);
      else sheet = csv.sheet;
    }
    // Tokens: separator, text delimiter ("), charset, first line, cell format (unused on export),
    // language, quote all text cells=false, detect special numbers, save as shown=true ("formatted"
    // values, what the reader of the sheet sees).
    // The bridge adds token 12 (which sheet) once it knows the sheet names.
    const filterOptions = `${sep.codePointAt(0)},34,${enc},1,,0,false,true,true,false,false`;
    const plan: ConversionPlan = { from: src, to, filter: 'Text - txt - csv (StarCalc)', filterOptions, csvSheet: sheet };
    if (converterSettings().csvEscapeFormulas) {
      checkCsvEscapable(sep, encName);
      plan.csvEscape = { separator: sep, encoding: encName };
    }
    return plan;
  }
  if (to === from) {
    return { from: src, to: src, filter: '', ...(embedded ? { embedded } : {}) };
  }
  throw new ConvertError('UNSUPPORTED', `cannot convert ${from} to ${to}: pdf from docx/xlsx/pptx, csv from xlsx only`);
}

function validateEmbedded(e: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!e) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(e)) {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,126}$/.test(k)) {
      throw new ConvertError('BAD_OPTIONS', `embedded property name '${k}' is not allowed (letters, digits, _ . -; max 127)`);
    }
    out[k] = String(v);
  }
  return Object.keys(out).length ? out : undefined;
}

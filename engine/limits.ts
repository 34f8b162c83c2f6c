/**
 * The bounds on the work one template may cause: one policy for every reader of Office packages
 * (template compile, converter sanitizing and page counting) and for rendering. Each limit has a
 * stable name (the setting that changes it in the service, config/env.ts) that error messages quote,
 * so a template author learns which limit was hit and its value.
 *
 * A limit that is hit is a TemplateError whose entry id is `limit_exceeded`; the service answers it
 * with 400 TEMPLATE_TOO_COMPLEX.
 */
import { TemplateError } from './errors.ts';
import type { ErrorLocation } from './errors.ts';

export interface TemplateLimits {
  /** Entries (parts) in one package. */
  maxParts: number;
  /** Inflated size of one part. */
  maxPartBytes: number;
  /** Inflated size of all parts together. */
  maxTotalBytes: number;
  /** Compression ratio above which an entry is treated as a zip bomb (checked past 1 MB inflated). */
  maxRatio: number;
  /** XML elements in one templated part (paragraphs, runs, cells... each counts). */
  maxXmlElements: number;
  /** Loop iterations in one render, all loops together (nested loops multiply). */
  maxLoopIterations: number;
  /** Size of the merged document. */
  maxOutputBytes: number;
  // What LibreOffice would have to lay out (engine/cost.ts), checked on the merged document before any
  // conversion or page count: its time grows with these, much faster than with the document's size.
  /** Estimated pages of the document (lines of text, table rows, page and section breaks; slides; sheet rows). */
  maxPages: number;
  /** Characters in one paragraph, all its runs together (LibreOffice's layout of one is quadratic in it). */
  maxParagraphChars: number;
  /** Rows of one table (its layout grows with the square of its rows). */
  maxTableRows: number;
  /** Cells of a workbook, all sheets together. */
  maxCells: number;
  /** Pixels of the document's images together, each distinct image once (decoded bitmaps, however small the file). */
  maxImagePixels: number;
}

export const DEFAULT_TEMPLATE_LIMITS: Readonly<TemplateLimits> = Object.freeze({
  maxParts: 5_000,
  maxPartBytes: 64 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 1_000,
  maxXmlElements: 1_000_000,
  maxLoopIterations: 500_000,
  maxOutputBytes: 256 * 1024 * 1024,
  maxPages: 2_000,
  maxParagraphChars: 100_000,
  maxTableRows: 5_000,
  maxCells: 200_000,
  maxImagePixels: 300_000_000,
});

/** The setting (config/env.ts) that changes each limit; quoted in error messages. */
export const LIMIT_SETTINGS: Readonly<Record<keyof TemplateLimits, string>> = Object.freeze({
  maxParts: 'TEMPLATE_MAX_PARTS',
  maxPartBytes: 'TEMPLATE_MAX_PART_BYTES',
  maxTotalBytes: 'TEMPLATE_MAX_TOTAL_BYTES',
  maxRatio: 'TEMPLATE_MAX_RATIO',
  maxXmlElements: 'TEMPLATE_MAX_XML_ELEMENTS',
  maxLoopIterations: 'TEMPLATE_MAX_LOOP_ITERATIONS',
  maxOutputBytes: 'TEMPLATE_MAX_OUTPUT_BYTES',
  maxPages: 'TEMPLATE_MAX_PAGES',
  maxParagraphChars: 'TEMPLATE_MAX_PARAGRAPH_CHARS',
  maxTableRows: 'TEMPLATE_MAX_TABLE_ROWS',
  maxCells: 'TEMPLATE_MAX_CELLS',
  maxImagePixels: 'TEMPLATE_MAX_IMAGE_PIXELS',
});

export const LIMIT_EXCEEDED = 'limit_exceeded';

/** `what` exceeds the limit: "<what>; the limit is <value> (<SETTING>)". */
export function limitError(limit: keyof TemplateLimits, what: string, value: number, location?: ErrorLocation): TemplateError {
  return TemplateError.single(LIMIT_EXCEEDED, `${what}; the limit is ${value} (${LIMIT_SETTINGS[limit]})`, location);
}

/** Fills the unset fields of a partial set of limits with the defaults. */
export function resolveLimits(l: Partial<TemplateLimits> | undefined): TemplateLimits {
  return { ...DEFAULT_TEMPLATE_LIMITS, ...(l ?? {}) };
}

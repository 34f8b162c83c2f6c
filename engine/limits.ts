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
}

export const DEFAULT_TEMPLATE_LIMITS: Readonly<TemplateLimits> = Object.freeze({
  maxParts: 5_000,
  maxPartBytes: 64 * 1024 * 1024,
  maxTotalBytes: 512 * 1024 * 1024,
  maxRatio: 1_000,
  maxXmlElements: 1_000_000,
  maxLoopIterations: 500_000,
  maxOutputBytes: 256 * 1024 * 1024,
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

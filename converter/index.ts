/**
 * Document conversion for docgen: pdf from docx/xlsx/pptx (PDF/A, PDF/UA, PDF versions), csv from
 * xlsx, same-format pass-through with custom properties, and page metering.
 *
 *   import { convert } from './converter/index.ts';
 *   const pdf = await convert(docx, { from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA2B' } });
 *
 * Backed by a module-level default converter, created on first use: a Gotenberg adapter when
 * GOTENBERG_URL is set, else a pool of warm LibreOffice instances (converter/pool.ts). Its
 * processes die with this process (an 'exit' hook plus each bridge exiting when its stdin closes),
 * and it does not keep an idle process alive, so a script can import convert() and just end.
 *
 * Settings (converter/settings.ts): the service reads them with the others (config/env.ts) and passes them
 * in with configureConverter(); the converter reads no environment.
 */
import { ConvertError, HOW_TO_ENABLE, isConvertError } from './errors.ts';
import { reportConversion } from './events.ts';
import { GotenbergConverter } from './gotenberg.ts';
import type { GotenbergOptions } from './gotenberg.ts';
import { setOfficeCustomProperties } from './office-props.ts';
import { planConversion } from './options.ts';
import { pageCount as pageCountImpl } from './pages.ts';
import { pdfPageCount } from './pdf.ts';
import type { PageCount, PageCountOptions } from './pages.ts';
import { LibreOfficePool, libreOfficeAvailable } from './pool.ts';
import { isolationSummary } from './probes.ts';
import type { PoolOptions } from './pool.ts';
import { sanitizeOoxml } from './sanitize.ts';
import { vettedOf } from './vetted.ts';
import { converterSettings } from './settings.ts';
import type { Converter, ConverterStatus, ConvertOptions } from './types.ts';

export { ConvertError, isConvertError, HOW_TO_ENABLE } from './errors.ts';
export { onConversion, onQueueWait } from './events.ts';
export type { ConversionEvent, QueueWaitEvent } from './events.ts';
export type { ConvertErrorCode } from './errors.ts';
export type {
  Converter,
  ConverterStatus,
  ConvertOptions,
  CsvOptions,
  InstanceStatus,
  OfficeFormat,
  OutputFormat,
  PdfConformance,
  PdfOptions,
} from './types.ts';
export { LibreOfficePool } from './pool.ts';
export type { PoolOptions } from './pool.ts';
export { configureConverter, converterSettings, DEFAULT_CONVERTER_SETTINGS, defaultPoolSize } from './settings.ts';
export type { ConverterLog, ConverterMode, ConverterSettings, NetworkIsolation, SandboxMode } from './settings.ts';
export { GotenbergConverter } from './gotenberg.ts';
export type { GotenbergOptions } from './gotenberg.ts';
export { CSV_ENCODINGS } from './options.ts';
export { pdfPageCount, pdfaIdentification } from './pdf.ts';
export { readOfficeCustomProperties, setOfficeCustomProperties } from './office-props.ts';
export type { PageCount, PageCountMethod, PageCountOptions } from './pages.ts';
export { sanitizeOoxml };
export { markVetted, vettedOf, type Vetted } from './vetted.ts';

export type ConverterKind = 'libreoffice' | 'gotenberg';

export interface CreateConverterOptions {
  /** Default: gotenberg when gotenberg.url or the configured GOTENBERG_URL is set, else libreoffice. */
  kind?: ConverterKind;
  pool?: PoolOptions;
  gotenberg?: Partial<GotenbergOptions>;
}

export interface ConverterAvailability {
  available: boolean;
  kind: ConverterKind | null;
  /** Why not, or what will be used. */
  reason: string;
  /** What an operator should do to enable conversion (always filled, for the 400 message). */
  howToEnable: string;
}

function chosenKind(): ConverterKind | 'none' {
  const { mode, gotenbergUrl } = converterSettings();
  if (mode !== 'auto') return mode;
  return gotenbergUrl ? 'gotenberg' : 'libreoffice';
}

/**
 * Whether a converter can be used, without starting one. Cheap after the first call (the
 * LibreOffice probe is cached), so the API can answer 400 at once instead of queueing.
 */
export function converterAvailable(): ConverterAvailability {
  const kind = chosenKind();
  if (kind === 'none')
    return { available: false, kind: null, reason: 'conversion is disabled (CONVERTER=none)', howToEnable: HOW_TO_ENABLE };
  if (kind === 'gotenberg') {
    const url = converterSettings().gotenbergUrl;
    if (!url)
      return {
        available: false,
        kind: 'gotenberg',
        reason: 'CONVERTER=gotenberg but GOTENBERG_URL is not set',
        howToEnable: 'set GOTENBERG_URL',
      };
    return { available: true, kind, reason: `Gotenberg at ${url.replace(/\/\/[^@/]*@/, '//')}`, howToEnable: HOW_TO_ENABLE };
  }
  const lo = libreOfficeAvailable();
  return lo.ok
    ? { available: true, kind, reason: `embedded LibreOffice pool (isolation: ${isolationSummary()})`, howToEnable: HOW_TO_ENABLE }
    : { available: false, kind, reason: lo.reason, howToEnable: HOW_TO_ENABLE };
}

export function createConverter(opts: CreateConverterOptions = {}): Converter {
  const url = opts.gotenberg?.url ?? converterSettings().gotenbergUrl;
  const kind = opts.kind ?? (url ? 'gotenberg' : 'libreoffice');
  if (kind === 'gotenberg') {
    if (!url) throw new ConvertError('BAD_OPTIONS', 'a Gotenberg converter needs gotenberg.url or GOTENBERG_URL');
    return new GotenbergConverter({ ...opts.gotenberg, url });
  }
  return new LibreOfficePool(opts.pool);
}

let defaultConverter: Converter | null = null;
let defaultPoolOptions: PoolOptions = {};

/** The module-level converter (created, not started, on first call). */
export function getDefaultConverter(): Converter {
  if (!defaultConverter) {
    const a = converterAvailable();
    if (!a.available)
      throw new ConvertError('CONVERTER_UNAVAILABLE', `no converter available: ${a.reason}; to enable one, ${a.howToEnable}`);
    defaultConverter = createConverter({ kind: a.kind ?? 'libreoffice', pool: defaultPoolOptions });
  }
  return defaultConverter;
}

/** Starts the default converter now (e.g. with the worker) and resolves when it can take work. `pool`
 *  configures a LibreOffice pool created by this call (e.g. the service's memory cap). */
export async function startConverter(pool?: PoolOptions): Promise<ConverterStatus> {
  if (pool && !defaultConverter) defaultPoolOptions = pool;
  const c = getDefaultConverter();
  await c.start();
  return c.status();
}

/** Status of the default converter, or null when none has been created yet. */
export function converterStatus(): ConverterStatus | null {
  return defaultConverter?.status() ?? null;
}

/** Stops the default converter; the next convert() creates a new one. */
export async function shutdownConverter(): Promise<void> {
  const c = defaultConverter;
  defaultConverter = null;
  await c?.stop();
}

/**
 * Converts with the given converter (default: the module's). Same-format requests never touch a
 * converter: the input comes back sanitized (sanitize.ts), with `embedded` written as custom properties.
 */
export async function convert(input: Uint8Array, options: ConvertOptions, converter?: Converter): Promise<Uint8Array> {
  const plan = planConversion(options);
  if (plan.to === plan.from) {
    options.signal?.throwIfAborted();
    // Refused and stripped as before a conversion (macros, DDE, external templates, linked content): an
    // output carries none of it, converted or not.
    const clean = vettedOf(input) ? input : sanitizeOoxml(input, plan.from).bytes;
    return plan.embedded ? setOfficeCustomProperties(clean, plan.embedded) : clean;
  }
  const started = performance.now();
  const event = { from: plan.from, to: plan.to };
  try {
    const out = await (converter ?? getDefaultConverter()).convert(input, options);
    reportConversion({ ...event, seconds: (performance.now() - started) / 1000 });
    return out;
  } catch (err) {
    reportConversion({ ...event, seconds: (performance.now() - started) / 1000, failure: isConvertError(err) ? err.code : 'ERROR' });
    throw err;
  }
}

/** Page count of a delivered file by the documented rule (converter/pages.ts). */
export function pageCount(bytes: Uint8Array, format: string, opts: PageCountOptions = {}): Promise<PageCount> {
  const available = opts.render === undefined || opts.count === undefined ? converterAvailable().available : false;
  const render = opts.render !== undefined ? opts.render : available ? convert : null;
  // The layout count of the default converter (created when first needed), unless the caller chose.
  const count = opts.count !== undefined ? opts.count : opts.render === undefined && available ? defaultCount : null;
  return pageCountImpl(bytes, format, { ...opts, render, count });
}

/** A converter's layout page count as PageCountOptions.count, or null when it has none (Gotenberg). */
export function countWith(converter: Converter): PageCountOptions['count'] {
  return converter.pageCount ? (input, options) => converter.pageCount!(input, options) : null;
}

/** The default converter's layout count, or the pages of its rendition when it has none. */
async function defaultCount(input: Uint8Array, options: Omit<ConvertOptions, 'to'>): Promise<number> {
  const c = getDefaultConverter();
  return c.pageCount ? c.pageCount(input, options) : pdfPageCount(await c.convert(input, { ...options, to: 'pdf' }));
}

export async function countPages(bytes: Uint8Array, format: string, opts: PageCountOptions = {}): Promise<number> {
  return (await pageCount(bytes, format, opts)).pages;
}
export { embedFacturX } from './facturx.ts';
export type { FacturXEmbedding } from './facturx.ts';

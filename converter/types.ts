// The save options are the API's (core/save-options.ts checks them before anything is queued): one type.
import type { CsvOptions, PdfOptions } from '../core/save-options.ts';

export type { CsvOptions, PdfConformance, PdfOptions } from '../core/save-options.ts';
export type OfficeFormat = 'docx' | 'xlsx' | 'pptx';
export type OutputFormat = OfficeFormat | 'pdf' | 'csv';

export interface ConvertOptions {
  from: string;
  to: string;
  signal?: AbortSignal;
  pdf?: PdfOptions;
  csv?: CsvOptions;
  /** pdf.accessible: the title the pdf gets when the document has none (docgen: the document's name). */
  title?: string;
  /** pdf.accessible: the language (BCP 47) of a document whose template sets none (docgen: document.locale). */
  language?: string;
  /** Custom document properties (`data.embedded`), written to the output's metadata. */
  embedded?: Record<string, string>;
  /** The caller's remaining time (a sync generate's deadline): the conversion's wait and run together
   *  end by then; past it the conversion fails with TIMEOUT (no `setting`). */
  timeoutMs?: number;
  /** Whose conversion this is: waiting conversions are served to the tenant that used the least
   *  LibreOffice time recently (round-robin among equals). */
  tenant?: string;
  /** Epoch ms when the caller stops waiting (a synchronous generate's GENERATE_TIMEOUT_MS): a conversion
   *  still queued then is dropped (TIMEOUT, setting GENERATE_TIMEOUT_MS), so a caller that gave up leaves
   *  no work queued ahead of its next request. One already running finishes under its own limits. */
  abandonAt?: number;
}

export interface InstanceStatus {
  index: number;
  state: 'starting' | 'idle' | 'busy' | 'stopping' | 'dead';
  pid: number | null;
  conversions: number;
  restarts: number;
  lastError: string | null;
  /** Starts that failed in a row (0 once it is up); the pool keeps restarting with a back-off. */
  failedStarts?: number;
  /** A spare: kept idle to take over from an instance stopped by a time limit (CONVERTER_SPARE_INSTANCES). */
  spare?: boolean;
}

export interface ConverterStatus {
  kind: 'libreoffice' | 'gotenberg';
  /** True when at least one instance can take work now (or, for Gotenberg, the last probe passed). */
  ready: boolean;
  started: boolean;
  queued: number;
  queueLimit: number;
  running: number;
  instances: InstanceStatus[];
  /** 'bwrap --unshare-net' | 'unshare -n' | 'unshare -rn' | 'none': how LibreOffice is kept off the network. */
  networkIsolation: string;
  /** 'bwrap' (each instance sees only its profile and job, converter/sandbox.ts) | 'none' | 'remote (Gotenberg)'. */
  sandbox: string;
  /** Both in words, for the start banner and readiness. */
  isolation: string;
}

export interface Converter {
  readonly kind: 'libreoffice' | 'gotenberg';
  convert(input: Uint8Array, options: ConvertOptions): Promise<Uint8Array>;
  /** The pages a PDF rendition would have, without making it (LibreOffice's layout); absent = count the
   *  pages of a rendition made with convert(). */
  pageCount?(input: Uint8Array, options: Omit<ConvertOptions, 'to'>): Promise<number>;
  /** Starts the instances (idempotent) and resolves when the converter can take work. */
  start(): Promise<void>;
  /** Resolves when ready; rejects with CONVERTER_UNAVAILABLE if it cannot become ready. */
  ready(): Promise<void>;
  status(): ConverterStatus;
  /** Rejects queued work with SHUTDOWN, lets nothing new in, ends every child process. */
  stop(): Promise<void>;
}

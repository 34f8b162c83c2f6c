/**
 * Every converter failure is a ConvertError with a stable code, so the API can map it to a status
 * (UNAVAILABLE/BAD_INPUT/UNSUPPORTED/TOO_COMPLEX → 400, OVER_BUDGET → 429, QUEUE_FULL → retried,
 * CRASHED → retryable, TIMEOUT → see below) and the activity can decide retryability without parsing
 * messages.
 */
export type ConvertErrorCode =
  | 'CONVERTER_UNAVAILABLE' // nothing installed/configured, or LibreOffice never started; message says how to enable one
  | 'UNSUPPORTED' // a from/to/option combination no converter here can produce
  | 'BAD_INPUT' // the document is malformed or refused by the sanitizer
  | 'BAD_OPTIONS' // an option value is invalid
  | 'TOO_COMPLEX' // the document's cost (pages, paragraph length, table rows, cells, image pixels) exceeds a limit
  | 'OVER_BUDGET' // the subscription used its share of the converter's time while others were converting
  | 'QUEUE_FULL' // back-pressure: the bounded queue is full
  | 'TIMEOUT' // a time limit passed; the instance was restarted (`setting` says which)
  | 'ABORTED' // the caller's AbortSignal fired
  | 'CRASHED' // the office instance died while converting
  | 'CONVERSION_FAILED' // the office reported an error for this document
  | 'SHUTDOWN'; // the converter was stopped

const RETRYABLE: ReadonlySet<ConvertErrorCode> = new Set(['QUEUE_FULL', 'TIMEOUT', 'CRASHED', 'SHUTDOWN']);

export interface ConvertErrorOptions {
  cause?: unknown;
  /** The setting of the limit that ended the conversion (CONVERTER_TIMEOUT_MS,
   *  CONVERTER_CONTENDED_TIMEOUT_MS, CONVERTER_SUBSCRIPTION_BUDGET_MS); absent when the caller's own time
   *  ran out or the limit is not a setting (Gotenberg's HTTP timeout). */
  setting?: string;
  /** OVER_BUDGET: when the budget allows a conversion again. */
  retryAfterMs?: number;
}

export class ConvertError extends Error {
  readonly code: ConvertErrorCode;
  /** True when the same request may succeed later (a Temporal retry makes sense). A conversion that ran
   *  past one of the converter's own time limits is the document's cost, not the machine's fault: it is
   *  final, like a limit checked before the conversion. */
  readonly retryable: boolean;
  readonly setting: string | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(code: ConvertErrorCode, message: string, options?: ConvertErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConvertError';
    this.code = code;
    this.setting = options?.setting;
    this.retryAfterMs = options?.retryAfterMs;
    this.retryable = RETRYABLE.has(code) && !(code === 'TIMEOUT' && this.setting !== undefined);
  }
}

export function isConvertError(e: unknown): e is ConvertError {
  return e instanceof ConvertError;
}

export const HOW_TO_ENABLE =
  'install LibreOffice for the embedded pool (as root: bash .ci/install-converter.sh, i.e. Debian packages ' +
  'libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui python3-uno), ' +
  'or set GOTENBERG_URL to a Gotenberg 8 server';

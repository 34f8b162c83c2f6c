/**
 * Every converter failure is a ConvertError with a stable code, so the API can map it to a status
 * (UNAVAILABLE/BAD_INPUT/UNSUPPORTED → 400, QUEUE_FULL → 503/429, TIMEOUT/CRASHED → retryable)
 * and the activity can decide retryability without parsing messages.
 */
export type ConvertErrorCode =
  | 'CONVERTER_UNAVAILABLE' // nothing installed/configured; message says how to enable one
  | 'UNSUPPORTED' // a from/to/option combination no converter here can produce
  | 'BAD_INPUT' // the document is malformed or refused by the sanitizer
  | 'BAD_OPTIONS' // an option value is invalid
  | 'QUEUE_FULL' // back-pressure: the bounded queue is full
  | 'TIMEOUT' // the per-conversion deadline passed; the instance was restarted
  | 'ABORTED' // the caller's AbortSignal fired
  | 'CRASHED' // the office instance died while converting
  | 'CONVERSION_FAILED' // the office reported an error for this document
  | 'SHUTDOWN'; // the converter was stopped

const RETRYABLE: ReadonlySet<ConvertErrorCode> = new Set(['QUEUE_FULL', 'TIMEOUT', 'CRASHED', 'SHUTDOWN']);

export class ConvertError extends Error {
  readonly code: ConvertErrorCode;
  /** True when the same request may succeed later (a Temporal retry makes sense). */
  readonly retryable: boolean;

  constructor(code: ConvertErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConvertError';
    this.code = code;
    this.retryable = RETRYABLE.has(code);
  }
}

export function isConvertError(e: unknown): e is ConvertError {
  return e instanceof ConvertError;
}

export const HOW_TO_ENABLE =
  'install LibreOffice for the embedded pool (as root: bash .ci/install-converter.sh, i.e. Debian packages ' +
  'libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui python3-uno), ' +
  'or set GOTENBERG_URL to a Gotenberg 8 server';

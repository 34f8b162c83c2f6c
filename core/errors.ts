// One error registry: stable code -> HTTP status and default message (spec section 7, plus the extensions
// this service needs, marked). Pure data: imported by the API, the activities and the workflows.

export interface ErrorSpec {
  readonly status: number;
  readonly message: string;
  /** The same request sent again later can succeed (the service failed, was busy or ran out of time);
   *  without it the request itself must change. The OpenAPI document lists these codes (api/schemas.ts). */
  readonly retryable?: boolean;
}

export const errorRegistry = {
  DATA_NAME_REQUIRED: { status: 400, message: 'Name is required.' },
  OPTION_VALUE_MISSING_DEFINITION_OR_KEY: { status: 400, message: 'Either optionDefinitionId or customKey is required.' },
  INVALID_SUMMARY_TYPE: { status: 400, message: 'Summary type is missing or unknown.' },
  INVALID_SCOPE_VALUE: { status: 400, message: 'Unknown scope.' },
  INVALID_APPLICATION_VALUE: { status: 400, message: 'Unknown application.' },
  INVALID_TEMPLATE_FORMAT: { status: 400, message: 'Only .docx, .xlsx and .pptx files are accepted.' },
  TEMPLATE_NOT_FOUND: { status: 400, message: 'The template could not be resolved.' },
  X_CLIENT_AUTH_ERROR: { status: 400, message: 'Invalid format' },
  VALIDATION_ERROR: { status: 400, message: 'The request is invalid.' },
  ENVELOPE_ID_INVALID: { status: 400, message: 'Envelope not found.' },
  UNAUTHORIZED: { status: 401, message: 'The request could not be authenticated.' },
  AUTHORIZATION_ERROR: { status: 403, message: 'The caller is not permitted to do this.' },
  NOT_FOUND_BY_ID: { status: 404, message: 'Resource not found.' },
  CREATE_DOCUMENT_TEMPLATE_ERROR: { status: 500, message: 'The template could not be created.', retryable: true },
  CREATE_DATA_SOURCE_ERROR: { status: 500, message: 'The data source could not be created.', retryable: true },
  ADD_DATA_SOURCE_TO_SOLUTION_ERROR: { status: 500, message: 'The link could not be changed.', retryable: true },
  FILE_UPLOAD_FAILED: { status: 500, message: 'The file could not be stored.', retryable: true },
  GET_DATA_SOURCE_ERROR: { status: 500, message: 'Unexpected error.', retryable: true },
  FUNCTION_EXECUTION_ERROR: { status: 500, message: 'Unexpected error.', retryable: true },
  // Extensions (not in the spec's table; documented in the OpenAPI description).
  DATA_NOT_FOUND: { status: 400, message: 'The data could not be resolved.' },
  DATA_INVALID: { status: 400, message: 'The data is not a valid JSON document.' },
  EINVOICE_INVALID: {
    status: 400,
    message: 'The e-invoice breaks rules of its standard (one inner error per rule, naming the rule and the field); nothing was delivered.',
  },
  TEMPLATE_ERROR: { status: 400, message: 'The template has errors.' },
  TEMPLATE_TOO_COMPLEX: { status: 400, message: 'The template or its data exceeds a limit of this service.' },
  X_SERVICE_AUTH_ERROR: { status: 400, message: 'Invalid format' },
  NOT_SUPPORTED: { status: 400, message: 'This option is not supported by this deployment.' },
  CONNECTION_MISSING: {
    status: 400,
    message: 'The subscription has no connection to this location: connect it with PUT /common/connection/{kind}.',
  },
  CONNECTION_ERROR: {
    status: 400,
    message: 'The connection to this location was refused (credentials, permissions or the drive it names).',
  },
  QUOTA_EXCEEDED: {
    status: 400,
    message: 'The target drive is full (its storage quota is used up): free space there or choose another target.',
  },
  FILE_TOO_LARGE: { status: 413, message: 'The uploaded file is too large.' },
  ROUTE_NOT_FOUND: { status: 404, message: 'No such operation.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This operation does not accept this method.' },
  CANCELLED: { status: 409, message: 'The operation was cancelled before it finished; nothing was delivered.' },
  IDEMPOTENCY_KEY_REUSED: { status: 409, message: 'This Idempotency-Key was already used with a different request.' },
  TOO_MANY_REQUESTS: { status: 429, message: 'Too many requests; retry after the time in Retry-After.', retryable: true },
  GENERATION_TIMEOUT: {
    status: 504,
    message:
      'The operation did not finish while the caller waited; it may still complete. Send the same request again with the same Idempotency-Key (without one: the operationId of this answer) to get its outcome.',
    retryable: true,
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorRegistry;

export interface InnerError {
  code: string;
  message: string;
  userMessage: string;
  eventId?: string;
}

export function innerError(code: ErrorCode, message?: string, eventId?: string): InnerError {
  const spec = errorRegistry[code];
  const e: InnerError = { code, message: message ?? spec.message, userMessage: message ?? spec.message };
  if (eventId) e.eventId = eventId;
  return e;
}

/** An error that knows its HTTP rendering. Thrown by routes; activities convert it to a non-retryable
 *  ApplicationFailure whose type is the code and whose details carry the inner errors. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly innerErrors: InnerError[];
  /** Errors an external service reported (manage's error.externalErrors); empty otherwise. */
  readonly externalErrors: unknown[];
  /** TOO_MANY_REQUESTS from a run (a throttling drive): sent as the Retry-After header. */
  readonly retryAfterSeconds: number | undefined;
  constructor(code: ErrorCode, message?: string, innerErrors?: InnerError[], externalErrors: unknown[] = [], retryAfterSeconds?: number) {
    super(message ?? errorRegistry[code].message);
    this.code = code;
    this.status = errorRegistry[code].status;
    this.innerErrors = innerErrors ?? [innerError(code, message)];
    this.externalErrors = externalErrors;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export function isErrorCode(s: unknown): s is ErrorCode {
  return typeof s === 'string' && Object.hasOwn(errorRegistry, s);
}

/** The codes whose requests can succeed when sent again later (ErrorSpec.retryable). */
export const RETRYABLE_CODES = (Object.keys(errorRegistry) as ErrorCode[]).filter(
  (c) => (errorRegistry[c] as ErrorSpec).retryable === true,
);

// Errors of the docgen API as classes: one per status family, each carrying the HTTP status, the first
// inner error's code, all inner errors and the operationId the server logged the request under.
// The spec's odd bodies are normalised here: the bare `{code, message, eventId?}` of configuration get and
// list, the empty body of the data-source add-link 404, and the string statusCode of manage.

export interface InnerError {
  code: string;
  message: string;
  userMessage: string;
  eventId?: string;
}

export interface DocgenErrorInit {
  status: number;
  message: string;
  innerErrors?: InnerError[];
  operationId?: string | undefined;
  /** The parsed response body, as received (undefined for an empty body). */
  body?: unknown;
  cause?: unknown;
  /** 429: the server's Retry-After, in milliseconds from when the answer came. */
  retryAfterMs?: number | undefined;
}

export class DocgenError extends Error {
  override name = 'DocgenError';
  /** HTTP status (0 for a network failure or a timeout: no response was received). */
  readonly status: number;
  /** Machine identifier of the first inner error ('' when the body carried none). */
  readonly code: string;
  readonly innerErrors: InnerError[];
  /** The server's operationId (envelope field or x-operation-id header), when known. */
  readonly operationId: string | undefined;
  readonly body: unknown;
  constructor(init: DocgenErrorInit) {
    super(init.message, init.cause !== undefined ? { cause: init.cause } : undefined);
    this.status = init.status;
    this.innerErrors = init.innerErrors ?? [];
    this.code = this.innerErrors[0]?.code ?? '';
    this.operationId = init.operationId;
    this.body = init.body;
  }
}

export class ValidationError extends DocgenError {
  override name = 'ValidationError';
}
export class AuthenticationError extends DocgenError {
  override name = 'AuthenticationError';
}
export class AuthorizationError extends DocgenError {
  override name = 'AuthorizationError';
}
export class NotFoundError extends DocgenError {
  override name = 'NotFoundError';
}
export class ServerError extends DocgenError {
  override name = 'ServerError';
}
/** 429 TOO_MANY_REQUESTS: the subscription's (or the client address's) rate limit. Thrown once the
 *  transport's retries are spent, or at once when the server asks for a wait longer than the policy's
 *  maxRetryAfterMs. */
export class RateLimitError extends DocgenError {
  override name = 'RateLimitError';
  /** Milliseconds to wait before one request is allowed again (the Retry-After header), when the server said. */
  readonly retryAfterMs: number | undefined;
  constructor(init: DocgenErrorInit) {
    super(init);
    this.retryAfterMs = init.retryAfterMs;
  }
  /** The same in whole seconds, as the header says it. */
  get retryAfter(): number | undefined {
    return this.retryAfterMs === undefined ? undefined : Math.ceil(this.retryAfterMs / 1000);
  }
}
/** No response at all: connection refused or reset, DNS failure, or the client-side timeout. */
export class NetworkError extends DocgenError {
  override name = 'NetworkError';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function toInner(v: unknown): InnerError | undefined {
  if (!isObject(v) || typeof v.code !== 'string') return undefined;
  const message = typeof v.message === 'string' ? v.message : '';
  const e: InnerError = { code: v.code, message, userMessage: typeof v.userMessage === 'string' ? v.userMessage : message };
  if (typeof v.eventId === 'string') e.eventId = v.eventId;
  return e;
}

/** The error class for a status. */
export function errorClassFor(status: number): typeof DocgenError {
  if (status === 400 || status === 409 || status === 413 || status === 415 || status === 422) return ValidationError;
  if (status === 401) return AuthenticationError;
  if (status === 403) return AuthorizationError;
  if (status === 404) return NotFoundError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return DocgenError;
}

/** Builds the typed error of a non-2xx response from its status, parsed body and operationId header. */
export function errorFromResponse(status: number, body: unknown, headerOperationId?: string | null, retryAfterMs?: number): DocgenError {
  let message = `HTTP ${status}`;
  let innerErrors: InnerError[] = [];
  let operationId: string | undefined = headerOperationId ?? undefined;
  if (isObject(body)) {
    if (typeof body.operationId === 'string') operationId = body.operationId;
    if (isObject(body.error)) {
      // The error envelope (2.1); statusCode is a string in manage, which changes nothing here.
      if (typeof body.error.message === 'string') message = body.error.message;
      if (Array.isArray(body.error.innerErrors))
        innerErrors = body.error.innerErrors.map(toInner).filter((e): e is InnerError => e !== undefined);
    } else if (typeof body.code === 'string') {
      // Bare body of configuration get and list: {code, message, eventId?}.
      const inner = toInner(body);
      if (inner) innerErrors = [inner];
      if (typeof body.message === 'string') message = body.message;
    }
  } else if (body === undefined && status === 404) {
    // Empty body (data-source add-link): the solution or the data source does not exist.
    message = 'Not found (empty response body)';
    innerErrors = [{ code: 'NOT_FOUND_BY_ID', message, userMessage: message }];
  } else if (typeof body === 'string' && body) {
    message = `HTTP ${status}: ${body.slice(0, 200)}`;
  }
  const Cls = errorClassFor(status);
  return new Cls({ status, message, innerErrors, operationId, body, ...(Cls === RateLimitError ? { retryAfterMs } : {}) });
}

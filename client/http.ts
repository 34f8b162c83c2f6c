// The transport under every sub-client: credentials, JSON and multipart bodies, typed errors, per-attempt
// timeouts and retries. Retried: 408, 429, 5xx and network failures, for idempotent methods (GET, PUT,
// DELETE, HEAD) and for POSTs that carry an Idempotency-Key; never for other POSTs, whose first attempt may
// have done the work. The wait is exponential back-off with full jitter, and never shorter than the
// server's Retry-After (seconds or HTTP date).
import { errorFromResponse, NetworkError } from './errors.ts';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface RetryPolicy {
  /** Retries after the first attempt (default 3). 0 disables retries. */
  retries: number;
  /** First back-off step in ms (default 200); step n is min(maxDelayMs, baseDelayMs * 2^n), jittered. */
  baseDelayMs: number;
  /** Longest back-off step in ms (default 10 000). */
  maxDelayMs: number;
  /** A Retry-After longer than this (ms, default 60 000) is not waited for: the error is thrown. */
  maxRetryAfterMs: number;
}

export interface TransportOptions {
  /** `{base_url}` or `{base_url}/v1`; `/v1` is added when missing. */
  baseUrl: string;
  apiKey: string;
  accessToken: string;
  fetch?: FetchLike;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  retry?: Partial<RetryPolicy>;
  /** Per-attempt timeout in ms (default 120 000: a synchronous generate may take a while). */
  timeoutMs?: number;
  /** Extra headers on every request (e.g. X-Client-Authorization for every call of one client). */
  headers?: Record<string, string>;
}

/** Options every operation accepts. */
export interface RequestOptions {
  /** Sent as `Idempotency-Key`; makes a POST retryable. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
}

export type QueryValue = string | number | boolean | undefined | null;

export interface CallInit extends RequestOptions {
  query?: Record<string, QueryValue>;
  json?: unknown;
  form?: FormData;
}

const RETRY_STATUSES = (s: number) => s === 408 || s === 429 || s >= 500;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/** Parses Retry-After (delta-seconds or HTTP date) into ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return undefined;
  return Math.max(0, t - now);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The service's URL with /v1 left out, checked: a missing or malformed one fails here, naming it, not
 *  later as a failed request. */
function baseUrlOf(given: unknown): string {
  const example = 'e.g. http://127.0.0.1:8080 (`npx docgen credentials --json` prints it as baseUrl)';
  if (typeof given !== 'string' || given.trim() === '') {
    throw new TypeError(
      `DocgenClient: baseUrl is required: the service's URL, ${example}; got ${given === '' ? 'an empty string' : String(given)}`,
    );
  }
  let url: URL;
  try {
    url = new URL(given.trim());
  } catch {
    throw new TypeError(`DocgenClient: baseUrl ${JSON.stringify(given)} is not a URL: give the service's URL, ${example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TypeError(`DocgenClient: baseUrl ${JSON.stringify(given)} must be an http or https URL, ${example}`);
  return given.trim().replace(/\/+$/, '');
}

export class Transport {
  readonly baseUrl: string;
  readonly policy: RetryPolicy;
  private readonly fetchFn: FetchLike;
  private readonly auth: Record<string, string>;
  private readonly timeoutMs: number;

  constructor(opts: TransportOptions) {
    const base = baseUrlOf(opts?.baseUrl);
    this.baseUrl = base.endsWith('/v1') ? base : `${base}/v1`;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.auth = { ...opts.headers, authorization: `Bearer ${opts.accessToken}`, 'x-api-key': opts.apiKey };
    this.timeoutMs = opts.timeoutMs ?? 120_000;
    this.policy = {
      retries: opts.retries ?? opts.retry?.retries ?? 3,
      baseDelayMs: opts.retry?.baseDelayMs ?? 200,
      maxDelayMs: opts.retry?.maxDelayMs ?? 10_000,
      maxRetryAfterMs: opts.retry?.maxRetryAfterMs ?? 60_000,
    };
  }

  url(path: string, query?: Record<string, QueryValue>): string {
    const u = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** One unauthenticated GET, no retries, any status: for the health and readiness probes. */
  async probe(path: string): Promise<{ status: number; body: unknown }> {
    const res = await this.fetchFn(this.url(path), {
      method: 'GET',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body };
  }

  /** Back-off before retry number `attempt` (0-based), at least the server's Retry-After. */
  delayFor(attempt: number, retryAfterMs: number | undefined): number {
    const cap = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** attempt);
    const jittered = Math.random() * cap;
    return Math.max(retryAfterMs ?? 0, jittered);
  }

  /** Sends the request and returns the successful Response (body unread); throws a DocgenError otherwise. */
  async send(method: string, path: string, init: CallInit = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.auth, accept: 'application/json', ...init.headers };
    let body: string | FormData | undefined;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    } else if (init.form) {
      body = init.form;
    }
    if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
    const retryable = IDEMPOTENT.has(method) || Boolean(init.idempotencyKey);
    const url = this.url(path, init.query);
    const timeoutMs = init.timeoutMs ?? this.timeoutMs;

    for (let attempt = 0; ; attempt++) {
      const canRetry = retryable && attempt < this.policy.retries;
      const signals = [AbortSignal.timeout(timeoutMs), ...(init.signal ? [init.signal] : [])];
      let res: Response;
      try {
        res = await this.fetchFn(url, { method, headers, signal: AbortSignal.any(signals), ...(body !== undefined ? { body } : {}) });
      } catch (err) {
        if (init.signal?.aborted) throw err;
        const timedOut = (err as Error).name === 'TimeoutError';
        if (canRetry) {
          await sleep(this.delayFor(attempt, undefined), init.signal);
          continue;
        }
        throw new NetworkError({
          status: 0,
          message: timedOut ? `${method} ${path}: no response within ${timeoutMs} ms` : `${method} ${path}: ${(err as Error).message}`,
          cause: err,
        });
      }
      if (res.ok) return res;
      const parsed = await readBody(res);
      const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
      const error = errorFromResponse(res.status, parsed, res.headers.get('x-operation-id'), retryAfter);
      if (canRetry && RETRY_STATUSES(res.status)) {
        if (retryAfter === undefined || retryAfter <= this.policy.maxRetryAfterMs) {
          await sleep(this.delayFor(attempt, retryAfter), init.signal);
          continue;
        }
      }
      throw error;
    }
  }

  /** JSON call: the parsed body of a 2xx response (undefined when empty). */
  async json<T>(method: string, path: string, init: CallInit = {}): Promise<T> {
    const res = await this.send(method, path, init);
    return (await readBody(res)) as T;
  }
}

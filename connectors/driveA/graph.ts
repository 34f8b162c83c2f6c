// A thin Microsoft Graph client over fetch: client-credentials tokens (cached per connection), bounded
// retries of 429/503/504 honouring Retry-After, one token refresh on 401 InvalidAuthenticationToken, no
// Authorization header anywhere but the Graph API itself (upload URLs, download and monitor URLs are
// pre-authenticated), and upload sessions that resume from nextExpectedRanges.
//
// Why not @microsoft/microsoft-graph-client: it sends the token only to https hosts listed in
// customHosts and takes the first path segment of an absolute URL as the API version (upload URLs must
// then have 2+ segments); its RetryHandler retries only buffered bodies with its own unbounded-ish waits
// and cannot refresh a client-credentials token; LargeFileUploadTask wants the whole file as one object.
// Here a large document streams from the blob store chunk by chunk, the retry budget fits an activity,
// and every endpoint is a service setting (DRIVEA_GRAPH_URL, DRIVEA_LOGIN_URL), whatever its host.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs, retryAfterMs, type ThrottleScope, throttleWait } from '../throttle.ts';

/** DRIVE_THROTTLE_MAX_WAIT_MS's default: 10 minutes, inside a transfer's 15-minute limit. */
export const DEFAULT_THROTTLE_WAIT_MS = 600_000;

export interface GraphCredentials {
  tenantId: string;
  clientId: string;
  clientSecret: string;
}

export interface GraphClientOptions {
  graphUrl: string;
  loginUrl: string;
  credentials: GraphCredentials;
  /** Distinguishes connections in the token cache (the connection id). */
  cacheKey: string;
  /** Attempts per request on 429/503/504 or a network error (default 4). */
  maxAttempts?: number;
  /** The longest a step waits for throttling, all waits together (ms, DRIVE_THROTTLE_MAX_WAIT_MS): past it
   *  a ThrottledError (connectors/throttle.ts). */
  maxThrottleWaitMs?: number;
}

/** What Graph answered, when it is not a success. */
export class GraphError extends Error {
  override name = 'GraphError';
  readonly status: number;
  readonly code: string;
  readonly body: unknown;
  constructor(status: number, code: string, message: string, body: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** The token endpoint refused the credentials (400/401): the connection is unusable as configured. */
export class TokenError extends Error {
  override name = 'TokenError';
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, message: string, body: unknown) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** Too many failed attempts (network errors, 5xx without a Retry-After): a plain Error, so Temporal
 *  retries the activity later. Throttling past what a step may wait is a ThrottledError instead. */
export class GraphUnavailableError extends Error {
  override name = 'GraphUnavailableError';
}

export interface DriveItem {
  id: string;
  name: string;
  size?: number;
  webUrl?: string;
  eTag?: string;
  file?: { mimeType?: string };
  folder?: { childCount?: number };
  parentReference?: { driveId?: string; id?: string; path?: string };
  '@microsoft.graph.downloadUrl'?: string;
}

const tokens = new Map<string, { token: string; expiresAt: number }>();

/** The counts a test (or an operator, through logs) can read: attempts beyond the first, waits. */
export const graphStats = { requests: 0, retries: 0, refreshes: 0, tokenRequests: 0 };

export interface RequestOptions {
  json?: unknown;
  body?: Uint8Array;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** Absolute URLs outside the API (upload, monitor, download) never get the token. */
  absolute?: boolean;
}

export class GraphClient {
  private readonly opts: Required<Omit<GraphClientOptions, 'credentials'>> & { credentials: GraphCredentials };
  private readonly key: string;

  constructor(opts: GraphClientOptions) {
    this.opts = {
      maxAttempts: 4,
      maxThrottleWaitMs: DEFAULT_THROTTLE_WAIT_MS,
      ...opts,
      graphUrl: opts.graphUrl.replace(/\/+$/, ''),
      loginUrl: opts.loginUrl.replace(/\/+$/, ''),
    };
    // A changed secret (PUT of the connection) must not reuse the old secret's token.
    const c = opts.credentials;
    this.key = `${opts.cacheKey}:${createHash('sha256').update(`${opts.loginUrl}\n${c.tenantId}\n${c.clientId}\n${c.clientSecret}`).digest('hex')}`;
  }

  /** A token for https://graph.microsoft.com/.default (client credentials), from the cache while it has
   *  more than five minutes left. */
  async token(force = false): Promise<string> {
    const cached = tokens.get(this.key);
    if (!force && cached && cached.expiresAt - Date.now() > 300_000) return cached.token;
    const { tenantId, clientId, clientSecret } = this.opts.credentials;
    const url = `${this.opts.loginUrl}/${encodeURIComponent(tenantId)}/oauth2/v2.0/token`;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      scope: 'https://graph.microsoft.com/.default',
    });
    let res: Response | undefined;
    for (let attempt = 1; ; attempt++) {
      graphStats.tokenRequests++;
      try {
        res = await fetch(url, {
          method: 'POST',
          body: form,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        if (attempt >= this.opts.maxAttempts)
          throw new GraphUnavailableError(`the DriveA token endpoint could not be reached: ${(err as Error).message}`);
        await sleep(250 * 2 ** attempt);
        continue;
      }
      if ((res.status === 429 || res.status >= 500) && attempt < this.opts.maxAttempts) {
        await res.body?.cancel();
        const wait = retryAfter(res, attempt);
        if (wait > 10_000) break;
        await sleep(wait);
        continue;
      }
      break;
    }
    const body = (await res.json().catch(() => ({}))) as {
      access_token?: string;
      expires_in?: number;
      error?: string;
      error_description?: string;
    };
    if (res.ok && body.access_token) {
      tokens.set(this.key, { token: body.access_token, expiresAt: Date.now() + (body.expires_in ?? 3600) * 1000 });
      return body.access_token;
    }
    if (res.status === 400 || res.status === 401) {
      throw new TokenError(
        res.status,
        `the DriveA token endpoint refused the connection's credentials: ${body.error ?? res.status} ${firstLine(body.error_description)}`.trim(),
        body,
      );
    }
    throw new GraphUnavailableError(`the DriveA token endpoint answered ${res.status}`);
  }

  /** One Graph request with the retry policy; returns the response for 2xx/3xx, throws GraphError otherwise. */
  async request(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    let url = o.absolute ? path : `${this.opts.graphUrl}${path}`;
    if (o.query) url += (url.includes('?') ? '&' : '?') + new URLSearchParams(o.query).toString();
    let refreshed = false;
    let throttled = 0;
    const budget: ThrottleScope = { waited: 0 };
    for (let attempt = 1; ; attempt++) {
      const headers: Record<string, string> = { ...o.headers };
      if (!o.absolute) headers.authorization = `Bearer ${await this.token()}`;
      let body: Uint8Array | string | undefined = o.body;
      if (o.json !== undefined) {
        body = JSON.stringify(o.json);
        headers['content-type'] = 'application/json';
      }
      let res: Response;
      graphStats.requests++;
      try {
        res = await fetch(url, {
          method,
          headers,
          body: body as BodyInit | undefined,
          redirect: 'manual',
          signal: AbortSignal.timeout(120_000),
        });
      } catch (err) {
        if (attempt >= this.opts.maxAttempts)
          throw new GraphUnavailableError(`DriveA (Microsoft Graph) could not be reached: ${(err as Error).message}`);
        graphStats.retries++;
        await sleep(250 * 2 ** attempt);
        continue;
      }
      // Throttling: 429, or 503/504 with a Retry-After (Graph's "Throttling guidance"): wait what it says
      // (else the documented exponential back-off), sending nothing meanwhile, within the step's budget
      // and deadline (connectors/throttle.ts); past them a ThrottledError, which the location answers as
      // TOO_MANY_REQUESTS with Retry-After.
      const asked = retryAfterMs(res.headers.get('retry-after'));
      if (res.status === 429 || ((res.status === 503 || res.status === 504) && asked !== undefined && asked > 0)) {
        await res.body?.cancel();
        throttled++;
        graphStats.retries++;
        await throttleWait('DriveA (Microsoft Graph)', asked ?? backoffMs(throttled), this.opts.maxThrottleWaitMs, budget);
        attempt--; // a throttled answer is not a failed attempt
        continue;
      }
      if (res.status === 503 || res.status === 504) {
        await res.body?.cancel();
        if (attempt >= this.opts.maxAttempts) {
          throw new GraphUnavailableError(`DriveA (Microsoft Graph) answered ${res.status} ${attempt} times; retrying later`);
        }
        graphStats.retries++;
        await sleep(retryAfter(res, attempt));
        continue;
      }
      if (res.status === 401 && !o.absolute && !refreshed) {
        // An expired or revoked token: one fresh token, one more try.
        await res.body?.cancel();
        refreshed = true;
        graphStats.refreshes++;
        await this.token(true);
        continue;
      }
      if (res.status >= 400) throw await graphError(res);
      return res;
    }
  }

  async json<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const res = await this.request(method, path, o);
    return (await res.json()) as T;
  }
}

function retryAfter(res: Response, attempt: number): number {
  const h = res.headers.get('retry-after');
  if (h !== null) {
    const s = Number(h);
    if (Number.isFinite(s)) return Math.max(0, s * 1000);
    const at = Date.parse(h);
    if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  }
  return Math.min(8000, 500 * 2 ** (attempt - 1));
}

async function graphError(res: Response): Promise<GraphError> {
  const text = await res.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  const e = (body as { error?: { code?: string; message?: string } })?.error;
  return new GraphError(res.status, e?.code ?? String(res.status), `${res.status} ${e?.code ?? ''}: ${firstLine(e?.message)}`.trim(), body);
}

function firstLine(s: string | undefined): string {
  return (s ?? '').split(/\r?\n/)[0]!.slice(0, 300);
}

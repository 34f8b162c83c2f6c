// Google Drive / Docs / Sheets / Slides clients for one DriveB connection, pointed at the service's
// configured endpoints (DRIVEB_API_URL, DRIVEB_TOKEN_URL) for every call:
// - the generated clients get the root both API-wide and per call (media uploads ignore the API-level
//   rootUrl unless it is passed with the call);
// - a service account's JWT token request goes to a URL hard-coded in the library: an interceptor on the
//   auth client's transporter (every request, API or token, goes through it) rewrites it, and refuses any
//   request for a host that is not configured;
// - resumable uploads are not in the generated client: they are made here with the auth client
//   (256 KiB-multiple chunks, 308 Resume Incomplete accepted, resume from the server's Range).
// Rate limits (403 userRateLimitExceeded / rateLimitExceeded, 429) and 5xx are retried with exponential
// back-off (Retry-After honoured); the generated clients' own retries are off so this is the one policy.
// An API call answered 401 (the access token expired early or was revoked) gets one fresh token and one
// more try: the auth clients refresh only a token they believe expired.
import type { docs_v1 } from '@googleapis/docs';
import type { drive_v3 } from '@googleapis/drive';
import type { sheets_v4 } from '@googleapis/sheets';
import type { slides_v1 } from '@googleapis/slides';
import { backoffMs, type ThrottleScope, ThrottledError, throttleWait } from '../throttle.ts';

const DEFAULT_THROTTLE_WAIT_MS = 600_000;

export const DRIVE_SCOPE = 'https://www.googleapis.com/auth/drive';
/** Google's own token URL: the JWT (service account) flow sends here whatever it is configured with. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const DEFAULT_API_ROOT = 'https://www.googleapis.com/';
/** Hosts of the Docs, Sheets and Slides APIs and of export links, when DRIVEB_API_URL is Google's own. */
const GOOGLE_HOSTS = ['docs.googleapis.com', 'sheets.googleapis.com', 'slides.googleapis.com', 'docs.google.com'];

export const UPLOAD_CHUNK = 256 * 1024;
/** Uploads above this size are resumable (Drive's advice: 5 MB). */
export const RESUMABLE_ABOVE = 5 * 1024 * 1024;
export const FILE_FIELDS = 'id,name,mimeType,parents,trashed,driveId,size,webViewLink,exportLinks,appProperties,createdTime';

export type GoogleCredentials =
  | { kind: 'oauth'; clientId: string; clientSecret: string; refreshToken: string }
  | { kind: 'serviceAccount'; clientEmail: string; privateKey: string; subject?: string };

export interface GoogleEndpoints {
  apiUrl: string;
  tokenUrl: string;
}

export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
  /** Throttling (429, 403 rate limits) is waited out, within this budget per step (DRIVE_THROTTLE_MAX_WAIT_MS)
   *  and the step's deadline, not counted as attempts (connectors/throttle.ts). */
  maxThrottleWaitMs?: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 400, maxMs: 8_000 };

/** A refusal by Google, in the terms docgen maps to its errors. `auth` = the token endpoint refused. */
export class GoogleApiError extends Error {
  override name = 'GoogleApiError';
  readonly status: number;
  readonly reason: string;
  readonly auth: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(status: number, reason: string, message: string, auth = false, retryAfterMs?: number) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.auth = auth;
    this.retryAfterMs = retryAfterMs;
  }
  /** Drive's throttling: 429, 403 userRateLimitExceeded / rateLimitExceeded. */
  get throttled(): boolean {
    if (this.auth) return false;
    return this.status === 429 || (this.status === 403 && (this.reason === 'userRateLimitExceeded' || this.reason === 'rateLimitExceeded'));
  }
  get retryable(): boolean {
    if (this.auth) return false;
    if (this.status === 429 || this.status >= 500 || this.status === 0) return true;
    return this.status === 403 && (this.reason === 'userRateLimitExceeded' || this.reason === 'rateLimitExceeded');
  }
}

/** Any error of the Google clients as a GoogleApiError (network failures: status 0, retryable). */
export function googleError(err: unknown): GoogleApiError {
  if (err instanceof GoogleApiError) return err;
  const e = err as { status?: number; code?: unknown; message?: string; response?: { status?: number; data?: unknown; headers?: unknown } };
  const status = e.response?.status ?? (typeof e.status === 'number' ? e.status : 0);
  let data = e.response?.data as unknown;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data) || typeof data === 'string') {
    // An error answer to a binary request arrives as bytes or text.
    try {
      data = JSON.parse(typeof data === 'string' ? data : Buffer.from(data as ArrayBuffer).toString('utf8'));
    } catch {
      data = undefined;
    }
  }
  if (data === undefined && e.response && typeof e.message === 'string' && e.message.startsWith('{')) {
    // To a streamed request gaxios keeps the error body only as the error's message.
    try {
      data = JSON.parse(e.message);
    } catch {
      data = undefined;
    }
  }
  const body = (data ?? {}) as { error?: unknown; error_description?: unknown };
  const headers = e.response?.headers as { get?: (n: string) => string | null } | Record<string, string> | undefined;
  const ra =
    headers && typeof (headers as { get?: unknown }).get === 'function'
      ? (headers as { get: (n: string) => string | null }).get('retry-after')
      : (headers as Record<string, string> | undefined)?.['retry-after'];
  const retryAfterMs = ra && /^\d+$/.test(ra) ? Number(ra) * 1000 : undefined;
  if (typeof body.error === 'string') {
    // The OAuth token endpoint: {error: 'invalid_grant', error_description}.
    return new GoogleApiError(
      status,
      body.error,
      `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`,
      true,
    );
  }
  const apiErr = body.error as { message?: string; errors?: { reason?: string }[]; status?: string } | undefined;
  if (apiErr)
    return new GoogleApiError(
      status,
      apiErr.errors?.[0]?.reason ?? apiErr.status ?? 'error',
      apiErr.message ?? `HTTP ${status}`,
      false,
      retryAfterMs,
    );
  if (status === 0 && e.message && /refused by docgen/.test(e.message)) return new GoogleApiError(0, 'hostNotAllowed', e.message, true);
  return new GoogleApiError(status, status ? `http${status}` : String(e.code ?? 'network'), e.message ?? String(err), false, retryAfterMs);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` until it succeeds or fails with something back-off cannot help. */
export async function withRetry<T>(policy: RetryPolicy, fn: () => Promise<T>): Promise<T> {
  const budget: ThrottleScope = { waited: 0 };
  for (let attempt = 1, throttled = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ThrottledError) throw err;
      const g = googleError(err);
      if (g.throttled) {
        // Wait what Retry-After says, else Drive's documented exponential back-off; nothing is sent
        // meanwhile, and past the step's budget or deadline a ThrottledError ends the step.
        await throttleWait(
          'DriveB (Google Drive)',
          g.retryAfterMs ?? backoffMs(++throttled),
          policy.maxThrottleWaitMs ?? DEFAULT_THROTTLE_WAIT_MS,
          budget,
        );
        attempt--;
        continue;
      }
      if (!g.retryable || attempt >= policy.attempts) throw g;
      const backoff = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
      await sleep(Math.max(g.retryAfterMs ?? 0, backoff / 2 + Math.random() * (backoff / 2)));
    }
  }
}

export interface GoogleClients {
  readonly apiRoot: string;
  readonly drive: drive_v3.Drive;
  readonly docs: docs_v1.Docs;
  readonly sheets: sheets_v4.Sheets;
  readonly slides: slides_v1.Slides;
  /** Per-call options of the generated clients: the root (again) and no retries of their own. */
  opts(api: 'drive' | 'docs' | 'sheets' | 'slides'): { rootUrl?: string; retry: false };
  /** One API call with the retry policy. */
  call<T>(fn: () => Promise<{ data: T }>): Promise<T>;
  /** A raw authorized request (export links, resumable uploads). */
  request<T>(opts: {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    data?: unknown;
    responseType?: 'json' | 'arraybuffer' | 'stream';
    validateStatus?: (s: number) => boolean;
  }): Promise<{ status: number; data: T; headers: Headers }>;
  retry: RetryPolicy;
  /** Access tokens renewed because an API call was answered 401 (for tests and logs). */
  readonly refreshes: number;
}

/** Time limit of one Google call (a 256 KiB-multiple chunk, an export, a metadata call). */
const REQUEST_TIMEOUT_MS = 120_000;

function normalizeRoot(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

/** Google's client libraries, loaded on first use: a process without DriveB connections never loads them
 *  (about 30 MB of a process's memory, docs/decisions/034-the-memory-of-docgen-start.md). */
const loadSdk = () =>
  Promise.all([
    import('@googleapis/docs'),
    import('@googleapis/drive'),
    import('@googleapis/sheets'),
    import('@googleapis/slides'),
    import('google-auth-library'),
  ]);
let sdk: ReturnType<typeof loadSdk> | undefined;
const googleSdk = () => (sdk ??= loadSdk());

export async function googleClients(
  endpoints: GoogleEndpoints,
  creds: GoogleCredentials,
  retry: RetryPolicy = DEFAULT_RETRY,
): Promise<GoogleClients> {
  const [{ docs: docsApi }, { drive: driveApi }, { sheets: sheetsApi }, { slides: slidesApi }, { JWT, OAuth2Client }] = await googleSdk();
  const apiRoot = normalizeRoot(endpoints.apiUrl);
  const googleRoot = apiRoot === DEFAULT_API_ROOT;
  const allowed = new Set([new URL(apiRoot).host, new URL(endpoints.tokenUrl).host, ...(googleRoot ? GOOGLE_HOSTS : [])]);
  const auth =
    creds.kind === 'oauth'
      ? new OAuth2Client({ clientId: creds.clientId, clientSecret: creds.clientSecret, endpoints: { oauth2TokenUrl: endpoints.tokenUrl } })
      : new JWT({
          email: creds.clientEmail,
          key: creds.privateKey,
          scopes: [DRIVE_SCOPE],
          ...(creds.subject ? { subject: creds.subject } : {}),
        });
  if (creds.kind === 'oauth') auth.setCredentials({ refresh_token: creds.refreshToken });
  auth.transporter.interceptors.request.add({
    resolved: async (o) => {
      const url = String(o.url);
      if (url === GOOGLE_TOKEN_URL && endpoints.tokenUrl !== GOOGLE_TOKEN_URL) {
        o.url = new URL(endpoints.tokenUrl);
        // The transport was chosen for Google's host (e.g. a proxy from HTTPS_PROXY): choose again.
        delete (o as { agent?: unknown }).agent;
      }
      const host = new URL(String(o.url)).host;
      if (!allowed.has(host))
        throw new Error(`request to ${host} refused by docgen: only DRIVEB_API_URL and DRIVEB_TOKEN_URL hosts are used`);
      // gaxios waits forever by default: a hung socket must fail the call (and be retried), not hold the step.
      if (!o.timeout) o.timeout = REQUEST_TIMEOUT_MS;
      return o;
    },
  });
  // The generated clients take the auth client of their own google-auth-library copy: same interface.
  const a = auth as never;
  // One fresh token and one more try when Google answers 401 to a token the auth client still trusts (its
  // expiry date has not come: revoked, or expired early). Marking the token expired makes the OAuth
  // client use its refresh token, and the service account's JWT client ask for a new token.
  let refreshes = 0;
  async function authorized<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const g = googleError(err);
      if (g.status !== 401 || g.auth) throw err;
      refreshes++;
      auth.credentials.expiry_date = 1;
      return fn();
    }
  }
  const drive = driveApi({ version: 'v3', auth: a, rootUrl: apiRoot });
  const docs = docsApi({ version: 'v1', auth: a, ...(googleRoot ? {} : { rootUrl: apiRoot }) });
  const sheets = sheetsApi({ version: 'v4', auth: a, ...(googleRoot ? {} : { rootUrl: apiRoot }) });
  const slides = slidesApi({ version: 'v1', auth: a, ...(googleRoot ? {} : { rootUrl: apiRoot }) });
  return {
    apiRoot,
    drive,
    docs,
    sheets,
    slides,
    retry,
    get refreshes() {
      return refreshes;
    },
    opts: (api) => ({ ...(api === 'drive' || !googleRoot ? { rootUrl: apiRoot } : {}), retry: false }),
    call: (fn) => authorized(() => withRetry(retry, async () => (await fn()).data)),
    request: (o) =>
      authorized(async () => {
        const res = await auth.request({ ...o, retry: false, maxRedirects: 0 } as never);
        return { status: res.status, data: res.data as never, headers: res.headers as unknown as Headers };
      }),
  };
}

/** A resumable upload's session expired twice before the file was complete. */
export class UploadSessionExpiredError extends Error {
  override name = 'UploadSessionExpiredError';
  constructor(offset: number, size: number) {
    super(
      `the DriveB upload session expired before the upload finished, twice (404 on its session URI after ${offset} of ${size} bytes): nothing was placed; send the request again`,
    );
  }
}

/** Uploads in 256 KiB-multiple chunks through a resumable session; resumes from the server's Range after a
 *  failed chunk. Returns the created File, or with `fileId` the file whose content it replaced. */
export async function resumableUpload(
  g: GoogleClients,
  meta: Record<string, unknown>,
  bytes: Uint8Array,
  contentType: string,
  chunkBytes = UPLOAD_CHUNK * 4,
  fileId?: string,
): Promise<drive_v3.Schema$File> {
  if (chunkBytes % UPLOAD_CHUNK !== 0) throw new Error('resumable chunks must be multiples of 256 KiB');
  const size = bytes.length;
  const begin = () =>
    withRetry(g.retry, () =>
      g.request<unknown>({
        url: `${g.apiRoot}upload/drive/v3/files${fileId ? `/${encodeURIComponent(fileId)}` : ''}?uploadType=resumable&supportsAllDrives=true&fields=${encodeURIComponent(FILE_FIELDS)}`,
        method: fileId ? 'PATCH' : 'POST',
        headers: {
          'content-type': 'application/json; charset=UTF-8',
          'x-upload-content-type': contentType,
          'x-upload-content-length': String(size),
        },
        data: meta,
      }),
    );
  const start = await begin();
  const first = start.headers.get('location');
  if (!first) throw new GoogleApiError(502, 'noSession', 'Drive did not return a resumable session URI');
  let session: string = first;
  const ok308 = (s: number) => s === 308 || (s >= 200 && s < 300);
  const nextOffset = (h: Headers): number => {
    const m = /bytes=0-(\d+)/.exec(h.get('range') ?? '');
    return m ? Number(m[1]) + 1 : 0;
  };
  let offset = 0;
  let throttled = 0;
  const budget: ThrottleScope = { waited: 0 };
  for (let failures = 0, renewed = 0; ;) {
    const end = Math.min(offset + chunkBytes, size);
    try {
      const res = await g.request<drive_v3.Schema$File>({
        url: session,
        method: 'PUT',
        headers: { 'content-range': size === 0 ? 'bytes */0' : `bytes ${offset}-${end - 1}/${size}` },
        data: Buffer.from(bytes.buffer, bytes.byteOffset + offset, end - offset),
        validateStatus: ok308,
      });
      if (res.status !== 308) return res.data;
      offset = nextOffset(res.headers);
    } catch (err) {
      if (err instanceof ThrottledError) throw err;
      const e = googleError(err);
      if ((e.status === 404 || e.status === 410) && !e.auth) {
        // The session expired half-way (Drive: "404 Not Found: the upload session has expired and the
        // upload must be restarted from the beginning"): a new session, the whole file again, once.
        if (++renewed > 1) throw new UploadSessionExpiredError(offset, size);
        const again = (await begin()).headers.get('location');
        if (!again) throw new GoogleApiError(502, 'noSession', 'Drive did not return a resumable session URI');
        session = again;
        offset = 0;
        continue;
      }
      if (e.throttled) {
        // A throttled chunk: the same policy as every other call (Retry-After or back-off, within budget).
        await throttleWait(
          'DriveB (Google Drive)',
          e.retryAfterMs ?? backoffMs(++throttled),
          g.retry.maxThrottleWaitMs ?? DEFAULT_THROTTLE_WAIT_MS,
          budget,
        );
      } else {
        if (!e.retryable || ++failures >= g.retry.attempts) throw e;
        await sleep(Math.min(g.retry.maxMs, g.retry.baseMs * 2 ** (failures - 1)));
      }
      // Ask where the session stands, then go on from there.
      const status = await withRetry(g.retry, () =>
        g.request<drive_v3.Schema$File>({
          url: session,
          method: 'PUT',
          headers: { 'content-range': `bytes */${size}` },
          validateStatus: ok308,
        }),
      );
      if (status.status !== 308) return status.data;
      offset = nextOffset(status.headers);
    }
  }
}

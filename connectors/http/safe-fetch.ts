// The one guarded HTTP client for everything that leaves the service (callbacks now; template url,
// GraphQL and images later). Every address is checked when the socket connects, after DNS resolution, so a
// name that resolves to a public address at validation time and to 127.0.0.1 at connect time (DNS
// rebinding) is still refused. Redirects are never followed blindly: by default the 3xx response is
// returned; with `redirect: 'follow'` every hop is checked again. Responses are capped in size and time.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { blockedReason, type OutboundPolicy } from './address-policy.ts';

export class OutboundBlockedError extends Error {
  override name = 'OutboundBlockedError';
  readonly code = 'EOUTBOUNDBLOCKED';
}

export class OutboundError extends Error {
  override name = 'OutboundError';
  /** EUNREACHABLE: the name did not resolve, or the connection failed (refused, reset, TLS...). */
  readonly code: 'ETIMEOUT' | 'ETOOLARGE' | 'EBADURL' | 'ETOOMANYREDIRECTS' | 'EUNREACHABLE';
  constructor(code: OutboundError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export interface SafeFetchOptions {
  policy: OutboundPolicy;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The whole exchange, connect to last byte (default 10 s). */
  timeoutMs?: number;
  /** Larger responses fail with ETOOLARGE (default 10 MiB). */
  maxResponseBytes?: number;
  /** `manual` (default) returns a 3xx as the response; `follow` re-checks and follows up to maxRedirects. */
  redirect?: 'manual' | 'follow';
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The URL that answered (differs from the request's after followed redirects). */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function safeFetch(url: string | URL, opts: SafeFetchOptions): Promise<SafeResponse> {
  let current = parseTarget(url);
  let method = (opts.method ?? 'GET').toUpperCase();
  let body = opts.body;
  let headers = { ...opts.headers };
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  const max = opts.maxRedirects ?? 5;
  for (let hop = 0; ; hop++) {
    const res = await requestOnce(current, { ...opts, method, headers, body, timeoutMs: Math.max(1, deadline - Date.now()) });
    const location = res.headers.location;
    if (opts.redirect !== 'follow' || !REDIRECTS.has(res.status) || !location) return res;
    if (hop >= max) throw new OutboundError('ETOOMANYREDIRECTS', `more than ${max} redirects from ${String(url)}`);
    const next = parseTarget(new URL(location, current));
    if (next.origin !== current.origin) {
      // Credentials were meant for the first origin only.
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^(authorization|cookie|proxy-authorization)$/i.test(k)));
    }
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !/^content-(type|length)$/i.test(k)));
    }
    current = next;
  }
}

function parseTarget(url: string | URL): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new OutboundError('EBADURL', `not a URL: ${String(url)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new OutboundError('EBADURL', `only http and https are allowed, not ${u.protocol}`);
  if (u.username || u.password) throw new OutboundError('EBADURL', 'credentials in the URL are not allowed');
  return u;
}

// Messages never name what a host name resolved to, nor tell "does not resolve" from "resolves to a
// refused address": either would let a tenant map internal DNS through a GraphQL endpoint, an image URL
// or a callback target (issue 11 §5). A literal address is the caller's own text, so its reason is given.

/** The message for a host name that resolves to a refused address or does not resolve at all. */
export function unreachableName(hostname: string): string {
  return `${hostname} is not reachable from this service (it must resolve to a public address, or be listed in OUTBOUND_ALLOW)`;
}

/** Refuses a blocked address unless the host name or the address is allow-listed. */
function check(policy: OutboundPolicy, hostname: string, address: string): void {
  if (policy.hostAllowed(hostname) || policy.addressAllowed(address)) return;
  const reason = blockedReason(address);
  if (!reason) return;
  throw new OutboundBlockedError(
    isIP(hostname)
      ? `${hostname} is not reachable from this service (${reason}); add it to OUTBOUND_ALLOW to permit it`
      : unreachableName(hostname),
  );
}

const DNS_FAILURES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'ENODATA', 'EAI_NONAME']);

/**
 * Whether the guarded client may reach this URL's host now: the same parsing, the same resolution
 * (dns.lookup, every address) and the same policy as a request makes when it connects. Throws
 * OutboundError EBADURL, OutboundBlockedError for a refused address, OutboundError EUNREACHABLE for a
 * name that does not resolve (with the same message as a refused one). For checking a target before
 * accepting work that will call it later (callbacks); the request itself checks again when it connects.
 */
export async function checkOutboundTarget(url: string | URL, policy: OutboundPolicy, timeoutMs = 5_000): Promise<void> {
  const target = parseTarget(url);
  const hostname = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(hostname)) return check(policy, hostname, hostname);
  if (policy.hostAllowed(hostname)) return;
  let timer: NodeJS.Timeout | undefined;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await Promise.race([
      dns.promises.lookup(hostname, { all: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('lookup timed out'), { code: 'EAI_AGAIN' })), timeoutMs);
      }),
    ]);
  } catch {
    throw new OutboundError('EUNREACHABLE', unreachableName(hostname));
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new OutboundError('EUNREACHABLE', unreachableName(hostname));
  for (const a of addresses) check(policy, hostname, a.address);
}

/** A network error as a message that names the host the caller gave and the error code, never an address. */
function networkError(url: URL, err: Error): Error {
  if (err instanceof OutboundBlockedError || err instanceof OutboundError || err.name === 'AbortError') return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code && DNS_FAILURES.has(code)) return new OutboundError('EUNREACHABLE', unreachableName(url.hostname.replace(/^\[|\]$/g, '')));
  return new OutboundError('EUNREACHABLE', `${url.host} could not be reached (${code ?? 'network error'})`);
}

/** A dns.lookup that refuses the connection when any resolved address is blocked. */
function guardedLookup(policy: OutboundPolicy, hostname: string): LookupFunction {
  return (host, options, callback) => {
    dns.lookup(host, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      try {
        if (addresses.length === 0) throw new OutboundError('EUNREACHABLE', unreachableName(hostname));
        for (const a of addresses) check(policy, hostname, a.address);
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      return callback(null, first?.address ?? '', first?.family ?? 4);
    });
  };
}

function requestOnce(url: URL, opts: SafeFetchOptions & { method: string; timeoutMs: number }): Promise<SafeResponse> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  // Literal addresses never reach the lookup function: check them here.
  if (isIP(hostname)) check(opts.policy, hostname, hostname);
  const limit = opts.maxResponseBytes ?? 10 * 1024 * 1024;
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<SafeResponse>((resolve, reject) => {
    const headers: Record<string, string> = { 'user-agent': 'docgen', ...opts.headers };
    if (opts.body !== undefined) headers['content-length'] = String(Buffer.byteLength(opts.body));
    const req = mod.request(url, {
      method: opts.method,
      headers,
      agent: false,
      lookup: guardedLookup(opts.policy, hostname),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new OutboundError('ETIMEOUT', `${url.origin} did not answer within ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    req.on('error', (err) => fail(networkError(url, err)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) fail(new OutboundError('ETOOLARGE', `the response of ${url.origin} exceeds ${limit} bytes`));
        else chunks.push(chunk);
      });
      res.on('error', fail);
      res.on('close', () => fail(new Error(`${url.origin} closed the connection before the response ended`)));
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), url: url.toString() });
      });
    });
    req.end(opts.body);
  });
}

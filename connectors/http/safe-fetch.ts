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
  readonly code: 'ETIMEOUT' | 'ETOOLARGE' | 'EBADURL' | 'ETOOMANYREDIRECTS';
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
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OutboundError('EBADURL', `only http and https are allowed, not ${u.protocol}`);
  if (u.username || u.password) throw new OutboundError('EBADURL', 'credentials in the URL are not allowed');
  return u;
}

/** Refuses a blocked address unless the host name or the address is allow-listed. */
function check(policy: OutboundPolicy, hostname: string, address: string): void {
  if (policy.hostAllowed(hostname) || policy.addressAllowed(address)) return;
  const reason = blockedReason(address);
  if (reason) throw new OutboundBlockedError(`${hostname} -> ${address} is not reachable from this service (${reason}); add it to OUTBOUND_ALLOW to permit it`);
}

/** A dns.lookup that refuses the connection when any resolved address is blocked. */
function guardedLookup(policy: OutboundPolicy, hostname: string): LookupFunction {
  return (host, options, callback) => {
    dns.lookup(host, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      try {
        if (addresses.length === 0) throw new OutboundBlockedError(`${host} resolved to no address`);
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
    const timer = setTimeout(() => fail(new OutboundError('ETIMEOUT', `${url.origin} did not answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('error', fail);
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

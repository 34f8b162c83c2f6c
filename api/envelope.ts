// The success and error envelopes of spec 2.1. Every response of the /v1 API (except folders) goes
// through these two functions, so `origin`, `operationId` and `externalContext` are always right.
import type { FastifyRequest } from 'fastify';
import { type Consumption, type EnvelopeTail, errorEnvelope, type SuccessEnvelope, successEnvelope } from '../core/envelope.ts';
import type { InnerError } from '../core/errors.ts';

export interface RequestContext {
  operationId: string;
  userId?: string;
  subscriptionId?: string;
  externalContext?: Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
}

/**
 * Query parameter names that carry a credential, compared after `keyLikeName`: the API key under the name
 * the service reads (`apiKey`, spec 5.1) and the spellings clients send by mistake (`api_key`, `apiKey[]`,
 * `x-api-key`, `key`, `token`, `access_token`...). The service refuses those, but a refused request is
 * echoed (`origin` of the 401) and logged like any other, so they are removed as well.
 */
const KEY_LIKE = new Set(['apikey', 'xapikey', 'key', 'apitoken', 'token', 'accesstoken', 'authorization']);

/** A query parameter's name reduced to what matters: percent-decoded (twice-encoded too), lower case,
 *  without bracket suffixes (`[]`, `[0]`) and without separators (`_`, `-`, `.`, spaces). */
function keyLikeName(raw: string): string {
  let name = raw.replace(/\+/g, ' ');
  for (let i = 0; i < 3 && name.includes('%'); i++) {
    try {
      name = decodeURIComponent(name);
    } catch {
      break;
    }
  }
  return name
    .toLowerCase()
    .replace(/\[[^\]]*\]/g, '')
    .replace(/[^a-z0-9]/g, '');
}

/**
 * A request URL (path and query) without credentials: `?apiKey=` is a documented way to send the key, and
 * the key must never leave the process (issue 11 §3), so every URL that is echoed (`origin`), stored
 * (workflow inputs, the callback body) or logged goes through here. Every key-like parameter is dropped
 * (KEY_LIKE, however spelled: `apiKey`, `APIKEY`, `api%4Bey`, `api_key`, `apiKey[]`...); the rest of the
 * query is kept byte for byte.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((pair) => !KEY_LIKE.has(keyLikeName(pair.split('=', 1)[0] ?? '')));
  return kept.length === 0 || (kept.length === 1 && kept[0] === '') ? url.slice(0, q) : `${url.slice(0, q)}?${kept.join('&')}`;
}

/** METHOD followed by the full URL of the operation, e.g. `POST http://127.0.0.1:8080/v1/documents/...`,
 *  without the API key. */
export function origin(request: FastifyRequest): string {
  return `${request.method} ${request.protocol}://${request.host}${redactUrl(request.url)}`;
}

function tail(request: FastifyRequest): EnvelopeTail {
  return {
    ...(request.ctx.externalContext !== undefined ? { externalContext: request.ctx.externalContext } : {}),
    origin: origin(request),
    dateTime: new Date().toISOString(),
    operationId: request.ctx.operationId,
    ...(request.ctx.userId ? { userId: request.ctx.userId } : {}),
  };
}

export function success<D extends object>(request: FastifyRequest, statusCode: 200 | 201, data: D): SuccessEnvelope<D> {
  return successEnvelope(statusCode, data, tail(request));
}

/** The success envelope of an operation that meters (generate, manage), with its consumption. */
export function metered<D extends object>(
  request: FastifyRequest,
  data: D,
  consumption: Consumption[],
): SuccessEnvelope<D> & { consumption: Consumption[] } {
  return { ...successEnvelope(201, data, tail(request)), consumption };
}

export function failure(request: FastifyRequest, statusCode: number, message: string, innerErrors: InnerError[]): Record<string, unknown> {
  return errorEnvelope(statusCode, message, innerErrors, tail(request));
}

/** Remembers the caller's externalContext as soon as the body is parsed, so even a failure echoes it. */
export function captureExternalContext(request: FastifyRequest): void {
  const context = isObject(request.body) ? request.body.externalContext : undefined;
  if (isObject(context)) request.ctx.externalContext = context;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// The success and error envelopes of spec 2.1. Every response of the /v1 API (except folders) goes
// through these two functions, so `origin`, `operationId` and `externalContext` are always right.
import type { FastifyRequest } from 'fastify';
import { type Consumption, type EnvelopeTail, errorEnvelope, successEnvelope } from '../core/envelope.ts';
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

/** The query parameter that may carry the API key (spec 5.1), compared as the query parser sees it. */
const API_KEY_PARAM = 'apikey';

/**
 * A request URL (path and query) without the API key: `?apiKey=` is a documented way to send it, and the
 * key must never leave the process (issue 11 §3), so every URL that is echoed (`origin`), stored (workflow
 * inputs, the callback body) or logged goes through here. The parameter name is compared decoded and in
 * any case (`apiKey`, `APIKEY`, `api%4Bey` are all dropped); the rest of the query is kept byte for byte.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const kept = url
    .slice(q + 1)
    .split('&')
    .filter((pair) => {
      const rawName = pair.split('=', 1)[0] ?? '';
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return name.trim().toLowerCase() !== API_KEY_PARAM;
    });
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

export function success(request: FastifyRequest, statusCode: 200 | 201, data: Record<string, unknown>, extra: { consumption?: Consumption[] } = {}): Record<string, unknown> {
  return successEnvelope(statusCode, data, tail(request), extra);
}

export function failure(request: FastifyRequest, statusCode: number, message: string, innerErrors: InnerError[]): Record<string, unknown> {
  return errorEnvelope(statusCode, message, innerErrors, tail(request));
}

/** Remembers the caller's externalContext as soon as the body is parsed, so even a failure echoes it. */
export function captureExternalContext(request: FastifyRequest): void {
  const body = request.body as { externalContext?: unknown } | undefined;
  if (body && typeof body === 'object' && body.externalContext !== null && typeof body.externalContext === 'object' && !Array.isArray(body.externalContext)) {
    request.ctx.externalContext = body.externalContext as Record<string, unknown>;
  }
}

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

/** METHOD followed by the full URL of the operation, e.g. `POST http://127.0.0.1:8080/v1/documents/...`. */
export function origin(request: FastifyRequest): string {
  return `${request.method} ${request.protocol}://${request.host}${request.url}`;
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

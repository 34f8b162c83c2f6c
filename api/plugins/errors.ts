// Maps every failure to the spec's error envelope: our ApiErrors, schema validation errors (naming the
// field), malformed bodies, unknown routes, and anything unexpected (500 with an eventId, details logged).
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, errorRegistry, type InnerError, innerError } from '../../core/errors.ts';
import { failure } from '../envelope.ts';

interface AjvError {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
}

/** `body/document/locale must have required property` -> `document.locale is required`. */
export function describeValidation(err: AjvError, context: string | undefined): string {
  const base = (err.instancePath ?? '').split('/').filter(Boolean).join('.');
  const join = (leaf: string) => [base, leaf].filter(Boolean).join('.');
  const where = context && context !== 'body' ? `${context} ` : '';
  switch (err.keyword) {
    case 'required':
      return `${where}${join(String(err.params?.missingProperty))} is required`;
    case 'additionalProperties':
      return `${where}${join(String(err.params?.additionalProperty))} is not a known property`;
    case 'type':
      return `${where}${base || 'body'} must be ${err.params?.type === 'object' ? 'an object' : `of type ${String(err.params?.type)}`}`;
    case 'enum':
      return `${where}${base} must be one of ${(err.params?.allowedValues as unknown[] | undefined)?.join(', ') ?? ''}`;
    default:
      return `${where}${base || 'body'} ${err.message ?? 'is invalid'}`;
  }
}

export function sendError(request: FastifyRequest, reply: FastifyReply, status: number, message: string, inner: InnerError[]) {
  return reply.code(status).type('application/json').send(failure(request, status, message, inner));
}

/** Logs an unexpected failure with the details the caller never sees; the eventId it returns goes into
 *  the 500 answer so a report can be matched to the log line. */
export function logUnexpected(request: FastifyRequest, error: unknown): string {
  const eventId = randomUUID();
  request.log.error({ err: error, eventId }, 'unexpected error');
  return eventId;
}

export default fp(async function errorsPlugin(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError | ApiError | Error, request, reply) => {
    if (error instanceof ApiError) {
      return sendError(request, reply, error.status, error.message, error.innerErrors);
    }
    const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fe.validation) {
      const inner = fe.validation.map((v) => innerError('VALIDATION_ERROR', describeValidation(v, fe.validationContext)));
      return sendError(request, reply, 400, inner.map((i) => i.message).join('; '), inner);
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error instanceof SyntaxError) {
      const msg = 'body: the request body is not valid JSON';
      return sendError(request, reply, 400, msg, [innerError('VALIDATION_ERROR', msg)]);
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const msg = `content-type ${request.headers['content-type'] ?? '(none)'} is not accepted by this operation`;
      return reply.code(415).send(failure(request, 415, msg, [innerError('VALIDATION_ERROR', msg)]));
    }
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const msg = 'body: the request body is too large';
      return reply.code(413).send(failure(request, 413, msg, [innerError('FILE_TOO_LARGE', msg)]));
    }
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      const inner = innerError('VALIDATION_ERROR', fe.message);
      return sendError(request, reply, fe.statusCode, fe.message, [inner]);
    }
    const eventId = logUnexpected(request, error);
    const spec = errorRegistry.FUNCTION_EXECUTION_ERROR;
    return sendError(request, reply, 500, spec.message, [innerError('FUNCTION_EXECUTION_ERROR', spec.message, eventId)]);
  });

  app.setNotFoundHandler((request, reply) => {
    const msg = `${request.method} ${request.url.split('?')[0]} is not an operation of this API`;
    return sendError(request, reply, 404, msg, [innerError('ROUTE_NOT_FOUND', msg)]);
  });
});

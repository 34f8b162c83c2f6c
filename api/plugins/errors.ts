// Maps every failure to the spec's error envelope: our ApiErrors, schema validation errors (naming the
// field), malformed bodies, unknown routes, and anything unexpected (500 with an eventId, details logged).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, errorRegistry, type InnerError, innerError } from '../../core/errors.ts';
import { failure } from '../envelope.ts';
import { ErrorEnvelope, RETRY_AFTER, TOO_MANY_REQUESTS } from '../schemas/envelopes.ts';

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

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  inner: InnerError[],
  external: unknown[] = [],
) {
  const body = failure(request, status, message, inner);
  // An external location's own errors (manage's error.externalErrors; other operations' schemas drop them).
  if (external.length > 0) (body.error as Record<string, unknown>).externalErrors = external;
  return reply.code(status).type('application/json').send(body);
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
    // A request no route took (an undeclared method such as QUERY with a body, an unknown path) failed
    // while its body was read: what matters is that no operation exists, not what was wrong with the body.
    if (request.is404) return notFound(request, reply);
    if (error instanceof ApiError) {
      if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
      return sendError(request, reply, error.status, error.message, error.innerErrors, error.externalErrors);
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

  // Every route's path as a pattern, so that a known path asked with an undeclared method is a 405 with
  // Allow (RFC 9110 15.5.6), not a 404.
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook('onRoute', (route) => {
    // Every documented operation can answer 400 (a malformed URL, a NUL character, an invalid body), 431
    // (a URL or headers over the server's limit) and 429 (a rate limit, api/plugins/rate-limit.ts, with
    // Retry-After): say so in its OpenAPI responses. A 429 comes before the operation, like a 401, so it
    // has the body the route gives a 401 (manage's own envelope), else the error envelope.
    const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
    if (schema?.response && !schema.hide) {
      for (const status of [400, 431]) if (!(status in schema.response)) schema.response[status] = ErrorEnvelope;
      if (!(429 in schema.response)) schema.response[429] = tooManyRequests(schema.response[401] ?? ErrorEnvelope);
    }
    const pattern = new RegExp(
      `^${route.url
        .replace(/\/+$/, '')
        .split('/')
        .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')}/?$`,
    );
    for (const method of Array.isArray(route.method) ? route.method : [route.method])
      routes.push({ method: method.toUpperCase(), pattern });
  });
  const allowedMethods = (path: string) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))].sort();

  app.setNotFoundHandler((request, reply) => notFound(request, reply));

  function notFound(request: FastifyRequest, reply: FastifyReply) {
    const path = request.url.split('?')[0] ?? '';
    const allow = allowedMethods(path);
    if (allow.length > 0) {
      const msg = `${request.method} is not allowed on ${path}: use ${allow.join(', ')}`;
      void reply.header('allow', allow.join(', '));
      return sendError(request, reply, 405, msg, [innerError('METHOD_NOT_ALLOWED', msg)]);
    }
    const msg = `${request.method} ${path} is not an operation of this API`;
    return sendError(request, reply, 404, msg, [innerError('ROUTE_NOT_FOUND', msg)]);
  }
});

/** The 429 response of an operation: its error body and the Retry-After header (OpenAPI `headers`, which
 *  @fastify/swagger reads from the response schema). */
function tooManyRequests(body: unknown): Record<string, unknown> {
  return { ...(body as Record<string, unknown>), description: TOO_MANY_REQUESTS, headers: { 'Retry-After': RETRY_AFTER } };
}

/**
 * Fastify's clientErrorHandler: a request the HTTP parser refused before any route or hook could see it
 * (headers or URL over the size limit: 431; a read timeout: 408; anything else unparseable: 400),
 * answered in the error envelope like every other failure. The URL is unknown at this point, so origin
 * is empty.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request line and headers exceed the size limit of this server (shorten the URL or the headers)']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request was not received in time']
        : [400, 'the request is not valid HTTP'];
  const inner = innerError('VALIDATION_ERROR', message);
  const body = JSON.stringify({
    error: { statusCode: status, message, innerErrors: [inner] },
    origin: '',
    dateTime: new Date().toISOString(),
    operationId: randomUUID(),
  });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

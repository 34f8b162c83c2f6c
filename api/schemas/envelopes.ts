// The spec's envelopes (2.1) as response schemas shared by every route. They drive serialization and the
// OpenAPI document, so a field missing here is missing from the response: keep them exact.
import Type, { type TSchema } from 'typebox';
import { errorRegistry, RETRYABLE_CODES } from '../../core/errors.ts';
import { component, stringEnum } from './components.ts';

export const ExternalContext = component(
  'ExternalContext',
  Type.Object(
    {},
    {
      additionalProperties: true,
      description: 'Any JSON object; echoed unchanged in the answer (and in the callback) when sent in the request',
    },
  ),
);

export const Consumption = component(
  'Consumption',
  Type.Array(Type.Object({ dimension: Type.String({ examples: ['pages-generated'] }), value: Type.Integer({ examples: [1] }) }), {
    description: 'Metered dimensions: pages-generated, documents-generated (generate); pages-managed, documents-managed (manage)',
  }),
);

/** The fields every envelope ends with (spec 2.1). */
export const envelopeTail = {
  externalContext: Type.Optional(ExternalContext),
  origin: Type.String({
    description: 'METHOD followed by the full URL of the operation',
    examples: ['POST http://127.0.0.1:8080/v1/documents/document/generate'],
  }),
  dateTime: Type.String({ format: 'date-time' }),
  operationId: Type.String({
    format: 'uuid',
    description: 'Also in the x-operation-id response header; quote it when reporting a problem',
  }),
  userId: Type.Optional(Type.String({ format: 'uuid' })),
};

const resultOf = <T extends TSchema>(data: T) =>
  Type.Object({
    statusCode: Type.Integer({ description: 'The HTTP status', examples: [200] }),
    message: Type.String({ examples: ['OK'] }),
    data,
  });

/** `{result: {statusCode, message, data}, externalContext?, origin, dateTime, operationId, userId?}`. */
export function successEnvelope<T extends TSchema>(data: T, options: { examples?: unknown[] } = {}) {
  return Type.Object({ result: resultOf(data), ...envelopeTail }, options);
}

/** The success envelope of an operation that meters (generate), with `consumption`. */
export function meteredEnvelope<T extends TSchema>(data: T, options: { examples?: unknown[] } = {}) {
  return Type.Object({ result: resultOf(data), consumption: Consumption, ...envelopeTail }, options);
}

export const InnerError = component(
  'InnerError',
  Type.Object({
    code: stringEnum(Object.keys(errorRegistry), {
      description: `Machine identifier (core/errors.ts). The same request sent again later can succeed for ${RETRYABLE_CODES.join(', ')}; for the others it must change.`,
      examples: ['VALIDATION_ERROR'],
    }),
    message: Type.String({ description: 'What went wrong, naming the field', examples: ['document.locale is required'] }),
    userMessage: Type.String({ description: 'The same, for showing to a user', examples: ['document.locale is required'] }),
    eventId: Type.Optional(Type.String({ description: 'On 500: quote it when reporting the failure (the service log has the details)' })),
  }),
);

export const ErrorEnvelope = component(
  'ErrorEnvelope',
  Type.Object(
    {
      error: Type.Object({
        statusCode: Type.Integer({ examples: [400] }),
        message: Type.String({ description: "The inner errors' messages joined", examples: ['document.locale is required'] }),
        innerErrors: Type.Array(InnerError),
      }),
      ...envelopeTail,
    },
    { description: 'Every failure (spec 2.1): a code and a message per problem' },
  ),
);

/** The error envelope as the answer of each of `statuses`. */
export function errorResponses<const S extends readonly number[]>(...statuses: S): { [K in S[number]]: typeof ErrorEnvelope } {
  return Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope])) as { [K in S[number]]: typeof ErrorEnvelope };
}

/** The 429 of every operation (added by plugins/errors.ts), with Retry-After. */
export const TOO_MANY_REQUESTS =
  'TOO_MANY_REQUESTS: the subscription sent more than RATE_LIMIT_PER_MINUTE requests per minute (bursts of RATE_LIMIT_BURST, all its API keys together); or, from one client address, more than AUTH_FAILURES_PER_MINUTE failed authentications (AUTH_FAILURES_BURST), or more than RATE_LIMIT_PER_MINUTE requests to the routes that need no credentials. Retry after Retry-After seconds.';
export const RETRY_AFTER = { type: 'integer', minimum: 1, description: 'Whole seconds until one request is allowed again' };

export const BareError = component(
  'BareError',
  Type.Object(
    {
      code: Type.String({ examples: ['NOT_FOUND_BY_ID'] }),
      message: Type.String(),
      eventId: Type.Optional(Type.String({ description: 'On 500 only; quote it when reporting the failure' })),
    },
    { description: 'Bare error body, as the spec documents for configuration get and list (no envelope)' },
  ),
);

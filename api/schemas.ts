// Response schemas shared by routes: the spec's envelopes (2.1). They drive serialization and the OpenAPI
// document, so a field missing here is missing from the response: keep them exact.
import Type, { type TSchema } from 'typebox';
import { errorRegistry, RETRYABLE_CODES } from '../core/errors.ts';

export const ExternalContext = Type.Object({}, { additionalProperties: true, description: 'Echoed unchanged when sent in the request' });

const Consumption = Type.Array(Type.Object({ dimension: Type.String(), value: Type.Integer() }), {
  description: 'Metered dimensions: pages-generated, documents-generated (generate); pages-managed, documents-managed (manage)',
});

const common = {
  externalContext: Type.Optional(ExternalContext),
  origin: Type.String({ description: 'METHOD followed by the full URL of the operation' }),
  dateTime: Type.String({ format: 'date-time' }),
  operationId: Type.String(),
  userId: Type.Optional(Type.String({ format: 'uuid' })),
};

export function successEnvelope(data: TSchema, opts: { consumption?: boolean } = {}) {
  return Type.Object({
    result: Type.Object({ statusCode: Type.Integer(), message: Type.String(), data }),
    ...(opts.consumption ? { consumption: Consumption } : {}),
    ...common,
  });
}

const InnerError = Type.Object({
  code: Type.String({ description: `Machine identifier: ${Object.keys(errorRegistry).join(', ')}. The same request sent again later can succeed for ${RETRYABLE_CODES.join(', ')}; for the others it must change.` }),
  message: Type.String(),
  userMessage: Type.String(),
  eventId: Type.Optional(Type.String()),
});

export const ErrorEnvelope = Type.Object({
  error: Type.Object({ statusCode: Type.Integer(), message: Type.String(), innerErrors: Type.Array(InnerError) }),
  ...common,
});

export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of statuses) out[s] = ErrorEnvelope;
  return out;
}

// The response envelopes of spec 2.1, as plain data: the API renders every answer with them, and the async
// generate workflow builds its callback body (the same 201 body, or the error envelope) with them.
import type { InnerError } from './errors.ts';

export interface Consumption {
  dimension: string;
  value: number;
}

/** What one generate meters (spec: pages-generated, documents-generated). */
export function generatedConsumption(pages: number): Consumption[] {
  return [
    { dimension: 'pages-generated', value: pages },
    { dimension: 'documents-generated', value: 1 },
  ];
}

/** What one manage meters (spec: pages-managed, documents-managed). */
export function managedConsumption(pages: number): Consumption[] {
  return [
    { dimension: 'pages-managed', value: pages },
    { dimension: 'documents-managed', value: 1 },
  ];
}

/** The fields every envelope ends with. */
export interface EnvelopeTail {
  externalContext?: Record<string, unknown>;
  /** METHOD followed by the full URL of the operation (never carrying the API key). */
  origin: string;
  dateTime: string;
  operationId: string;
  userId?: string;
}

function tail(t: EnvelopeTail): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (t.externalContext !== undefined) out.externalContext = t.externalContext;
  out.origin = t.origin;
  out.dateTime = t.dateTime;
  out.operationId = t.operationId;
  if (t.userId) out.userId = t.userId;
  return out;
}

export function successEnvelope(
  statusCode: 200 | 201,
  data: Record<string, unknown>,
  t: EnvelopeTail,
  extra: { consumption?: Consumption[] } = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = { result: { statusCode, message: statusCode === 201 ? 'Created' : 'OK', data } };
  if (extra.consumption) body.consumption = extra.consumption;
  return { ...body, ...tail(t) };
}

export function errorEnvelope(statusCode: number, message: string, innerErrors: InnerError[], t: EnvelopeTail): Record<string, unknown> {
  return { error: { statusCode, message, innerErrors }, ...tail(t) };
}

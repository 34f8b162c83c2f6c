// The response envelopes of spec 2.1, as plain data: the API renders every answer with them, and the async
// generate workflow builds its callback body (the same 201 body, or the error envelope) with them.
import type { InnerError } from './errors.ts';
import type { GenerateResult } from './generate.ts';

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

/** result.data of a generate's 201, and of the async generate's callback on success: the document, and the
 *  tags that rendered empty for want of data when there are any (extension). */
export function generatedData(result: GenerateResult) {
  const { warnings, warningsOmitted } = result;
  return {
    document: { ...result.document, documentGuid: result.documentGuid },
    ...(warnings?.length ? { warnings } : {}),
    ...(warningsOmitted ? { warningsOmitted } : {}),
  };
}

/** What one manage meters (spec: pages-managed, documents-managed). */
export function managedConsumption(pages: number): Consumption[] {
  return [
    { dimension: 'pages-managed', value: pages },
    { dimension: 'documents-managed', value: 1 },
  ];
}

/** The fields every envelope ends with. */
export type EnvelopeTail = {
  externalContext?: Record<string, unknown>;
  /** METHOD followed by the full URL of the operation (never carrying the API key). */
  origin: string;
  dateTime: string;
  operationId: string;
  userId?: string;
};

function tail(t: EnvelopeTail): EnvelopeTail {
  return {
    ...(t.externalContext !== undefined ? { externalContext: t.externalContext } : {}),
    origin: t.origin,
    dateTime: t.dateTime,
    operationId: t.operationId,
    ...(t.userId ? { userId: t.userId } : {}),
  };
}

export type SuccessEnvelope<D> = EnvelopeTail & {
  result: { statusCode: 200 | 201; message: 'OK' | 'Created'; data: D };
  consumption?: Consumption[];
};

export type ErrorEnvelope = EnvelopeTail & {
  error: { statusCode: number; message: string; innerErrors: InnerError[] };
};

export function successEnvelope<D>(
  statusCode: 200 | 201,
  data: D,
  t: EnvelopeTail,
  extra: { consumption?: Consumption[] } = {},
): SuccessEnvelope<D> {
  return {
    result: { statusCode, message: statusCode === 201 ? 'Created' : 'OK', data },
    ...(extra.consumption ? { consumption: extra.consumption } : {}),
    ...tail(t),
  };
}

export function errorEnvelope(statusCode: number, message: string, innerErrors: InnerError[], t: EnvelopeTail): ErrorEnvelope {
  return { error: { statusCode, message, innerErrors }, ...tail(t) };
}

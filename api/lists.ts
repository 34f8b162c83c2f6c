// The list parameters of spec 4.9 (top, skip, orderby, filter) parsed against a resource's column
// whitelist (their schema is in api/schemas/records.ts), plus the few helpers the record routes (4.3-4.7)
// share. Column names from the client are only ever compared with the whitelist; the SQL comes from
// store/records.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode, errorRegistry, innerError } from '../core/errors.ts';
import { type ColumnSpec, CONDITIONS, type Condition, type FilterClause, type ListQuery } from '../store/records/list.ts';
import { describeValidation, logUnexpected } from './plugins/errors.ts';

export const DEFAULT_TOP = 100;
export const MAX_TOP = 1000;
export const MAX_SKIP = 1_000_000_000;

export const TEXT_CONDITIONS: readonly Condition[] = CONDITIONS;
export const DATE_CONDITIONS: readonly Condition[] = ['EQUALS', 'NOT_EQUALS', 'GREATER_THAN', 'LESS_THAN'];
export const BOOLEAN_CONDITIONS: readonly Condition[] = ['EQUALS', 'NOT_EQUALS'];

const invalid = (message: string) => new ApiError('VALIDATION_ERROR', message);
/** Echo a client string in an error message without letting it grow the message unboundedly. */
const quote = (s: unknown) => JSON.stringify(String(s).slice(0, 80));

function findColumn(columns: readonly ColumnSpec[], name: unknown, where: string): ColumnSpec {
  const c = typeof name === 'string' ? columns.find((x) => x.name.toLowerCase() === name.trim().toLowerCase()) : undefined;
  if (!c) throw invalid(`${where}: unknown column ${quote(name)}; known columns: ${columns.map((x) => x.name).join(', ')}`);
  return c;
}

function parseFilter(raw: string, columns: readonly ColumnSpec[]): FilterClause[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    // Clients sometimes encode the JSON once more than the query string needs.
    try {
      parsed = JSON.parse(decodeURIComponent(raw));
    } catch {
      throw invalid('filter: not a JSON array of clauses {key, column, type, condition, value}');
    }
  }
  if (!Array.isArray(parsed)) throw invalid('filter: must be a JSON array of clauses {key, column, type, condition, value}');
  if (parsed.length > 20) throw invalid('filter: at most 20 clauses');
  return parsed.map((clause: unknown, i): FilterClause => {
    const where = `filter[${i}]`;
    if (!clause || typeof clause !== 'object' || Array.isArray(clause))
      throw invalid(`${where}: must be an object {key, column, type, condition, value}`);
    const c = clause as Record<string, unknown>;
    const column = findColumn(columns, c.column, `${where}.column`);
    const condition = typeof c.condition === 'string' ? (c.condition.trim().toUpperCase() as Condition) : undefined;
    const allowed = column.type === 'date' ? DATE_CONDITIONS : column.type === 'boolean' ? BOOLEAN_CONDITIONS : TEXT_CONDITIONS;
    if (!condition || !allowed.includes(condition)) {
      throw invalid(
        `${where}.condition: ${quote(c.condition)} is not supported for ${column.type} column ${column.name}; use one of ${allowed.join(', ')}`,
      );
    }
    const value = c.value;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw invalid(`${where}.value: must be a string, number or boolean`);
    }
    if (column.type === 'date' && (typeof value !== 'string' || Number.isNaN(Date.parse(value)))) {
      throw invalid(`${where}.value: ${quote(value)} is not an ISO 8601 date for column ${column.name}`);
    }
    if (column.type === 'boolean' && !['true', 'false'].includes(String(value).toLowerCase())) {
      throw invalid(`${where}.value: column ${column.name} takes true or false`);
    }
    if (String(value).length > 1000) throw invalid(`${where}.value: at most 1000 characters`);
    return { column: column.name, condition, value: typeof value === 'boolean' ? value : String(value) };
  });
}

/** The schema has already checked the range, but its string-to-number coercion turns `1e309` into
 *  Infinity, which passes; only a safe integer in range may reach SQL LIMIT/OFFSET. */
export function pageNumber(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

export function parseList(
  query: { top?: number; skip?: number; orderby?: string; filter?: string },
  columns: readonly ColumnSpec[],
): ListQuery {
  const out: ListQuery = {
    top: pageNumber('top', query.top, DEFAULT_TOP, 1, MAX_TOP),
    skip: pageNumber('skip', query.skip, 0, 0, MAX_SKIP),
    filters: [],
  };
  if (query.orderby !== undefined && query.orderby.trim() !== '') {
    const parts = query.orderby.split('|');
    if (parts.length > 2) throw invalid(`orderby: expected Column|DIRECTION, got ${quote(query.orderby)}`);
    const column = findColumn(columns, parts[0], 'orderby');
    const dir = (parts[1] ?? 'ASC').trim().toUpperCase();
    if (dir !== 'ASC' && dir !== 'DESC') throw invalid(`orderby: direction ${quote(parts[1])} must be ASC or DESC`);
    out.orderBy = { column: column.name, direction: dir };
  }
  if (query.filter !== undefined && query.filter.trim() !== '') out.filters = parseFilter(query.filter, columns);
  return out;
}

export function requireName(name: unknown, where: string): string {
  if (typeof name !== 'string' || name.trim() === '') throw new ApiError('DATA_NAME_REQUIRED', `${where}name is required`);
  return name.trim();
}

/** Comma-separated e-mail addresses, or empty. */
export function checkEmailList(value: string | undefined, field: string): string {
  const v = value ?? '';
  if (v.trim() === '') return '';
  const bad = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => !/^[^@\s,]+@[^@\s,]+$/.test(s));
  if (bad.length > 0) throw invalid(`${field}: ${quote(bad[0])} is not an e-mail address (expected comma-separated addresses)`);
  return v;
}

function isUnexpected(error: FastifyError | Error): boolean {
  if (error instanceof ApiError) return false;
  const fe = error as FastifyError & { validation?: unknown };
  if (fe.validation) return false;
  if (fe.code?.startsWith('FST_ERR_CTP_')) return false;
  return !(typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500);
}

/**
 * Route-level error handler: an unexpected failure answers 500 with the area's code (spec 7:
 * GET_DATA_SOURCE_ERROR for record operations, CREATE_*_ERROR for creates) and an eventId; everything
 * else is rethrown to the API-wide handler, which renders the error envelope.
 */
export function unexpectedAs(code: ErrorCode) {
  return function handler(error: FastifyError | Error, request: FastifyRequest, _reply: FastifyReply) {
    if (!isUnexpected(error)) throw error;
    const eventId = logUnexpected(request, error);
    throw new ApiError(code, undefined, [innerError(code, errorRegistry[code].message, eventId)]);
  };
}

/**
 * The configuration get and list failures as the spec documents them: a bare `{code, message}` body
 * (`eventId` added for 500) instead of the error envelope. Credential failures (401/403) and rate limits
 * (429) happen before the operation and keep the envelope, as everywhere else.
 */
export function bareErrors(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof ApiError) {
    if (error.code === 'UNAUTHORIZED' || error.code === 'AUTHORIZATION_ERROR' || error.code === 'TOO_MANY_REQUESTS') throw error;
    reply.code(error.status).send({ code: error.code, message: error.message });
    return;
  }
  const fe = error as FastifyError & { validation?: Parameters<typeof describeValidation>[0][]; validationContext?: string };
  if (fe.validation) {
    reply
      .code(400)
      .send({ code: 'VALIDATION_ERROR', message: fe.validation.map((v) => describeValidation(v, fe.validationContext)).join('; ') });
    return;
  }
  if (!isUnexpected(error)) throw error;
  const eventId = logUnexpected(request, error);
  reply.code(500).send({ code: 'GET_DATA_SOURCE_ERROR', message: errorRegistry.GET_DATA_SOURCE_ERROR.message, eventId });
}

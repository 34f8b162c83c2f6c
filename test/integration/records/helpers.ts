// Assertions shared by the record-operation tests (spec 4.3-4.7, 4.9).
import { expect } from 'vitest';
import type { Reply } from '../../support/http.ts';

export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** The error envelope of 2.1 with the given status and first inner-error code. */
export function expectError(res: Reply, status: number, code: string, messagePart?: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.error.statusCode).toBe(status);
  expect(res.body.error.innerErrors[0].code).toBe(code);
  if (messagePart) expect(res.body.error.innerErrors[0].message).toContain(messagePart);
  expect(res.body.origin).toMatch(/^[A-Z]+ http:\/\/127\.0\.0\.1:\d+\/v1\//);
  expect(res.body.operationId).toBeTruthy();
  expect(res.body.result).toBeUndefined();
}

/** The success envelope of 2.1; returns result.data. */
export function expectOk(res: Reply, status: 200 | 201 = 200): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.result.statusCode).toBe(status);
  expect(res.body.result.message).toBe(status === 201 ? 'Created' : 'OK');
  expect(res.body.origin).toMatch(/^[A-Z]+ http:\/\/127\.0\.0\.1:\d+\/v1\//);
  expect(res.body.userId).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.body.error).toBeUndefined();
  return res.body.result.data;
}

export const filterQuery = (clauses: unknown) => `filter=${encodeURIComponent(JSON.stringify(clauses))}`;
export const clause = (column: string, condition: string, value: unknown) => ({ key: column, column, type: 'string', condition, value });

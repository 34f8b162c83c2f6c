// What Schemathesis checks beyond the fuzz pass of routes.test.ts (issue 11, "Also"): an undeclared method
// on a known path is 405 with an Allow header listing the declared ones (in the error envelope, code
// METHOD_NOT_ALLOWED), an unknown path stays 404, and every status an operation can answer is in the
// OpenAPI document, in particular the 400s every operation can give (malformed URL, NUL characters) and
// the 431 of a URL over the server's header limit (answered in the error envelope too).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { type Stack, startStack } from '../support/stack.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

interface OpenApi {
  paths: Record<string, Record<string, { responses?: Record<string, unknown>; security?: unknown[] }>>;
}

describe('undeclared methods and documented statuses', () => {
  let stack: Stack;
  let creds: Credentials;
  let doc: OpenApi;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    doc = (await (await fetch(`${creds.baseUrl}/openapi.json`)).json()) as OpenApi;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const auth = () => ({ authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey });
  /** A concrete URL for an OpenAPI path (every parameter a uuid). */
  const concrete = (path: string) =>
    `${creds.baseUrl}${path.replace(/^\/v1/, '').replace(/\{[^}]+\}/g, '3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11')}`;

  it('answers 405 with Allow for every undeclared method on every known path', async () => {
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      const declared = Object.keys(ops).map((m) => m.toUpperCase());
      for (const method of METHODS.filter((m) => !declared.includes(m))) {
        const res = await fetch(concrete(path), { method, headers: auth() });
        const body = (await res.json()) as {
          error: { statusCode: number; innerErrors: { code: string; message: string }[] };
          origin: string;
        };
        expect(res.status, `${method} ${path}`).toBe(405);
        const allow = (res.headers.get('allow') ?? '').split(/,\s*/);
        for (const m of declared) expect(allow, `${method} ${path}`).toContain(m);
        expect(allow).not.toContain(method);
        expect(body.error.statusCode).toBe(405);
        expect(body.error.innerErrors[0]?.code).toBe('METHOD_NOT_ALLOWED');
        expect(body.error.innerErrors[0]?.message).toMatch(new RegExp(`^${method} is not allowed on .*: use `));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
    // A method with a body and no content type (what Schemathesis sends as QUERY) is still a 405.
    const query = await fetch(`${creds.baseUrl}/common/folder/list`, { method: 'QUERY', headers: auth(), body: 'x' });
    expect(query.status).toBe(405);
    expect(query.headers.get('allow')).toMatch(/GET/);
    // Unknown paths stay 404, whatever the method.
    for (const method of METHODS) {
      const res = await fetch(`${creds.baseUrl}/documents/nothing/here`, { method, headers: auth() });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { innerErrors: { code: string }[] } }).error.innerErrors[0]?.code).toBe('ROUTE_NOT_FOUND');
    }
  });

  it('documents 400, 401 and 431 on every operation, and answers them in the error envelope', async () => {
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        // Unauthenticated operations (health, readiness: `security: []`) cannot answer 401.
        const statuses = Array.isArray(op.security) && op.security.length === 0 ? ['400', '431'] : ['400', '401', '431'];
        for (const status of statuses) if (!op.responses?.[status]) missing.push(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
    expect(missing).toEqual([]);
    // A URL over Node's header size limit (Schemathesis sent such list filters): 431 in the envelope.
    const long = await fetch(`${creds.baseUrl}/documents/template/list?filter=${'%C2%BF'.repeat(6000)}`, { headers: auth() });
    expect(long.status).toBe(431);
    const body = (await long.json()) as { error: { statusCode: number; innerErrors: { code: string }[] } };
    expect(body.error.statusCode).toBe(431);
    expect(body.error.innerErrors[0]?.code).toBe('VALIDATION_ERROR');
    // The two operations that did not document 400 (storage download, contact list) answer it.
    const download = await fetch(`${creds.baseUrl}/documents/storage/%E0%A4%A/content`, { headers: auth() });
    expect(download.status).toBe(400);
    const contacts = await fetch(`${creds.baseUrl}/common/user/contact/list?x=%00`, { headers: auth() });
    expect(contacts.status).toBe(400);
  });
});

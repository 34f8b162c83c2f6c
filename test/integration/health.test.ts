// GET /v1/health and GET /v1/ready: unauthenticated, documented as extensions, and readiness names what is
// not ready (a real missing bucket on the S3 server, a converter that cannot start, workers that are absent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack } from '../support/stack.ts';
import { s3Settings } from '../support/s3.ts';

async function get(base: string, p: string) {
  const res = await fetch(`${new URL(base).origin}${p}`);
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

describe('health and readiness', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('GET /v1/health answers 200 without credentials', async () => {
    const r = await get(stack.service.baseUrl, '/v1/health');
    expect(r).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('GET /v1/ready checks database, temporal, storage and converter, without credentials', async () => {
    const r = await get(stack.service.baseUrl, '/v1/ready');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.status).toBe('ready');
    expect(r.body.notReady).toEqual([]);
    expect(Object.keys(r.body.checks).sort()).toEqual(['converter', 'database', 'storage', 'temporal']);
    for (const c of Object.values(r.body.checks) as { ready: boolean; detail: string }[]) expect(c.ready).toBe(true);
    expect(r.body.checks.temporal.detail).toContain('namespace default');
  });

  it('both are in the OpenAPI document as extensions, with no security requirement', async () => {
    const doc = (await get(stack.service.baseUrl, '/v1/openapi.json')).body;
    for (const p of ['/v1/health', '/v1/ready']) {
      expect(doc.paths[p].get.summary).toContain('(extension)');
      expect(doc.paths[p].get.security).toEqual([]);
    }
    // 200 and 503 are its own answers; 400 and 431 (malformed or oversized request) every route documents.
    expect(Object.keys(doc.paths['/v1/ready'].get.responses).sort()).toEqual(['200', '400', '431', '503']);
  });
});

describe('readiness when a dependency is missing', () => {
  let stack: Stack;
  beforeAll(async () => {
    // A bucket that does not exist on the real S3 server: the service starts, readiness must say storage.
    const s3 = await s3Settings();
    stack = await startStack({ ...s3, storageUrl: 's3://no-such-bucket-docgen/x' });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 503 naming storage, with the reason, and liveness stays 200', async () => {
    const r = await get(stack.service.baseUrl, '/v1/ready');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('not ready');
    expect(r.body.notReady).toEqual(['storage']);
    expect(r.body.checks.storage.ready).toBe(false);
    expect(r.body.checks.storage.detail).not.toBe('');
    expect(r.body.checks.database.ready).toBe(true);
    expect((await get(stack.service.baseUrl, '/v1/health')).status).toBe(200);
  });

  it('answers 503 naming the database once it is gone', async () => {
    await stack.service.db.close();
    const r = await get(stack.service.baseUrl, '/v1/ready');
    expect(r.status).toBe(503);
    expect(r.body.notReady).toEqual(['database', 'storage']);
  });
});

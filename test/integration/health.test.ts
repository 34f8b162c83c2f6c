// GET /v1/health and GET /v1/ready: unauthenticated, documented as extensions, and readiness names what is
// not ready (a real missing bucket on the S3 server, a converter that cannot start, workers that are absent),
// never a path or an address: the reasons go to the service log and to the METRICS_PORT /ready.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
    for (const c of Object.values(r.body.checks)) expect(c).toEqual({ ready: true });
  });

  it('GET /v1/ready without credentials shows no path, address or driver (issue 25: it printed the data directory)', async () => {
    const r = await get(stack.service.baseUrl, '/v1/ready');
    const text = JSON.stringify(r.body);
    for (const secret of [stack.config.dataDir, inject('temporalAddress'), '127.0.0.1', 'directory', 'PGlite', 'namespace', 'instance']) {
      expect(text, secret).not.toContain(secret);
    }
    expect(text).not.toMatch(/\/tmp|\/[a-z]+\/|:\d{2,5}\b/);
  });

  it('both are in the OpenAPI document as extensions, with no security requirement', async () => {
    const doc = (await get(stack.service.baseUrl, '/v1/openapi.json')).body;
    for (const p of ['/v1/health', '/v1/ready']) {
      expect(doc.paths[p].get.summary).toContain('(extension)');
      expect(doc.paths[p].get.security).toEqual([]);
    }
    // 200 and 503 are its own answers; 400, 431 (malformed or oversized request) and 429 (rate limit: per
    // client address here) every route documents.
    expect(Object.keys(doc.paths['/v1/ready'].get.responses).sort()).toEqual(['200', '400', '429', '431', '503']);
  });
});

describe('readiness when a dependency is missing', () => {
  let stack: Stack;
  let endpoint: string;
  const log: string[] = [];
  beforeAll(async () => {
    // A bucket that does not exist on the real S3 server: the service starts, readiness must say storage.
    const s3 = await s3Settings();
    endpoint = String(s3.s3Endpoint);
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        log.push(chunk.toString());
        done();
      },
    });
    stack = await startStack({ ...s3, storageUrl: 's3://no-such-bucket-docgen/x' }, { logger: { level: 'info', stream } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 503 naming storage, with the reason, and liveness stays 200', async () => {
    const r = await get(stack.service.baseUrl, '/v1/ready');
    expect(r.status).toBe(503);
    expect(r.body.status).toBe('not ready');
    expect(r.body.notReady).toEqual(['storage']);
    expect(r.body.checks.storage).toEqual({ ready: false });
    expect(r.body.checks.database).toEqual({ ready: true });
    // The bucket and the endpoint stay out of the public answer...
    expect(JSON.stringify(r.body)).not.toContain('no-such-bucket');
    expect(JSON.stringify(r.body)).not.toContain(new URL(endpoint).host);
    expect((await get(stack.service.baseUrl, '/v1/health')).status).toBe(200);
    // ...and reach the operator: the service log says why, once while the failure lasts.
    await get(stack.service.baseUrl, '/v1/ready');
    const failed = log.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'readiness check failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ level: 40, check: 'storage' });
    expect(String(failed[0]?.detail)).not.toBe('');
  });

  it('answers 503 naming the database once it is gone', async () => {
    await stack.service.db.close();
    const r = await get(stack.service.baseUrl, '/v1/ready');
    expect(r.status).toBe(503);
    expect(r.body.notReady).toEqual(['database', 'storage']);
  });
});

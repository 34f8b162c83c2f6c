// A stack on object storage (the real S3 server) with its metrics endpoint on: downloads redirect to a
// presigned URL when STORAGE_DOWNLOAD=redirect, and a scrape after generates shows the API, activity,
// converter, metering and Temporal SDK metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { s3Settings } from '../support/s3.ts';
import { type Stack, startStack } from '../support/stack.ts';

/** The value of the first sample whose name and labels match (labels in any order), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('object storage and metrics', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  const urns: string[] = [];

  beforeAll(async () => {
    stack = await startStack({ ...(await s3Settings()), storageDownload: 'redirect', storagePresignSeconds: 120, metricsPort: 0 });
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('generates docx and pdf into the bucket, and leaves no scratch blob', async () => {
    for (const [n, fileFormat] of [[1, 'docx'], [2, 'pdf']] as const) {
      // A generate consumes its uploads: one template per generate.
      const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Invoice {n} for {who}']) }]);
      expect(t.status).toBe(201);
      const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ n, who: 'Zed' }) }]);
      const gen = await api.call('POST', '/documents/document/generate', {
        json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat } }),
      });
      expect(gen.status, JSON.stringify(gen.body)).toBe(201);
      urns.push(gen.body.result.data.document.urn);
    }
    const documents = (await stack.blobs.list('subscriptions/')).filter((k) => k.includes('/documents/'));
    expect(documents.map((k) => k.split('/').pop()).sort()).toEqual([...urns].sort());
    expect(await stack.blobs.list('scratch/')).toEqual([]);
  });

  it('answers a download with 302 to a short-lived presigned URL that serves the document', async () => {
    const res = await fetch(`${creds.baseUrl}/documents/storage/${urns[0]}/content`, {
      headers: { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey },
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location).toContain(stack.config.s3Endpoint);
    expect(new URL(location).searchParams.get('X-Amz-Expires')).toBe('120');
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toContain('letter.docx');
    expect(docxParagraphs(new Uint8Array(await file.arrayBuffer()))).toEqual(['Invoice 1 for Zed']);
    // Another subscription's urn is still 404, before any URL is made.
    const other = client(await stack.credentials('someone-else'));
    expect((await other.download(urns[0]!)).status).toBe(404);
  });

  it('serves Prometheus metrics on its own port after the generates', async () => {
    const url = stack.service.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    const gen = { route: '/v1/documents/document/generate', method: 'POST', status: '201' };
    expect(sample(text, 'docgen_http_requests_total', gen)).toBe(2);
    expect(sample(text, 'docgen_http_request_duration_seconds_count', gen)).toBe(2);
    expect(sample(text, 'docgen_http_request_duration_seconds_bucket', { ...gen, le: '+Inf' })).toBe(2);
    expect(sample(text, 'docgen_http_requests_total', { route: '/v1/documents/storage/:urn/content', method: 'GET', status: '302' })).toBe(1);
    // Route patterns, never raw URLs with ids.
    expect(text).not.toContain(urns[0]);
    for (const activity of ['resolveTemplate', 'loadData', 'merge', 'convertDocument', 'deliver', 'record']) {
      expect(sample(text, 'docgen_activity_duration_seconds_count', { activity, outcome: 'ok' }), activity).toBeGreaterThanOrEqual(1);
    }
    expect(sample(text, 'docgen_metering_total', { dimension: 'documents-generated' })).toBe(2);
    expect(sample(text, 'docgen_metering_total', { dimension: 'pages-generated' })).toBeGreaterThanOrEqual(2);
    expect(sample(text, 'docgen_converter_pool_size')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'docgen_converter_ready')).toBe(1);
    expect(sample(text, 'docgen_converter_busy')).toBe(0);
    expect(sample(text, 'docgen_converter_queued')).toBe(0);
    expect(sample(text, 'docgen_converter_restarts')).toBe(0);
    // The Temporal SDK's runtime metrics, from the same port.
    expect(text).toMatch(/^temporal_\w+/m);
    expect(sample(text, 'temporal_worker_task_slots_available', { worker_type: 'ActivityWorker' })).toBeGreaterThanOrEqual(1);
    // Process metrics.
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('also answers /health and /ready on the metrics port (for processes without the API)', async () => {
    const url = stack.service.metricsUrl!;
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const ready = await fetch(`${url}/ready`);
    const body = (await ready.json()) as { status: string; checks: Record<string, { detail: string }> };
    expect(ready.status, JSON.stringify(body)).toBe(200);
    expect(body.checks.storage!.detail).toMatch(/^s3:\/\/t-/);
  });
});

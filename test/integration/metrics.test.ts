// A stack on object storage (the real S3 server) with its metrics endpoint on: downloads redirect to a
// presigned URL when STORAGE_DOWNLOAD=redirect, and a scrape after generates and a batch shows the API,
// activity, conversion (every one, batch rows included), batch, merge, converter, readiness, metering and
// Temporal SDK metrics; every metric the Grafana dashboard and the alert rules of deploy/ name is served.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { s3Settings } from '../support/s3.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { waitForBatch } from './batch/support.ts';

const root = path.resolve(import.meta.dirname, '../..');

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
    for (const [n, fileFormat] of [
      [1, 'docx'],
      [2, 'pdf'],
    ] as const) {
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

  it('runs a batch of three pdf rows', async () => {
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Row {n}']) }]);
    const d = await api.upload('data', [{ name: 'rows.csv', bytes: 'n\r\n1\r\n2\r\n3\r\n' }]);
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: d.body.result.data.files[0].id, loadMethod: 'Storage' },
        document: { name: 'Row {n}', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await waitForBatch(api, res.body.result.data.batch.id)).toMatchObject({ status: 'completed', rowsDone: 3, rowsFailed: 0 });
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
    expect(sample(text, 'docgen_http_requests_total', { route: '/v1/documents/storage/:urn/content', method: 'GET', status: '302' })).toBe(
      1,
    );
    // Route patterns, never raw URLs with ids.
    expect(text).not.toContain(urns[0]);
    for (const activity of ['resolveTemplate', 'loadData', 'merge', 'convertDocument', 'deliver', 'record']) {
      expect(sample(text, 'docgen_activity_duration_seconds_count', { activity, outcome: 'ok' }), activity).toBeGreaterThanOrEqual(1);
    }
    expect(sample(text, 'docgen_metering_total', { dimension: 'documents-generated' })).toBe(5);
    expect(sample(text, 'docgen_metering_total', { dimension: 'pages-generated' })).toBeGreaterThanOrEqual(5);
    expect(sample(text, 'docgen_converter_pool_size')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'docgen_converter_ready')).toBe(1);
    expect(sample(text, 'docgen_converter_busy')).toBe(0);
    expect(sample(text, 'docgen_converter_queued')).toBe(0);
    expect(sample(text, 'docgen_converter_restarts')).toBe(0);
    // Every conversion, the batch's rows too (the activity metric counts one convertDocument only).
    expect(sample(text, 'docgen_activity_duration_seconds_count', { activity: 'convertDocument', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'docgen_conversions_total', { from: 'docx', to: 'pdf', outcome: 'ok' })).toBe(4);
    expect(sample(text, 'docgen_conversion_duration_seconds_count', { to: 'pdf', outcome: 'ok' })).toBe(4);
    expect(sample(text, 'docgen_batch_rows_total', { outcome: 'done' })).toBe(3);
    expect(sample(text, 'docgen_batch_rows_total', { outcome: 'failed' })).toBeUndefined();
    // Each job's wait for an instance, under its subscription: the 4 conversions and the layout page count
    // of the docx generate.
    expect(sample(text, 'docgen_converter_queue_wait_seconds_count', { subscription: creds.subscriptionId })).toBe(5);
    expect(sample(text, 'docgen_merge_threads')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'docgen_merge_queued')).toBe(0);
    for (const check of ['database', 'temporal', 'storage', 'converter']) expect(sample(text, 'docgen_ready', { check }), check).toBe(1);
    // The Temporal SDK's runtime metrics, from the same port.
    expect(text).toMatch(/^temporal_\w+/m);
    expect(sample(text, 'temporal_worker_task_slots_available', { worker_type: 'ActivityWorker' })).toBeGreaterThanOrEqual(1);
    // Process metrics.
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('serves every metric that the Grafana dashboard and the alert rules name', async () => {
    const text = await (await fetch(`${stack.service.metricsUrl!}/metrics`)).text();
    const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'deploy/grafana/docgen.json'), 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const rules = parse(fs.readFileSync(path.join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const exprs = [
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)),
      ...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)),
    ];
    // `up` is Prometheus's own (a scrape that failed), not a metric of the service.
    const names = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:docgen|temporal|process)_\w+)/g)].map((m) => m[1]!)));
    expect(names.size).toBeGreaterThan(15);
    const served = (name: string) => {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      return (
        new RegExp(`^${name}(\\{| )`, 'm').test(text) ||
        new RegExp(`^# TYPE ${name} `, 'm').test(text) ||
        (base !== name && new RegExp(`^# TYPE ${base} histogram$`, 'm').test(text))
      );
    };
    expect([...names].filter((n) => !served(n))).toEqual([]);
    // The check finds a name that is not there.
    expect(served('docgen_no_such_metric_total')).toBe(false);
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

// The README's promise, end to end: `docgen start`, `docgen credentials --json`, upload a template and
// data, generate synchronously, download the merged document; then the run as an operator sees it.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SA } from '../../core/search-attributes.ts';
import { localActivities } from '../support/history.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { repoRoot, type StartedService, startDocgen } from '../support/service-process.ts';
import { generateWorkflowId } from '../../api/temporal.ts';

// The screenshots the README shows (docs/*.png) are taken here: UPDATE_SCREENSHOTS=1 writes them into
// docs/, otherwise into a temporary directory (the UI shows times and ids, which change every run).
const screenshotDir = process.env.UPDATE_SCREENSHOTS
  ? path.join(repoRoot, 'docs')
  : fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-screenshots-'));

describe('quick start: docgen start + credentials + upload/generate/download', () => {
  let svc: StartedService;
  beforeAll(async () => {
    svc = await startDocgen();
  });
  afterAll(async () => {
    await svc?.stop();
    if (svc) fs.rmSync(svc.dataDir, { recursive: true, force: true });
  });

  it('prints where everything is', () => {
    const out = svc.output();
    expect(out).toMatch(new RegExp(`API\\s+http://127\\.0\\.0\\.1:${svc.env.PORT}/v1`));
    expect(out).toMatch(/API docs\s+http:\/\/127\.0\.0\.1:\d+\/v1\/docs/);
    expect(out).toMatch(new RegExp(`Temporal UI\\s+http://127\\.0\\.0\\.1:${svc.env.TEMPORAL_UI_PORT}`));
    expect(out).toContain('npx docgen credentials --json');
  });

  it('serves the OpenAPI document and the docs page without credentials', async () => {
    const base = `http://127.0.0.1:${svc.env.PORT}/v1`;
    const spec = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(spec.openapi).toBe('3.1.0');
    expect(Object.keys(spec.paths)).toEqual(
      expect.arrayContaining([
        '/v1/documents/template/upload',
        '/v1/documents/data/upload',
        '/v1/documents/document/generate',
        '/v1/documents/storage/{urn}/content',
      ]),
    );
    const docs = await fetch(`${base}/docs/`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  });

  it('generates a merged docx, visible in Temporal with its activities, isolated from other tenants', async () => {
    const creds = await svc.credentials();
    expect(Object.keys(creds).sort()).toEqual(['accessToken', 'apiKey', 'baseUrl', 'subscriptionId', 'userId']);
    expect(creds.baseUrl).toBe(`http://127.0.0.1:${svc.env.PORT}/v1`);
    const api = client(creds);

    const template = makeDocx(['Dear {customer.name},', ['Your order ', '{or', 'der}', ' is ready.'], 'Total: {total}']);
    const up = await api.upload('template', [{ name: 'letter.docx', bytes: template }]);
    expect(up.status).toBe(201);
    expect(up.body.result.data.files).toHaveLength(1);
    const templateUrn: string = up.body.result.data.files[0].id;
    expect(up.body.result.data.files[0].fileName).toBe('letter.docx');

    const data = await api.upload('data', [
      { name: 'order.json', bytes: JSON.stringify({ customer: { name: 'ACME & Co.' }, order: 'A-42', total: 99.5 }) },
    ]);
    expect(data.status).toBe(201);
    const dataUrn: string = data.body.result.data.files[0].id;

    const gen = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    expect(gen.body.result).toMatchObject({ statusCode: 201, message: 'Created' });
    const doc = gen.body.result.data.document;
    expect(doc).toMatchObject({ deliveryMethod: 'Storage', name: 'letter.docx', fileFormat: 'docx' });
    expect(gen.body.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    expect(gen.body.externalContext).toEqual({ correlation: 'abc-123', nested: { n: 1 } });
    expect(gen.body.origin).toBe(`POST ${creds.baseUrl}/documents/document/generate`);
    expect(gen.body.userId).toBe(creds.userId);
    expect(typeof gen.body.operationId).toBe('string');

    const file = await api.download(doc.urn);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toContain('letter.docx');
    expect(docxParagraphs(file.bytes)).toEqual(['Dear ACME & Co.,', 'Your order A-42 is ready.', 'Total: 99.5']);

    // Another subscription sees none of it.
    const other = client(await svc.credentials('other'));
    expect((await other.download(doc.urn)).status).toBe(404);
    const stolen = await other.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');

    // The operator's view: workflow id from the operationId, search attributes, summary, activities.
    const service = JSON.parse(fs.readFileSync(path.join(svc.dataDir, 'service.json'), 'utf8')) as { temporalAddress: string };
    const connection = await Connection.connect({ address: service.temporalAddress });
    try {
      const temporal = new Client({ connection });
      const handle = temporal.workflow.getHandle(generateWorkflowId(creds.subscriptionId, gen.body.operationId));
      const described = await handle.describe();
      expect(described.type).toBe('generateDocument');
      expect(described.status.name).toBe('COMPLETED');
      expect(described.typedSearchAttributes.get(SA.subscription)).toBe(creds.subscriptionId);
      expect(described.typedSearchAttributes.get(SA.operation)).toBe(gen.body.operationId);
      expect(described.typedSearchAttributes.get(SA.template)).toBe(templateUrn);
      expect(described.typedSearchAttributes.get(SA.outputFormat)).toBe('docx');
      expect(await described.staticSummary()).toContain('letter');
      const history = await handle.fetchHistory();
      // The short steps are local activities, grouped in two (activities/generation.ts): one marker per
      // group, carrying its type and a summary that names its steps.
      const steps = localActivities(history.events);
      expect(steps.map((s) => s.type)).toEqual(['prepareGeneration', 'writeAndRecord']);
      expect(steps[0]!.summary).toMatch(/^template .+ \(Storage\); data .+ \(Storage\); merge into docx$/);
      expect(steps[1]!.summary).toBe('count pages; deliver letter to Storage:root; record document and metering; consume uploads');
      const found = await temporal.workflow.count(`DocgenSubscriptionId = "${creds.subscriptionId}"`);
      expect(found.count).toBeGreaterThanOrEqual(1);
    } finally {
      await connection.close();
    }
  });

  it('docgen generate lists the tags left empty for want of data; with --strict it refuses them and writes nothing', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-generate-'));
    try {
      fs.writeFileSync(path.join(dir, 'letter.docx'), makeDocx(['Dear {customer.name},', 'your rep is {rep}.']));
      fs.writeFileSync(path.join(dir, 'data.json'), JSON.stringify({ customer: { name: 'ACME' } }));
      const generate = (...extra: string[]) =>
        promisify(execFile)(
          process.execPath,
          [
            path.join(repoRoot, 'cli', 'docgen.mjs'),
            'generate',
            '--template',
            path.join(dir, 'letter.docx'),
            '--data',
            path.join(dir, 'data.json'),
            ...extra,
          ],
          { env: svc.env, cwd: dir },
        ).then(
          ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
          (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
        );
      const lenient = await generate('--out', path.join(dir, 'out.docx'));
      expect(lenient.code, lenient.stderr).toBe(0);
      expect(lenient.stderr).toBe(
        'docgen: 1 tag rendered empty, the data has no value (--strict refuses them):\n  no value for tag "rep" (word/document.xml, paragraph 2)\n',
      );
      expect(docxParagraphs(fs.readFileSync(path.join(dir, 'out.docx')))).toEqual(['Dear ACME,', 'your rep is .']);
      const strict = await generate('--out', path.join(dir, 'strict.docx'), '--strict');
      expect(strict.code).toBe(1);
      expect(strict.stderr).toContain('TEMPLATE_ERROR');
      expect(strict.stderr).toContain('no value for tag "rep" (word/document.xml, paragraph 2)');
      expect(fs.existsSync(path.join(dir, 'strict.docx'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows the run and each of its steps in the Temporal Web UI (headless Chromium)', async () => {
    const { chromium } = await import('playwright-core');
    const creds = await svc.credentials();
    const api = client(creds);
    const t = await api.upload('template', [{ name: 'ui.docx', bytes: makeDocx(['UI check {n}']) }]);
    const d = await api.upload('data', [{ name: 'ui.json', bytes: JSON.stringify({ n: 1 }) }]);
    const gen = await api.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, {
        template: { name: 'ui-template' },
        document: { name: 'ui-doc' },
      }),
    });
    expect(gen.status).toBe(201);
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      // Flags for a closed network: without them Chromium keeps trying to reach Google's services.
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1400 } });
      // The run's event history: every step with its summary, in the UI of both the Temporal CLI 1.5
      // (UI 2.42) and 1.9 (UI 2.54, whose default tab, the timeline, shows no local activity summaries).
      const { temporalAddress } = JSON.parse(fs.readFileSync(path.join(svc.dataDir, 'service.json'), 'utf8')) as {
        temporalAddress: string;
      };
      const connection = await Connection.connect({ address: temporalAddress });
      const workflowId = generateWorkflowId(creds.subscriptionId, gen.body.operationId);
      const runId = await new Client({ connection }).workflow
        .getHandle(workflowId)
        .describe()
        .then((d) => d.runId)
        .finally(() => connection.close());
      await page.goto(`http://127.0.0.1:${svc.env.TEMPORAL_UI_PORT}/namespaces/default/workflows/${workflowId}/${runId}/history`);
      await page.getByText('ui-doc to Storage:root', { exact: false }).first().waitFor({ timeout: 30_000 });
      const text = await page.innerText('body');
      expect(text).toContain('Completed');
      expect(text).toContain('generateDocument');
      for (const step of ['prepareGeneration', 'writeAndRecord']) expect(text).toContain(step);
      expect(text).toContain('template ui-template (Storage)');
      expect(text).toContain('record document and metering');
      // The README's pictures: this run in the Temporal UI, and the API docs page.
      await page.setViewportSize({ width: 1400, height: 760 });
      // The steps with their summaries (scrolled down to them, and back to the table's left edge).
      await page.getByText('template ui-template (Storage)', { exact: false }).first().scrollIntoViewIfNeeded();
      await page.evaluate(() => {
        for (const el of document.querySelectorAll('*')) if (el.scrollLeft > 0) el.scrollLeft = 0;
      });
      await page.screenshot({ path: path.join(screenshotDir, 'temporal-ui.png') });
      await page.setViewportSize({ width: 1100, height: 640 });
      await page.goto(`http://127.0.0.1:${svc.env.PORT}/v1/docs`);
      await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
      expect(await page.innerText('body')).toContain('/v1/documents/document/generate');
      await page.screenshot({ path: path.join(screenshotDir, 'api-docs.png') });
      for (const name of ['temporal-ui.png', 'api-docs.png'])
        expect(fs.statSync(path.join(screenshotDir, name)).size).toBeGreaterThan(10_000);
    } finally {
      await browser.close();
    }
    // Two pages, a browser start and a workflow: more than the default minute on a loaded machine.
  }, 150_000);

  it('stops gracefully on SIGTERM', async () => {
    expect(await svc.stop('SIGTERM')).toBe(0);
    expect(fs.existsSync(path.join(svc.dataDir, 'service.json'))).toBe(false);
  });
});

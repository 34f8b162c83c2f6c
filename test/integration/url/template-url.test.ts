// template.url end to end: generate fetches the template through the guarded HTTP client from a real local
// HTTP server, checks what it got before merging, and answers 400 naming the reason when it cannot. The URL
// travels sealed: the workflow history (what the Temporal UI shows) holds only its display form.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { writeZip } from '../../../engine/zip.ts';
import { historyText } from '../../support/history.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { generateWorkflowId } from '../../../api/temporal.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const MAX = 256 * 1024;

interface Served {
  url: string;
  routes: Record<string, { status?: number; type?: string; body: Uint8Array | string; headers?: Record<string, string> }>;
  hits: string[];
  close(): Promise<void>;
}

/** A file server: each path answers a status, content type, body (and headers). */
async function serve(
  host: string,
  routes: Record<string, { status?: number; type?: string; body: Uint8Array | string; headers?: Record<string, string> }>,
): Promise<Served> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const r = routes[req.url ?? ''];
    if (!r) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('no such file');
    res
      .writeHead(r.status ?? 200, { ...(r.type ? { 'content-type': r.type } : {}), ...r.headers })
      .end(typeof r.body === 'string' ? r.body : Buffer.from(r.body));
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    routes,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('template.url', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let files: Served;
  let refused: Served;
  let connection: Connection;
  const template = makeDocx(['Dear {name},', 'fetched from a URL.']);
  // A presigned URL's query: its signature is a credential for the file.
  const signature = randomBytes(16).toString('hex');
  const credential = `AKIA${randomBytes(6).toString('hex').toUpperCase()}`;
  const signedQuery = `X-Amz-Credential=${credential}%2F20260101%2Fus-east-1&X-Amz-Signature=${signature}`;

  beforeAll(async () => {
    files = await serve('127.0.0.1', {
      '/letter.docx': { type: DOCX, body: template },
      '/letter.bin': { type: 'application/octet-stream', body: template },
      '/page.html': { type: 'text/html; charset=utf-8', body: '<html>login</html>' },
      '/not-a-zip.docx': { type: 'application/octet-stream', body: 'plain text, not a package' },
      '/gone.docx': { status: 410, type: 'text/plain', body: 'gone' },
      '/busy.docx': { status: 503, type: 'text/plain', body: 'try later' },
      '/huge.docx': { type: DOCX, body: new Uint8Array(MAX + 1024) },
      '/sheet.docx': { type: DOCX, body: packageOf(['[Content_Types].xml', '_rels/.rels', 'xl/workbook.xml']) },
      [`/signed.docx?${signedQuery}`]: { type: DOCX, body: template },
    });
    // 127.0.0.2 is loopback too, but OUTBOUND_ALLOW lists only 127.0.0.1.
    refused = await serve('127.0.0.2', { '/letter.docx': { type: DOCX, body: template } });
    // A redirect is followed only after its target passes the same check.
    files.routes['/moved.docx'] = { status: 302, body: '', headers: { location: `${refused.url}/letter.docx` } };
    stack = await startStack({ outboundAllow: ['127.0.0.1'], outboundMaxBytes: MAX });
    creds = await stack.credentials();
    api = client(creds);
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await files?.close();
    await refused?.close();
  });

  /** A generate consumes its data upload (whatever its outcome): each gets its own. */
  const generate = async (url: string) => {
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'Ada' }) }]);
    expect(d.status, JSON.stringify(d.body)).toBe(201);
    return generateWith(url, d.body.result.data.files[0].id as string);
  };
  const generateWith = (url: string, dataUrn: string) =>
    api.call('POST', '/documents/document/generate', {
      json: {
        template: { url, fileFormat: 'docx' },
        data: { loadMethod: 'Storage', urn: dataUrn },
        document: { timezone: 'UTC', locale: 'en-US', name: 'from-url', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root' },
      },
    });
  async function expectRefused(url: string, code: string, reason: RegExp) {
    const res = await generate(url);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe(code);
    expect(res.body.error.message).toMatch(reason);
    expect(res.body.error.message).toContain(url);
  }

  it('fetches the template from the URL and merges it', async () => {
    for (const path of ['/letter.docx', '/letter.bin']) {
      const res = await generate(`${files.url}${path}`);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const out = await fetch(`${creds.baseUrl}/documents/storage/${res.body.result.data.document.urn}/content`, {
        headers: { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey },
      });
      expect(docxParagraphs(new Uint8Array(await out.arrayBuffer()))).toEqual(['Dear Ada,', 'fetched from a URL.']);
      expect(files.hits).toContain(path);
    }
    // The fetched copy was a scratch file of its run: gone once the run ended.
    expect(await stack.blobs.list('scratch/url-')).toEqual([]);
  });

  it('a private address not listed in OUTBOUND_ALLOW is refused without a request: 400 TEMPLATE_NOT_FOUND', async () => {
    await expectRefused(`${refused.url}/letter.docx`, 'TEMPLATE_NOT_FOUND', /OUTBOUND_ALLOW/);
    // Nor through a redirect from an allowed host.
    await expectRefused(`${files.url}/moved.docx`, 'TEMPLATE_NOT_FOUND', /127\.0\.0\.2 is not reachable from this service/);
    expect(files.hits).toContain('/moved.docx');
    expect(refused.hits).toEqual([]);
  });

  it('unreachable, or answering an error status: 400 TEMPLATE_NOT_FOUND naming the reason', async () => {
    const closed = await serve('127.0.0.1', {});
    const port = new URL(closed.url).port;
    await closed.close();
    await expectRefused(`http://127.0.0.1:${port}/letter.docx`, 'TEMPLATE_NOT_FOUND', /could not be reached \(ECONNREFUSED\)/);
    await expectRefused(`${files.url}/gone.docx`, 'TEMPLATE_NOT_FOUND', /HTTP 410/);
    await expectRefused(`${files.url}/busy.docx`, 'TEMPLATE_NOT_FOUND', /HTTP 503/);
    await expectRefused(`${files.url}/missing.docx`, 'TEMPLATE_NOT_FOUND', /HTTP 404/);
  });

  it('larger than OUTBOUND_MAX_BYTES: 400 TEMPLATE_NOT_FOUND', async () => {
    await expectRefused(`${files.url}/huge.docx`, 'TEMPLATE_NOT_FOUND', new RegExp(`larger than ${MAX} bytes`));
  });

  it('not a docx (a web page, not a zip, another format): 400 INVALID_TEMPLATE_FORMAT before any merge', async () => {
    await expectRefused(`${files.url}/page.html`, 'INVALID_TEMPLATE_FORMAT', /content type text\/html/);
    await expectRefused(`${files.url}/not-a-zip.docx`, 'INVALID_TEMPLATE_FORMAT', /not a zip package/);
    await expectRefused(`${files.url}/sheet.docx`, 'INVALID_TEMPLATE_FORMAT', /it is a xlsx package/);
  });

  it('a URL with user:password@ is refused before anything is queued: 400 VALIDATION_ERROR naming template.url', async () => {
    for (const url of [
      `http://ada:pa55word@${new URL(files.url).host}/letter.docx`,
      `http://token@${new URL(files.url).host}/letter.docx`,
    ]) {
      const hits = files.hits.length;
      const res = await generate(url);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message).toMatch(/^template\.url must not carry a user name or password/);
      // No workflow started (issue 25: one did, and failed in its first step), no request left the service.
      const operationId = res.headers.get('x-operation-id')!;
      await expect(
        new Client({ connection }).workflow.getHandle(generateWorkflowId(creds.subscriptionId, operationId)).describe(),
      ).rejects.toBeInstanceOf(WorkflowNotFoundError);
      expect(files.hits.length).toBe(hits);
    }
    // Not an http(s) URL at all: refused the same way.
    const ftp = await generate('ftp://127.0.0.1/letter.docx');
    expect(ftp.status).toBe(400);
    expect(ftp.body.error.message).toMatch(/template\.url must be an http or https URL/);
  });

  it("the URL's query (a presigned URL's signature) is in no part of the workflow history: the input carries it sealed", async () => {
    const url = `${files.url}/signed.docx?${signedQuery}`;
    const res = await generate(url);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(files.hits).toContain(`/signed.docx?${signedQuery}`);
    const history = await historyText(connection, generateWorkflowId(creds.subscriptionId, res.body.operationId));
    // Nothing of its query: not the whole, not a name, not a value...
    const parts = [
      signedQuery,
      ...signedQuery.split('&').flatMap((p) => p.split('=')),
      signature,
      credential,
      decodeURIComponent(signedQuery),
    ];
    for (const part of parts) expect(history, part).not.toContain(part);
    // ...though the run is there, with the URL's display form and the URL sealed.
    expect(history).toContain(`${files.url}/signed.docx?…`);
    expect(history).toMatch(/"sealedUrl":"sealed:/);
    // A fetch that fails says which URL in its display form; the query stays out of the message and history.
    const failed = await generate(`${files.url}/missing.docx?${signedQuery}`);
    expect(failed.status, JSON.stringify(failed.body)).toBe(400);
    expect(failed.body.error.message).toContain(`${files.url}/missing.docx?… could not be fetched: the server answered HTTP 404`);
    expect(JSON.stringify(failed.body)).not.toContain(signature);
    const failedHistory = await historyText(connection, generateWorkflowId(creds.subscriptionId, failed.body.operationId));
    for (const part of parts) expect(failedHistory, part).not.toContain(part);
  });

  it('a template record with url alone is accepted and keeps the url', async () => {
    const res = await api.call('POST', '/documents/template/create', {
      json: { documentTemplate: { name: 'from url', fileFormat: 'docx', url: `${files.url}/letter.docx` } },
    });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    expect(JSON.stringify(res.body)).toContain(`${files.url}/letter.docx`);
  });
});

/** A zip with these (empty) parts: a package, but not necessarily of the declared format. */
function packageOf(names: string[]): Uint8Array {
  return writeZip(names.map((name) => ({ name, data: new TextEncoder().encode('<x/>') })));
}

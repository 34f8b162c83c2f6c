// The Gotenberg adapter against a local stand-in: no Docker here, so a node:http server implements
// Gotenberg 8's multipart contract for POST /forms/libreoffice/convert (field `files`, form fields
// `pdfa`, `pdfua`, `metadata`) and GET /health, and converts with a real LibreOffice pool. The adapter
// runs unchanged: real HTTP, real multipart built by fetch's FormData.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GotenbergConverter, LibreOfficePool, createConverter, pdfaIdentification } from '../../../converter/index.ts';
import { rejection } from '../../support/convert-error.ts';
import type { PdfConformance } from '../../../converter/index.ts';
import { makeDocx, para, poppler } from './fixtures.ts';

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

/** multipart/form-data parser, strict enough to catch a malformed body from the adapter. */
function parseMultipart(body: Buffer, contentType: string): Part[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) throw new Error('no boundary');
  const delim = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delim);
  if (pos !== 0) throw new Error('body does not start with the boundary');
  for (;;) {
    pos += delim.length;
    if (body.subarray(pos, pos + 2).toString() === '--') break;
    if (body.subarray(pos, pos + 2).toString() !== '\r\n') throw new Error('bad boundary line');
    pos += 2;
    const headerEnd = body.indexOf('\r\n\r\n', pos);
    const headers = body.subarray(pos, headerEnd).toString('utf8');
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delim]), headerEnd + 4);
    if (headerEnd < 0 || next < 0) throw new Error('truncated part');
    const disp = /content-disposition:\s*form-data;([^\r\n]*)/i.exec(headers)?.[1] ?? '';
    const part: Part = { name: /\bname="([^"]*)"/.exec(disp)?.[1] ?? '', data: body.subarray(headerEnd + 4, next) };
    const filename = /\bfilename="([^"]*)"/.exec(disp)?.[1];
    if (filename !== undefined) part.filename = filename;
    const ct = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1];
    if (ct !== undefined) part.contentType = ct;
    parts.push(part);
    pos = next + 2;
  }
  return parts;
}

const PDFA: Record<string, PdfConformance> = { 'PDF/A-1b': 'PdfA1B', 'PDF/A-2b': 'PdfA2B', 'PDF/A-3b': 'PdfA3B' };

let pool: LibreOfficePool;
let server: http.Server;
let base: string;
const seen: Array<{ url: string; auth?: string; fields: Record<string, string>; files: string[] }> = [];
let mode: 'normal' | 'busy' | 'slow' = 'normal';

beforeAll(async () => {
  pool = new LibreOfficePool({ size: 1, log: () => {} });
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.method === 'GET' && req.url === '/health') {
          res.setHeader('content-type', 'application/json');
          res.end('{"status":"up"}');
          return;
        }
        if (req.method !== 'POST' || req.url !== '/forms/libreoffice/convert') {
          res.statusCode = 404;
          res.end('Not Found');
          return;
        }
        const parts = parseMultipart(Buffer.concat(chunks), req.headers['content-type'] ?? '');
        const fields = Object.fromEntries(parts.filter((p) => p.filename === undefined).map((p) => [p.name, p.data.toString('utf8')]));
        const files = parts.filter((p) => p.name === 'files' && p.filename !== undefined);
        seen.push({
          url: req.url,
          ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
          fields,
          files: files.map((f) => f.filename!),
        });
        if (mode === 'busy') {
          res.statusCode = 503;
          res.end('Service Unavailable');
          return;
        }
        if (mode === 'slow') {
          await new Promise((r) => setTimeout(r, 5000));
          if (res.destroyed) return;
        }
        const file = files[0];
        if (!file) {
          res.statusCode = 400;
          res.end('Invalid form data: no form file found for extensions: [.docx .xlsx .pptx ...]');
          return;
        }
        try {
          const conformance = fields.pdfa ? PDFA[fields.pdfa] : undefined;
          const pdf = await pool.convert(new Uint8Array(file.data), {
            from: file.filename!.split('.').pop()!,
            to: 'pdf',
            ...(conformance ? { pdf: { conformance } } : {}),
            ...(fields.metadata ? { embedded: JSON.parse(fields.metadata) as Record<string, string> } : {}),
          });
          res.setHeader('content-type', 'application/pdf');
          res.end(pdf);
        } catch (e) {
          res.statusCode = 400;
          res.end((e as Error).message);
        }
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await pool.ready();
});

afterAll(async () => {
  server?.closeAllConnections();
  server?.close();
  await pool?.stop();
});

describe('GotenbergConverter', () => {
  const docx = makeDocx(para('Through Gotenberg'));

  it('is what createConverter() picks when a Gotenberg URL is given, and probes /health', async () => {
    const c = createConverter({ gotenberg: { url: base } });
    expect(c).toBeInstanceOf(GotenbergConverter);
    await c.ready();
    expect(c.status()).toMatchObject({ kind: 'gotenberg', ready: true });
    await expect(new GotenbergConverter({ url: 'http://127.0.0.1:9' }).ready()).rejects.toThrow(/not reachable/);
  });

  it('converts with PDF/A, metadata and basic auth through the multipart contract', async () => {
    seen.length = 0;
    const c = new GotenbergConverter({ url: base.replace('http://', 'http://user:p%40ss@') });
    const pdf = await c.convert(docx, { from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA2B' }, embedded: { docgenId: 'g-1' } });
    expect(poppler('pdftotext', pdf)).toContain('Through Gotenberg');
    expect(pdfaIdentification(pdf)?.part).toBe(2);
    expect(seen).toEqual([
      {
        url: '/forms/libreoffice/convert',
        auth: `Basic ${Buffer.from('user:p@ss').toString('base64')}`,
        fields: { pdfa: 'PDF/A-2b', metadata: '{"docgenId":"g-1"}' },
        files: ['document.docx'],
      },
    ]);
    expect(poppler('pdfinfo', pdf, ['-custom'])).toMatch(/docgenId:\s*g-1/);
  });

  it('refuses what Gotenberg cannot do before uploading anything', async () => {
    seen.length = 0;
    const c = new GotenbergConverter({ url: base });
    expect((await rejection(c.convert(docx, { from: 'xlsx', to: 'csv' }))).code).toBe('UNSUPPORTED');
    expect((await rejection(c.convert(docx, { from: 'docx', to: 'pdf', pdf: { version: '1.5' } }))).code).toBe('UNSUPPORTED');
    expect(seen).toEqual([]);
  });

  it('maps a busy server to QUEUE_FULL and honours cancellation and its timeout', async () => {
    const c = new GotenbergConverter({ url: base, timeoutMs: 1000 });
    mode = 'busy';
    try {
      expect((await rejection(c.convert(docx, { from: 'docx', to: 'pdf' }))).code).toBe('QUEUE_FULL');
      mode = 'slow';
      const ac = new AbortController();
      const p = c.convert(docx, { from: 'docx', to: 'pdf', signal: ac.signal });
      setTimeout(() => ac.abort(), 100);
      expect((await rejection(p)).code).toBe('ABORTED');
      expect((await rejection(c.convert(docx, { from: 'docx', to: 'pdf' }))).code).toBe('TIMEOUT');
    } finally {
      mode = 'normal';
    }
  });
});

// A docx that links a local file and an http URL (images, INCLUDEPICTURE, INCLUDETEXT) must not pull
// either into the PDF. A control run with a naive cold `soffice --convert-to pdf` proves the document
// really does pull them when nothing stops it, so this test can fail.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool, sanitizeOoxml } from '../../../converter/index.ts';
import { gzipSync } from 'node:zlib';
import { fieldRun, makeDocx, para, pictureRun, png, poppler, relationship } from './fixtures.ts';

let dir: string;
let server: http.Server;
let port: number;
const hits: string[] = [];
let evil: Uint8Array;
let pool: LibreOfficePool;

const imageCount = (pdf: Uint8Array): number => poppler('pdfimages', pdf, ['-list']).trim().split('\n').length - 2;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convert-hardening-'));
  fs.writeFileSync(path.join(dir, 'secret.png'), png([220, 20, 20]));
  fs.writeFileSync(path.join(dir, 'secret.docx'), makeDocx(para('TOPSECRET-INCLUDED')));
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.setHeader('content-type', 'image/png');
    res.end(png([20, 220, 20]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  const secretUrl = pathToFileURL(path.join(dir, 'secret.png')).href;
  evil = makeDocx({
    body:
      para('Visible text') +
      pictureRun('rIdFile', 'link', 1) +
      pictureRun('rIdHttp', 'link', 2) +
      fieldRun(`INCLUDETEXT "${path.join(dir, 'secret.docx')}"`, 'cached include') +
      fieldRun(`INCLUDEPICTURE "http://127.0.0.1:${port}/includepicture.png" \\d`, '') +
      '<w:p><w:hyperlink r:id="rIdLink"><w:r><w:t>a normal link</w:t></w:r></w:hyperlink></w:p>',
    rels:
      relationship('rIdFile', 'image', secretUrl, true) +
      relationship('rIdHttp', 'image', `http://127.0.0.1:${port}/linked.png`, true) +
      relationship('rIdLink', 'hyperlink', `http://127.0.0.1:${port}/clicked-only`, true),
  });
  pool = new LibreOfficePool({ size: 1, log: () => {} });
  await pool.ready();
});

afterAll(async () => {
  await pool?.stop();
  server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('external content', () => {
  it('control: a naive cold soffice fetches the linked images', async () => {
    // Asynchronous on purpose: the http server lives in this process and must answer meanwhile.
    const input = path.join(dir, 'evil.docx');
    fs.writeFileSync(input, evil);
    hits.length = 0;
    const profile = pathToFileURL(path.join(dir, 'naive-profile')).href;
    const child = spawn(
      'soffice',
      [`-env:UserInstallation=${profile}`, '--headless', '--norestore', '--convert-to', 'pdf', '--outdir', dir, input],
      {
        stdio: 'ignore',
        detached: true,
        env: { ...process.env, TMPDIR: dir },
      },
    );
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
      child.once('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect(code).toBe(0);
    const pdf = new Uint8Array(fs.readFileSync(path.join(dir, 'evil.pdf')));
    expect(hits.some((h) => h === '/linked.png')).toBe(true);
    expect(imageCount(pdf)).toBeGreaterThan(0);
  });

  it('strips external relationships and import fields but keeps the http hyperlink', () => {
    const { removed } = sanitizeOoxml(evil, 'docx');
    expect(removed.join('\n')).toMatch(/rIdFile: external image → file:/);
    expect(removed.join('\n')).toMatch(/rIdHttp: external image → http:/);
    expect(removed.join('\n')).toMatch(/field INCLUDETEXT/);
    expect(removed.join('\n')).toMatch(/field INCLUDEPICTURE/);
    expect(removed.join('\n')).not.toMatch(/rIdLink/);
  });

  it('converts without fetching anything or embedding the linked images', async () => {
    hits.length = 0;
    const pdf = await pool.convert(evil, { from: 'docx', to: 'pdf' });
    const text = poppler('pdftotext', pdf);
    expect(text).toContain('Visible text');
    expect(text).toContain('a normal link');
    expect(text).not.toContain('TOPSECRET');
    expect(imageCount(pdf)).toBe(0);
    expect(hits).toEqual([]);
  });

  it('is also safe without the sanitizer (profile settings + sandbox)', async () => {
    const raw = new LibreOfficePool({ size: 1, unsafeSkipSanitize: true, log: () => {} });
    try {
      hits.length = 0;
      const pdf = await raw.convert(evil, { from: 'docx', to: 'pdf' });
      expect(imageCount(pdf)).toBe(0);
      expect(hits).toEqual([]);
    } finally {
      await raw.stop();
    }
  });
});

describe('images judged by their bytes (issue 25 §1), the sanitizer alone', () => {
  it('a gzip-compressed SVG named .svg loads no host file, even without the sandbox', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100">' +
      `<image width="100" height="100" xlink:href="${pathToFileURL(path.join(dir, 'secret.png')).href}"/></svg>`;
    const doc = makeDocx({
      body: para('Visible text') + pictureRun('rIdSvg', 'embed', 1),
      rels: '<Relationship Id="rIdSvg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/i.svg"/>',
      extra: { 'word/media/i.svg': gzipSync(svg) },
    });
    const unsandboxed = new LibreOfficePool({ size: 1, sandbox: 'off', log: () => {} });
    try {
      const pdf = await unsandboxed.convert(doc, { from: 'docx', to: 'pdf' });
      expect(poppler('pdftotext', pdf)).toContain('Visible text');
      expect(imageCount(pdf)).toBe(0);
    } finally {
      await unsandboxed.stop();
    }
  });
});

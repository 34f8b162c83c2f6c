// LibreOffice sees only its own job (issue 25 §1), at the root: the pool is called directly with documents
// the sanitizer never saw (unsafeSkipSanitize), whose SVG images point at files with file:// URLs. Inside
// the instance's job directory a file loads (so the document does fetch what it names); outside it (a
// PNG and a PDF on the host, a document in another tenant's storage, the pool's own directory) nothing
// does, whatever the format. The same documents without the sandbox embed every one of them: the test
// shows the leak it closes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { entryText, makeEntry, readZip, writeZip } from '../../../converter/zip.ts';
import { makeDocx, makePptx, para, pictureRun, png, poppler } from './fixtures.ts';

const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

let dir: string;
let sandboxed: LibreOfficePool;
let plain: LibreOfficePool;
/** file:// targets outside any job: a PNG and a PDF on the host, a stored document of another tenant. */
let outside: Record<string, string>;
let usrLocal: string;

const images = (pdf: Uint8Array): number => poppler('pdfimages', pdf, ['-list']).trim().split('\n').length - 2;

/** An SVG that draws each target with <image>, side by side. */
function svgOf(hrefs: string[]): string {
  return (
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="' +
    100 * hrefs.length +
    '" height="100">' +
    hrefs.map((h, i) => `<image x="${i * 100}" y="0" width="100" height="100" xlink:href="${h}"/>`).join('') +
    '</svg>'
  );
}

/** A docx whose one picture is the SVG part word/media/i.svg (gzip-compressed when `gzip`). */
function docxWith(svg: string, gzip: boolean): Uint8Array {
  return makeDocx({
    body: para('visible text') + pictureRun('rIdSvg', 'embed', 1),
    rels: `<Relationship Id="rIdSvg" Type="${REL}/image" Target="media/i.svg"/>`,
    extra: { 'word/media/i.svg': gzip ? gzipSync(svg) : svg },
  });
}

/** A pptx whose slide shows the gzip-compressed SVG ppt/media/i.svg as a picture. */
function pptxWith(svg: string): Uint8Array {
  const pic =
    '<p:pic><p:nvPicPr><p:cNvPr id="3" name="Picture"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>' +
    '<p:blipFill><a:blip r:embed="rIdSvg"/><a:stretch><a:fillRect/></a:stretch></p:blipFill>' +
    '<p:spPr><a:xfrm><a:off x="914400" y="2743200"/><a:ext cx="5486400" cy="1828800"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>';
  const entries = readZip(makePptx(['visible text'])).map((e) => {
    if (e.name === 'ppt/slides/slide1.xml') {
      return makeEntry(e.name, entryText(e).replace('</p:spTree>', `${pic}</p:spTree>`));
    }
    if (e.name === 'ppt/slides/_rels/slide1.xml.rels') {
      return makeEntry(
        e.name,
        entryText(e).replace('</Relationships>', `<Relationship Id="rIdSvg" Type="${REL}/image" Target="../media/i.svg"/></Relationships>`),
      );
    }
    return e;
  });
  return writeZip([...entries, makeEntry('ppt/media/i.svg', gzipSync(svg))]);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convert-sandbox-'));
  sandboxed = new LibreOfficePool({ size: 1, sandbox: 'required', unsafeSkipSanitize: true, log: () => {} });
  plain = new LibreOfficePool({ size: 1, sandbox: 'off', unsafeSkipSanitize: true, log: () => {} });
  await Promise.all([sandboxed.ready(), plain.ready()]);
  // A PDF made here, another tenant's stored document (same layout as the directory store's), a PNG, and a
  // PNG in the sandboxed pool's own directory (beside its instances' profiles and job directories).
  const pdf = await plain.convert(makeDocx(para('HOST PDF CANARY')), { from: 'docx', to: 'pdf' });
  const stored = path.join(dir, 'data', 'storage', 'subscriptions', 'tenant-a', 'documents', 'a-urn');
  fs.mkdirSync(path.dirname(stored), { recursive: true });
  fs.writeFileSync(stored, pdf);
  fs.writeFileSync(path.join(dir, 'host.pdf'), pdf);
  fs.writeFileSync(path.join(dir, 'host.png'), png([20, 200, 20]));
  fs.writeFileSync(path.join(sandboxed.baseDir, 'pool.png'), png([20, 20, 200]));
  // A PNG in /usr/local (a site's own installs, outside what the sandbox mounts of /usr): this machine's
  // tests run as root; test/unit/convert/sandbox-args.test.ts checks the mounts where they cannot write it.
  usrLocal = path.join('/usr/local/share', `docgen-sandbox-${process.pid}.png`);
  fs.writeFileSync(usrLocal, png([200, 200, 20]));
  outside = {
    'a PNG in /usr/local': `file://${usrLocal}`,
    'a PNG on the host': `file://${path.join(dir, 'host.png')}`,
    'a PDF on the host': `file://${path.join(dir, 'host.pdf')}`,
    "another tenant's stored document": `file://${stored}`,
    "the pool's own directory": `file://${path.join(sandboxed.baseDir, 'pool.png')}`,
  };
});

afterAll(async () => {
  await Promise.all([sandboxed?.stop(), plain?.stop()]);
  fs.rmSync(dir, { recursive: true, force: true });
  if (usrLocal) fs.rmSync(usrLocal, { force: true });
});

describe('the LibreOffice sandbox (bwrap), without the sanitizer', () => {
  it('runs every instance in the sandbox', () => {
    expect(sandboxed.status()).toMatchObject({ sandbox: 'bwrap', networkIsolation: 'bwrap --unshare-net' });
    expect(plain.status().sandbox).toBe('none');
  });

  it("loads a file inside the instance's job directory (/job in the sandbox): the documents below do fetch what they name", async () => {
    fs.writeFileSync(path.join(sandboxed.baseDir, 'jobs', '0', 'own.png'), png([200, 20, 20]));
    const pdf = await sandboxed.convert(docxWith(svgOf(['file:///job/own.png']), true), { from: 'docx', to: 'pdf' });
    expect(images(pdf)).toBe(1);
  });

  for (const [format, make] of [
    ['docx, svgz', (s: string) => docxWith(s, true)],
    ['docx, plain SVG', (s: string) => docxWith(s, false)],
    ['pptx, svgz', pptxWith],
  ] as const) {
    it(`reads nothing outside the job (${format})`, async () => {
      for (const [what, url] of Object.entries(outside)) {
        const doc = make(svgOf([url]));
        const from = format.startsWith('pptx') ? 'pptx' : 'docx';
        // Control: without the sandbox the same document embeds the file.
        expect(images(await plain.convert(doc, { from, to: 'pdf' })), `${what} without the sandbox`).toBe(1);
        const pdf = await sandboxed.convert(doc, { from, to: 'pdf' });
        expect(images(pdf), what).toBe(0);
        expect(poppler('pdftotext', pdf)).toContain('visible text');
        expect(poppler('pdftotext', pdf)).not.toContain('CANARY');
      }
    });
  }
});

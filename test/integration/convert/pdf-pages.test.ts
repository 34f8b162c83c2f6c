// The page count that meters `pages-generated` (converter/pdf.ts, read by hand) against pdf.js
// (pdfjs-dist) on PDFs other programs wrote: LibreOffice (cold, and through docgen's pool, which appends an
// incremental update of its own), Chromium's print, Ghostscript, qpdf's object streams and linearization,
// and incremental updates that change the page count, written as a classic table, an xref stream with an
// object stream, and a hybrid file (one with the page tree's /Count as an indirect object).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfPageCount } from '../../../converter/pdf.ts';
import { LibreOfficePool } from '../../../converter/pool.ts';
import { appendPageUpdate, type PageUpdate } from '../../support/pdf-update.ts';
import { makePptx, makeXlsx, pagedDocx } from './fixtures.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-pdf-pages-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function pdfjsPages(bytes: Uint8Array): Promise<number> {
  const task = getDocument({ data: bytes.slice(), verbosity: 0 });
  try {
    return (await task.promise).numPages;
  } finally {
    await task.destroy();
  }
}

/** Our count, pdf.js's, and the count the file was made with, side by side. */
async function counts(bytes: Uint8Array, expected: number) {
  return { ours: pdfPageCount(bytes), pdfjs: await pdfjsPages(bytes), expected };
}

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
}

/** A file written by `write(path)`, read back. */
function made(name: string, write: (file: string) => void): Uint8Array {
  const file = path.join(tmp, name);
  write(file);
  return new Uint8Array(fs.readFileSync(file));
}

/** LibreOffice's own export, cold: `soffice --convert-to pdf`. */
function libreOffice(name: string, input: Uint8Array): Uint8Array {
  const src = path.join(tmp, name);
  fs.writeFileSync(src, input);
  const outDir = path.join(tmp, `lo-${name}`);
  run('soffice', [
    `-env:UserInstallation=${pathToFileURL(path.join(tmp, 'lo-profile')).href}`,
    '--headless',
    '--norestore',
    '--convert-to',
    'pdf',
    '--outdir',
    outDir,
    src,
  ]);
  return new Uint8Array(fs.readFileSync(path.join(outDir, `${path.parse(name).name}.pdf`)));
}

/** PostScript that draws `pages` pages: Ghostscript distils it. */
function postscript(pages: number): string {
  return `%!PS\n/Helvetica findfont 24 scalefont setfont\n1 1 ${pages} { 72 700 moveto (Page ) show 3 string cvs show showpage } for\n`;
}

/** qpdf's rewrites of a file: its objects in object streams (an xref stream), and linearized. */
function qpdf(name: string, bytes: Uint8Array, args: string[]): Uint8Array {
  const src = path.join(tmp, `${name}.src.pdf`);
  fs.writeFileSync(src, bytes);
  return made(`${name}.pdf`, (out) => run('qpdf', [...args, src, out]));
}

describe('PDF page counts agree with pdf.js', () => {
  const files = new Map<string, { bytes: Uint8Array; pages: number }>();
  let pool: LibreOfficePool;

  beforeAll(async () => {
    pool = new LibreOfficePool({ size: 1, log: () => {} });
    await pool.ready();
  }, 180_000);
  afterAll(async () => {
    await pool?.stop();
  });

  it(
    'on what LibreOffice writes (docx, xlsx, pptx; cold, and through the pool with its Info update, PDF/A too)',
    { timeout: 240_000 },
    async () => {
      const docx = pagedDocx(12);
      const xlsx = makeXlsx([
        { name: 'One', rows: [['a', 1]] },
        { name: 'Two', rows: [['b', 2]] },
        { name: 'Three', rows: [['c', 3]] },
      ]);
      const pptx = makePptx(['one', 'two', 'three', 'four', 'five']);
      files.set('lo-docx', { bytes: libreOffice('paged.docx', docx), pages: 12 });
      files.set('lo-xlsx', { bytes: libreOffice('sheets.xlsx', xlsx), pages: 3 });
      files.set('lo-pptx', { bytes: libreOffice('slides.pptx', pptx), pages: 5 });
      files.set('pool-docx', { bytes: await pool.convert(docx, { from: 'docx', to: 'pdf' }), pages: 12 });
      files.set('pool-pdfa', { bytes: await pool.convert(pptx, { from: 'pptx', to: 'pdf', pdf: { conformance: 'PdfA2B' } }), pages: 5 });
      for (const name of ['lo-docx', 'lo-xlsx', 'lo-pptx', 'pool-docx', 'pool-pdfa']) {
        const f = files.get(name)!;
        expect(await counts(f.bytes, f.pages), name).toEqual({ ours: f.pages, pdfjs: f.pages, expected: f.pages });
      }
    },
  );

  it("on Chromium's print to PDF and on Ghostscript's pdfwrite", { timeout: 120_000 }, async () => {
    const html = path.join(tmp, 'print.html');
    fs.writeFileSync(
      html,
      `<html><body>${['One', 'Two', 'Three', 'Four'].map((p) => `<div style="page-break-after: always">${p}</div>`).join('')}<div>Five</div></body></html>`,
    );
    const chromium = made('chromium.pdf', (out) =>
      run(process.env.CHROMIUM ?? 'chromium', [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--no-pdf-header-footer',
        `--print-to-pdf=${out}`,
        pathToFileURL(html).href,
      ]),
    );
    fs.writeFileSync(path.join(tmp, 'pages.ps'), postscript(7));
    const gs = made('gs.pdf', (out) =>
      run('gs', ['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER', '-sDEVICE=pdfwrite', `-sOutputFile=${out}`, 'pages.ps']),
    );
    // Ghostscript rewriting LibreOffice's file (a distiller in a print pipeline).
    fs.writeFileSync(path.join(tmp, 'from-lo.pdf'), files.get('lo-docx')!.bytes);
    const gsFromLo = made('gs-lo.pdf', (out) =>
      run('gs', ['-q', '-dNOPAUSE', '-dBATCH', '-dSAFER', '-sDEVICE=pdfwrite', `-sOutputFile=${out}`, 'from-lo.pdf']),
    );
    files.set('chromium', { bytes: chromium, pages: 5 });
    files.set('gs', { bytes: gs, pages: 7 });
    files.set('gs-lo', { bytes: gsFromLo, pages: 12 });
    for (const name of ['chromium', 'gs', 'gs-lo']) {
      const f = files.get(name)!;
      expect(await counts(f.bytes, f.pages), name).toEqual({ ours: f.pages, pdfjs: f.pages, expected: f.pages });
    }
  });

  it('on object streams (an xref stream) and linearized files (qpdf)', async () => {
    for (const name of ['chromium', 'gs', 'lo-pptx']) {
      const f = files.get(name)!;
      const variants = {
        [`${name}-objstm`]: qpdf(`${name}-objstm`, f.bytes, ['--object-streams=generate']),
        [`${name}-linear`]: qpdf(`${name}-linear`, f.bytes, ['--linearize']),
        [`${name}-linear-objstm`]: qpdf(`${name}-linear-objstm`, f.bytes, ['--linearize', '--object-streams=generate']),
      };
      for (const [variant, bytes] of Object.entries(variants)) {
        expect(Buffer.from(bytes).toString('latin1')).toMatch(variant.endsWith('linear') ? /\/Linearized/ : /\/ObjStm|\/Linearized/);
        expect(await counts(bytes, f.pages), variant).toEqual({ ours: f.pages, pdfjs: f.pages, expected: f.pages });
        files.set(variant, { bytes, pages: f.pages });
      }
    }
  });

  it('on incremental updates that drop or add a page: classic table, xref stream with an object stream, hybrid', async () => {
    const cases: [string, PageUpdate['xref'], boolean?][] = [
      ['gs', 'table'],
      ['gs', 'table', true],
      ['gs-objstm', 'stream', true],
      ['chromium', 'table'],
      ['pool-docx', 'table'],
      ['gs-objstm', 'stream'],
      ['chromium-objstm', 'stream'],
      ['lo-pptx-linear-objstm', 'stream'],
      ['gs', 'hybrid'],
      ['chromium', 'hybrid'],
    ];
    for (const [name, xref, indirectCount = false] of cases) {
      const f = files.get(name)!;
      for (const [change, pages] of [
        ['drop-last-page', f.pages - 1],
        ['add-page', f.pages + 1],
      ] as const) {
        const once = appendPageUpdate(f.bytes, { change, xref, indirectCount });
        expect(await counts(once, pages), `${name} ${xref} ${change}`).toEqual({ ours: pages, pdfjs: pages, expected: pages });
        // A second update on top of the first: the newest section wins over both before it.
        const twice = appendPageUpdate(once, { change, xref, indirectCount });
        const again = change === 'add-page' ? pages + 1 : pages - 1;
        expect(await counts(twice, again), `${name} ${xref} ${change} twice`).toEqual({ ours: again, pdfjs: again, expected: again });
      }
    }
  });
});

// Real conversions through the module-level default converter (a warm LibreOffice pool).
import { keepPdfA } from '../../support/pdfa-outputs.ts';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  configureConverter,
  convert,
  converterAvailable,
  converterStatus,
  countPages,
  pageCount,
  pdfaIdentification,
  pdfPageCount,
  readOfficeCustomProperties,
  shutdownConverter,
  startConverter,
} from '../../../converter/index.ts';
import { rejection } from '../../support/convert-error.ts';
import { makeDocx, makePptx, makeXlsx, pagedDocx, para, pdfinfoPages, poppler } from './fixtures.ts';

const text = (pdf: Uint8Array): string => poppler('pdftotext', pdf);

beforeAll(async () => {
  configureConverter({ poolSize: 2 });
  const st = await startConverter();
  expect(st.ready).toBe(true);
});

afterAll(async () => {
  await shutdownConverter();
});

describe('availability and readiness', () => {
  it('reports the embedded pool as available, ready, in its bwrap sandbox without network', () => {
    const a = converterAvailable();
    expect(a).toMatchObject({ available: true, kind: 'libreoffice' });
    const st = converterStatus()!;
    expect(st.instances).toHaveLength(2);
    expect(st.instances.every((i) => i.state === 'idle' && i.pid !== null)).toBe(true);
    // .ci/install-converter.sh installs bubblewrap: CONVERTER_SANDBOX=auto must then use it.
    expect(st.sandbox).toBe('bwrap');
    expect(st.networkIsolation).toBe('bwrap --unshare-net');
    expect(st.isolation).toBe('bwrap sandbox (filesystem and network)');
  });
});

describe('pdf', () => {
  it('converts docx to pdf and counts pages exactly', async () => {
    const pdf = await convert(pagedDocx(3, 'Chapter'), { from: 'docx', to: 'pdf' });
    expect(Buffer.from(pdf.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(pdfinfoPages(pdf)).toBe(3);
    expect(pdfPageCount(pdf)).toBe(3);
    expect(await countPages(pdf, 'pdf')).toBe(3);
    expect(text(pdf)).toContain('Chapter 3 of 3');
  });

  it('converts xlsx and pptx to pdf', async () => {
    const [x, p] = await Promise.all([
      convert(
        makeXlsx([
          {
            name: 'Data',
            rows: [
              ['Name', 'Amount'],
              ['Widget', 42],
            ],
          },
        ]),
        { from: 'xlsx', to: 'pdf' },
      ),
      convert(makePptx(['First slide', 'Second slide', 'Third slide']), { from: 'pptx', to: 'pdf' }),
    ]);
    expect(text(x)).toContain('Widget');
    expect(pdfinfoPages(p)).toBe(3);
    expect(text(p)).toContain('Third slide');
  });

  it.each([
    ['PdfA1B', 1],
    ['PdfA2B', 2],
    ['PdfA3B', 3],
  ] as const)('produces %s, identified as such in the XMP metadata', async (conformance, part) => {
    const pdf = await convert(makeDocx(para('Archival copy')), { from: 'docx', to: 'pdf', pdf: { conformance } });
    keepPdfA(pdf, `convert-${conformance}`);
    // LibreOffice tags every PDF/A-1 and then declares conformance A, which includes B.
    expect(pdfaIdentification(pdf)).toEqual({ part, conformance: part === 1 ? 'A' : 'B' });
    if (part === 1) expect(poppler('pdfinfo', pdf)).toMatch(/PDF version:\s+1\.4/);
  });

  it('honours a plain PDF version and has no PDF/A id then', async () => {
    const pdf = await convert(makeDocx(para('v15')), { from: 'docx', to: 'pdf', pdf: { version: '1.5' } });
    expect(Buffer.from(pdf.subarray(0, 8)).toString()).toBe('%PDF-1.5');
    expect(pdfaIdentification(pdf)).toBeNull();
  });

  it('writes embedded data into the PDF document information, also for PDF/A', async () => {
    const embedded = { docgenOperationId: 'op-123', note: 'Grüße (parens) \\ backslash' };
    for (const conformance of [undefined, 'PdfA2B'] as const) {
      const pdf = await convert(makeDocx(para('Meta')), {
        from: 'docx',
        to: 'pdf',
        embedded,
        ...(conformance ? { pdf: { conformance } } : {}),
      });
      const info = poppler('pdfinfo', pdf, ['-custom']);
      expect(info).toMatch(/docgenOperationId:\s*op-123/);
      expect(info).toContain('Grüße (parens) \\ backslash');
      expect(pdfPageCount(pdf)).toBe(1);
      if (conformance) expect(pdfaIdentification(pdf)?.part).toBe(2);
    }
  });
});

describe('csv', () => {
  const book = makeXlsx([
    {
      name: 'First',
      rows: [
        ['Name', 'City'],
        ['Zoë', 'Köln, DE'],
        ['Art', 'Paris'],
      ],
    },
    {
      name: 'Second',
      rows: [
        ['Sheet', 'two'],
        [1.5, 2],
      ],
    },
  ]);

  it('defaults to the first sheet, comma, UTF-8, quoting only where needed', async () => {
    const csv = Buffer.from(await convert(book, { from: 'xlsx', to: 'csv' })).toString('utf8');
    expect(csv.split(/\r?\n/).filter(Boolean)).toEqual(['Name,City', 'Zoë,"Köln, DE"', 'Art,Paris']);
  });

  it('selects a sheet by name or number, with a separator', async () => {
    const byName = Buffer.from(await convert(book, { from: 'xlsx', to: 'csv', csv: { sheet: 'Second', separator: ';' } })).toString('utf8');
    const byNumber = Buffer.from(await convert(book, { from: 'xlsx', to: 'csv', csv: { sheet: 2, separator: '\t' } })).toString('utf8');
    expect(byName.split(/\r?\n/)[1]).toBe('1.5;2');
    expect(byNumber.split(/\r?\n/)[0]).toBe('Sheet\ttwo');
  });

  it('encodes as asked', async () => {
    const latin = await convert(book, { from: 'xlsx', to: 'csv', csv: { encoding: 'windows-1252' } });
    expect(Buffer.from(latin).toString('latin1')).toContain('Zoë');
    expect([...latin]).toContain(0xeb); // ë as one byte
    const utf16 = await convert(book, { from: 'xlsx', to: 'csv', csv: { encoding: 'utf-16' } });
    const decoded = new TextDecoder('utf-16le').decode(utf16);
    expect(decoded).toContain('Zoë');
  });

  it('refuses a missing sheet and csv from anything but xlsx', async () => {
    expect((await rejection(convert(book, { from: 'xlsx', to: 'csv', csv: { sheet: 'Nope' } }))).code).toBe('CONVERSION_FAILED');
    expect((await rejection(convert(makeDocx(para('x')), { from: 'docx', to: 'csv' }))).code).toBe('UNSUPPORTED');
  });
});

describe('same-format output and page metering', () => {
  it('writes embedded data as custom properties into a docx that LibreOffice still opens', async () => {
    const out = await convert(makeDocx(para('Custom')), { from: 'docx', to: 'docx', embedded: { docgenId: 'abc', 'a.b': 'x<y&z' } });
    expect(readOfficeCustomProperties(out)).toEqual({ docgenId: 'abc', 'a.b': 'x<y&z' });
    expect(text(await convert(out, { from: 'docx', to: 'pdf' }))).toContain('Custom');
  });

  it('counts by the documented rule', async () => {
    expect(await pageCount(makePptx(['a', 'b']), 'pptx')).toEqual({ pages: 2, method: 'slides', exact: true });
    expect(await pageCount(pagedDocx(4), 'docx')).toEqual({ pages: 4, method: 'layout', exact: true });
    const stale = makeDocx({ body: para('one page'), app: '<Pages>7</Pages>' });
    expect(await pageCount(stale, 'docx', { render: null, count: null })).toEqual({ pages: 7, method: 'app.xml', exact: false });
    expect(await pageCount(stale, 'docx')).toMatchObject({ pages: 1, method: 'layout' });
    // PAGE_COUNT=document: the document's own statistic even with a converter at hand.
    expect(await pageCount(stale, 'docx', { statistic: 'document' })).toEqual({ pages: 7, method: 'app.xml', exact: false });
    expect(await pageCount(new TextEncoder().encode('a,b\n'), 'csv')).toMatchObject({ pages: 1 });
  });

  it('counts the pages of the layout as many as the PDF rendition has, without writing the PDF', async () => {
    const rows = Array.from({ length: 150 }, (_, i) => [`row ${i}`, i]);
    const cases: [Uint8Array, 'docx' | 'xlsx'][] = [
      [pagedDocx(3, 'Chapter'), 'docx'],
      [makeDocx(Array.from({ length: 120 }, (_, i) => para(`Line ${i} of a long letter`)).join('')), 'docx'],
      [
        makeXlsx([
          { name: 'Data', rows },
          { name: 'More', rows: [['x', 1]] },
        ]),
        'xlsx',
      ],
    ];
    for (const [doc, from] of cases) {
      const layout = await pageCount(doc, from);
      const rendition = await pageCount(doc, from, { count: null });
      expect(layout.method).toBe('layout');
      expect(rendition.method).toBe('rendition');
      expect(layout.pages).toBe(rendition.pages);
      expect(layout.pages).toBeGreaterThan(1);
    }

    // A section that starts on an odd page: the layout inserts a blank page 2 (Writer's view has 3 pages);
    // the PDF export skips it, and so does the count.
    const oddSection = makeDocx(
      para('one') +
        '<w:p><w:pPr><w:sectPr><w:pgSz w:w="11906" w:h="16838"/></w:sectPr></w:pPr><w:r><w:t>end of one</w:t></w:r></w:p>' +
        para('three') +
        '<w:sectPr><w:type w:val="oddPage"/><w:pgSz w:w="11906" w:h="16838"/></w:sectPr>',
    );
    expect(await pageCount(oddSection, 'docx', { count: null })).toMatchObject({ pages: 2, method: 'rendition' });
    expect(await pageCount(oddSection, 'docx')).toMatchObject({ pages: 2, method: 'layout' });
  });
});

describe('refusals', () => {
  it('maps bad input and options to stable codes', async () => {
    const docx = makeDocx(para('x'));
    expect((await rejection(convert(new Uint8Array([1, 2, 3]), { from: 'docx', to: 'pdf' }))).code).toBe('BAD_INPUT');
    expect((await rejection(convert(docx, { from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA2A' } }))).code).toBe('BAD_OPTIONS');
    expect((await rejection(convert(docx, { from: 'doc', to: 'pdf' }))).code).toBe('UNSUPPORTED');
    expect((await rejection(convert(docx, { from: 'docx', to: 'xlsx' }))).code).toBe('UNSUPPORTED');
    const macro = makeDocx({ body: para('m'), extra: { 'word/vbaProject.bin': new Uint8Array([0xd0, 0xcf]) } });
    expect((await rejection(convert(macro, { from: 'docx', to: 'pdf' }))).message).toMatch(/macro/);
  });

  it('keeps working after a document LibreOffice cannot load', async () => {
    const broken = makeDocx('<w:p><w:r><w:t>unterminated');
    const e = await rejection(convert(broken, { from: 'docx', to: 'pdf' }));
    expect(['CONVERSION_FAILED', 'BAD_INPUT']).toContain(e.code);
    expect(text(await convert(makeDocx(para('still fine')), { from: 'docx', to: 'pdf' }))).toContain('still fine');
  });
});

describe('module-level converter in a plain script', () => {
  it('lets a script import convert(), use it, and exit by itself without leaving LibreOffice behind', async () => {
    const mod = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../converter/index.ts');
    const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'fixtures.ts');
    const script = `import { configureConverter, convert } from ${JSON.stringify(mod)}; import { makeDocx, para } from ${JSON.stringify(fixtures)};
      configureConverter({ poolSize: 1 });
      const pdf = await convert(makeDocx(para('from a script')), { from: 'docx', to: 'pdf' });
      console.log('pdf bytes', pdf.length);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => child.kill('SIGKILL'), 45_000);
      child.once('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect(code).toBe(0);
    expect(out).toMatch(/pdf bytes \d+/);
    await new Promise((r) => setTimeout(r, 300));
    const left = spawnSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => !l.startsWith('Z') && l.includes(`name=docgen-${child.pid}-`));
    expect(left).toEqual([]);
  });
});

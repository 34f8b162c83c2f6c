// Converter pieces that need no LibreOffice: option planning, the sanitizer, zip, PDF reading and
// writing, custom properties, page rules, availability switches.
import { deflateSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  configureConverter,
  ConvertError,
  convert,
  converterAvailable,
  DEFAULT_CONVERTER_SETTINGS,
  pageCount,
  pdfaIdentification,
  pdfPageCount,
  readOfficeCustomProperties,
  sanitizeOoxml,
  setOfficeCustomProperties,
} from '../../../converter/index.ts';
import { planConversion } from '../../../converter/options.ts';
import { addPdfInfo } from '../../../converter/pdf.ts';
import { entryText, makeEntry, readZip, writeZip } from '../../../converter/zip.ts';
import { fieldRun, makeDocx, makePptx, makeXlsx, para, relationship } from '../../integration/convert/fixtures.ts';

function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConvertError);
    return (e as ConvertError).code;
  }
  throw new Error('expected a throw');
}

describe('planConversion', () => {
  it('maps PDF conformance and versions to LibreOffice filter data', () => {
    expect(planConversion({ from: 'DOCX', to: 'pdf', pdf: { conformance: 'PdfA2B' } })).toMatchObject({
      filter: 'writer_pdf_Export',
      filterData: { SelectPdfVersion: 2 },
      pdfaPart: 2,
    });
    expect(planConversion({ from: 'xlsx', to: 'pdf', pdf: { conformance: 'pdfa-1b' } })).toMatchObject({
      filter: 'calc_pdf_Export',
      pdfaPart: 1,
    });
    expect(planConversion({ from: 'pptx', to: 'pdf', pdf: { version: '1.7' } })).toMatchObject({
      filter: 'impress_pdf_Export',
      filterData: { SelectPdfVersion: 17 },
    });
    expect(planConversion({ from: 'docx', to: 'pdf', pdf: { conformance: 'PdfUa1' } }).filterData).toEqual({
      SelectPdfVersion: 0,
      PDFUACompliance: true,
    });
    // PDF/A fixes the version; a contradicting version is ignored rather than producing a non-PDF/A.
    expect(planConversion({ from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA1B', version: '1.7' } }).filterData).toEqual({
      SelectPdfVersion: 1,
    });
    expect(codeOf(() => planConversion({ from: 'docx', to: 'pdf', pdf: { conformance: 'PdfA3A' } }))).toBe('BAD_OPTIONS');
    expect(codeOf(() => planConversion({ from: 'docx', to: 'pdf', pdf: { version: '2.0' } }))).toBe('BAD_OPTIONS');
  });

  it('builds CSV filter options and validates them', () => {
    expect(planConversion({ from: 'xlsx', to: 'csv' })).toMatchObject({
      filterOptions: '44,34,76,1,,0,false,true,true,false,false',
      csvSheet: 1,
    });
    expect(planConversion({ from: 'xlsx', to: 'csv', csv: { separator: ';', encoding: 'ISO-8859-1', sheet: '3' } })).toMatchObject({
      filterOptions: '59,34,12,1,,0,false,true,true,false,false',
      csvSheet: 3,
    });
    expect(planConversion({ from: 'xlsx', to: 'csv', csv: { sheet: 'Totals' } }).csvSheet).toBe('Totals');
    expect(codeOf(() => planConversion({ from: 'xlsx', to: 'csv', csv: { separator: ';;' } }))).toBe('BAD_OPTIONS');
    expect(codeOf(() => planConversion({ from: 'xlsx', to: 'csv', csv: { encoding: 'klingon' } }))).toBe('BAD_OPTIONS');
    expect(codeOf(() => planConversion({ from: 'xlsx', to: 'csv', csv: { sheet: 0 } }))).toBe('BAD_OPTIONS');
    expect(codeOf(() => planConversion({ from: 'pptx', to: 'csv' }))).toBe('UNSUPPORTED');
  });

  it('refuses unknown formats and unsafe property names', () => {
    expect(codeOf(() => planConversion({ from: 'docm', to: 'pdf' }))).toBe('UNSUPPORTED');
    expect(codeOf(() => planConversion({ from: 'docx', to: 'html' }))).toBe('UNSUPPORTED');
    expect(codeOf(() => planConversion({ from: 'docx', to: 'pdf', embedded: { 'bad name': 'x' } }))).toBe('BAD_OPTIONS');
    expect(codeOf(() => planConversion({ from: 'docx', to: 'pdf', embedded: { 'a/b': 'x' } }))).toBe('BAD_OPTIONS');
  });
});

describe('zip', () => {
  it('round-trips entries and refuses unsafe names', () => {
    const z = writeZip([makeEntry('a.xml', '<a/>'), makeEntry('dir/b.txt', 'héllo')]);
    const entries = readZip(z);
    expect(entries.map((e) => [e.name, entryText(e)])).toEqual([
      ['a.xml', '<a/>'],
      ['dir/b.txt', 'héllo'],
    ]);
    expect(codeOf(() => readZip(writeZip([makeEntry('../evil', 'x')])))).toBe('BAD_INPUT');
    expect(codeOf(() => readZip(writeZip([makeEntry('/abs', 'x')])))).toBe('BAD_INPUT');
    expect(codeOf(() => readZip(new Uint8Array(100)))).toBe('BAD_INPUT');
  });

  it('does not inflate past the declared size (zip bomb)', () => {
    const big = makeEntry('bomb.xml', 'a'.repeat(1_000_000));
    const lying = { ...big, size: 10 };
    const e = readZip(writeZip([lying]))[0]!;
    expect(codeOf(() => entryText(e))).toBe('BAD_INPUT');
    expect(codeOf(() => readZip(writeZip([big]), { maxParts: 10, maxPartBytes: 1000, maxTotalBytes: 1000, maxRatio: 1000 }))).toBe(
      'BAD_INPUT',
    );
  });
});

describe('sanitizeOoxml', () => {
  it('returns the input untouched when nothing is external', () => {
    const docx = makeDocx({ body: para('x'), rels: relationship('rId9', 'hyperlink', 'https://example.org/', true) });
    const r = sanitizeOoxml(docx, 'docx');
    expect(r.removed).toEqual([]);
    expect(r.bytes).toBe(docx);
  });

  it('removes external non-hyperlink relationships, file: hyperlinks and altChunks', () => {
    const docx = makeDocx({
      body: para('x') + '<w:altChunk r:id="rIdAlt"/>',
      rels:
        relationship('rIdImg', 'image', 'http://10.0.0.1/x.png', true) +
        relationship('rIdOle', 'oleObject', '\\\\server\\share\\x.xls', true) +
        relationship('rIdFileLink', 'hyperlink', 'file:///etc/passwd', true) +
        relationship('rIdOk', 'hyperlink', 'mailto:a@b.c', true) +
        relationship('rIdAlt', 'aFChunk', 'chunk.html', false),
    });
    const r = sanitizeOoxml(docx, 'docx');
    expect(r.removed).toHaveLength(4);
    const entries = readZip(r.bytes);
    const rels = entryText(entries.find((e) => e.name === 'word/_rels/document.xml.rels')!);
    expect(rels).toContain('rIdOk');
    expect(rels).not.toMatch(/rIdImg|rIdOle|rIdFileLink|rIdAlt/);
    expect(entryText(entries.find((e) => e.name === 'word/document.xml')!)).not.toContain('altChunk');
  });

  it('blanks import fields even when the instruction is split over runs, keeping cached results', () => {
    const split =
      '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> INCLUDE</w:instrText></w:r>' +
      '<w:r><w:instrText>TEXT "c:\\\\secret.docx"</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>' +
      '<w:r><w:t>kept</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>';
    const simple = '<w:fldSimple w:instr=" LINK Excel.Sheet.8 &quot;c:\\\\a.xls&quot; "><w:r><w:t>old</w:t></w:r></w:fldSimple>';
    const harmless = fieldRun('PAGE', '1');
    const r = sanitizeOoxml(makeDocx(split + simple + harmless), 'docx');
    expect(r.removed).toHaveLength(2);
    const doc = entryText(readZip(r.bytes).find((e) => e.name === 'word/document.xml')!);
    expect(doc).not.toMatch(/INCLUDE|TEXT "|LINK/);
    expect(doc).toContain('PAGE');
    expect(doc).toContain('kept');
  });

  it('refuses macros and DOCTYPEs', () => {
    expect(codeOf(() => sanitizeOoxml(makeDocx({ body: para('x'), extra: { 'word/vbaProject.bin': 'x' } }), 'docx'))).toBe('BAD_INPUT');
    expect(
      codeOf(() =>
        sanitizeOoxml(makeDocx({ body: para('x'), extra: { 'customXml/item1.xml': '<!DOCTYPE x [<!ENTITY a "b">]><x/>' } }), 'docx'),
      ),
    ).toBe('BAD_INPUT');
    expect(codeOf(() => sanitizeOoxml(writeZip([makeEntry('a.txt', 'x')]), 'docx'))).toBe('BAD_INPUT');
  });

  it('strips external links from xlsx and pptx too', () => {
    const xlsx = makeXlsx([{ name: 'S', rows: [['a']] }]);
    const entries = readZip(xlsx).map((e) =>
      e.name !== 'xl/_rels/workbook.xml.rels'
        ? e
        : makeEntry(
            e.name,
            entryText(e).replace(
              '</Relationships>',
              relationship('rIdX', 'externalLinkPath', 'file:///c:/other.xlsx', true) + '</Relationships>',
            ),
          ),
    );
    expect(sanitizeOoxml(writeZip(entries), 'xlsx').removed).toEqual([
      'xl/_rels/workbook.xml.rels#rIdX: external externalLinkPath → file:///c:/other.xlsx',
    ]);
    const pptx = makePptx(['s']);
    const p2 = readZip(pptx).map((e) =>
      e.name !== 'ppt/slides/_rels/slide1.xml.rels'
        ? e
        : makeEntry(
            e.name,
            entryText(e).replace('</Relationships>', relationship('rIdV', 'video', 'http://x/y.mp4', true) + '</Relationships>'),
          ),
    );
    expect(sanitizeOoxml(writeZip(p2), 'pptx').removed).toHaveLength(1);
  });
});

// A small classic-xref PDF with `pages` pages, built by hand.
function tinyPdf(pages: number): Uint8Array {
  const objs: string[] = [];
  const kids = Array.from({ length: pages }, (_, i) => `${3 + i} 0 R`).join(' ');
  objs.push('<< /Type /Catalog /Pages 2 0 R >>');
  objs.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  for (let i = 0; i < pages; i++) objs.push('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>');
  objs.push('<< /Title (Tiny) /Producer (hand) >>');
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objs.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n` + offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R /Info ${objs.length} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return new Uint8Array(Buffer.from(out, 'latin1'));
}

describe('pdf', () => {
  it('counts pages from the page tree, also in object streams', () => {
    expect(pdfPageCount(tinyPdf(5))).toBe(5);
    // xref-stream style: the page tree lives in a compressed object stream.
    const inner = '1 0 2 33 ';
    const body = '<< /Type /Catalog /Pages 2 0 R >><< /Type /Pages /Kids [] /Count 12 >>';
    const data = deflateSync(Buffer.from(inner + body, 'latin1'));
    const head = `%PDF-1.5\n3 0 obj\n<< /Type /ObjStm /N 2 /First ${inner.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`;
    const xrefAt = head.length + data.length + '\nendstream\nendobj\n'.length;
    const tail = `\nendstream\nendobj\n4 0 obj\n<< /Type /XRef /Root 1 0 R /Size 5 >>\nstream\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`;
    const pdf = new Uint8Array(Buffer.concat([Buffer.from(head, 'latin1'), data, Buffer.from(tail, 'latin1')]));
    expect(pdfPageCount(pdf)).toBe(12);
    expect(codeOf(() => pdfPageCount(new TextEncoder().encode('hello')))).toBe('BAD_INPUT');
  });

  it('adds custom info keys with an incremental update', () => {
    const pdf = tinyPdf(2);
    const out = addPdfInfo(pdf, { docgenId: 'x (1)', name: 'Zoë' });
    const text = Buffer.from(out).toString('latin1');
    expect(Buffer.from(out.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(true);
    expect(text).toContain('/Title (Tiny)');
    expect(text).toContain('/docgenId (x \\(1\\))');
    expect(text).toContain('/name <FEFF005A006F00EB>');
    expect(text).toMatch(/\/Prev \d+/);
    expect(pdfPageCount(out)).toBe(2);
  });

  it('reads the PDF/A identification in both XMP spellings', () => {
    const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(pdfaIdentification(enc('<pdfaid:part>2</pdfaid:part><pdfaid:conformance>B</pdfaid:conformance>'))).toEqual({
      part: 2,
      conformance: 'B',
    });
    expect(pdfaIdentification(enc('pdfaid:part="3" pdfaid:conformance="b"'))).toEqual({ part: 3, conformance: 'B' });
    expect(pdfaIdentification(enc('%PDF-1.7'))).toBeNull();
  });
});

describe('office outputs', () => {
  it('adds and replaces custom properties without a converter', async () => {
    const once = setOfficeCustomProperties(makeDocx(para('x')), { a: '1', b: 'x&y' });
    const twice = await convert(once, { from: 'docx', to: 'docx', embedded: { b: '2', c: '<3>' } });
    expect(readOfficeCustomProperties(twice)).toEqual({ a: '1', b: '2', c: '<3>' });
    const ct = entryText(readZip(twice).find((e) => e.name === '[Content_Types].xml')!);
    expect(ct.match(/custom-properties/g)).toHaveLength(1);
  });

  it('counts pages by rule without a converter', async () => {
    expect(await pageCount(makePptx(['1', '2', '3']), 'pptx', { render: null })).toMatchObject({ pages: 3, exact: true });
    expect(await pageCount(makeDocx(para('x')), 'docx', { render: null })).toEqual({ pages: 1, method: 'fallback', exact: false });
    expect(
      await pageCount(
        makeXlsx([
          { name: 'a', rows: [] },
          { name: 'b', rows: [] },
        ]),
        'xlsx',
        { render: null },
      ),
    ).toEqual({ pages: 2, method: 'sheets', exact: false });
    expect(await pageCount(tinyPdf(3), 'PDF')).toMatchObject({ pages: 3, exact: true });
  });

  it('prefers the layout count to a rendition, and the document statistic when told to', async () => {
    const docx = makeDocx(para('x'));
    const calls: string[] = [];
    const count = async (_: Uint8Array, o: { from: string; tenant?: string }) => (calls.push(`count ${o.from} ${o.tenant}`), 5);
    const render = async () => (calls.push('render'), tinyPdf(4));
    expect(await pageCount(docx, 'docx', { count, render, tenant: 't1' })).toEqual({ pages: 5, method: 'layout', exact: true });
    expect(await pageCount(docx, 'docx', { count: null, render })).toEqual({ pages: 4, method: 'rendition', exact: true });
    expect(calls).toEqual(['count docx t1', 'render']);
    // PAGE_COUNT=document: nothing is counted or rendered, whatever is at hand.
    expect(await pageCount(docx, 'docx', { count, render, statistic: 'document' })).toEqual({ pages: 1, method: 'fallback', exact: false });
    expect(await pageCount(makeXlsx([{ name: 'a', rows: [] }]), 'xlsx', { count, render, statistic: 'document' })).toEqual({
      pages: 1,
      method: 'sheets',
      exact: false,
    });
    expect(calls).toHaveLength(2);
  });
});

describe('availability', () => {
  afterEach(() => {
    configureConverter(DEFAULT_CONVERTER_SETTINGS);
  });

  it('answers from configuration without starting anything', async () => {
    configureConverter({ mode: 'none' });
    const off = converterAvailable();
    expect(off).toMatchObject({ available: false, kind: null });
    expect(off.howToEnable).toMatch(/install-converter\.sh/);
    await expect(convert(makeDocx(para('x')), { from: 'docx', to: 'pdf' })).rejects.toMatchObject({ code: 'CONVERTER_UNAVAILABLE' });
    configureConverter({ mode: 'auto', gotenbergUrl: 'http://gotenberg:3000' });
    expect(converterAvailable()).toMatchObject({ available: true, kind: 'gotenberg' });
    configureConverter({ mode: 'gotenberg', gotenbergUrl: undefined });
    expect(converterAvailable()).toMatchObject({ available: false, kind: 'gotenberg' });
  });
});

// Which fonts LibreOffice draws a document with, read back by poppler's pdffonts/pdftotext (tools we did not
// write): Office's default fonts become their metric-compatible twins (Calibri -> Carlito, Cambria ->
// Caladea), every script gets real glyphs from a font that covers it, fonts embedded in a docx are used, and
// a deployment's font directory (CONVERTER_FONTS_DIR) is mounted into the sandbox and used.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/pool.ts';
import { configureConverter, converterSettings } from '../../../converter/settings.ts';
import { writeZip } from '../../../engine/zip.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-fonts-'));
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG = 'http://schemas.openxmlformats.org/package/2006/relationships';
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Para {
  text: string;
  /** w:rFonts for every script (ascii, hAnsi, eastAsia, cs). */
  font?: string;
  rtl?: boolean;
  lang?: string;
}

/** A docx as Word writes one: the given paragraphs, optionally a font table with embedded fonts. */
function wordDocx(
  paras: Para[],
  embedded?: { family: string; odttf: Uint8Array; key: string },
  page = { width: 11906, settings: '' },
): Uint8Array {
  const runs = paras.map((p) => {
    const f = p.font === undefined ? '' : `<w:rFonts w:ascii="${p.font}" w:hAnsi="${p.font}" w:eastAsia="${p.font}" w:cs="${p.font}"/>`;
    const rtl = p.rtl === true ? '<w:rtl/>' : '';
    const lang = p.lang === undefined ? '' : `<w:lang w:val="${p.lang}" w:eastAsia="${p.lang}" w:bidi="${p.lang}"/>`;
    return `<w:p>${p.rtl === true ? '<w:pPr><w:bidi/></w:pPr>' : ''}<w:r><w:rPr>${f}${rtl}<w:sz w:val="28"/><w:szCs w:val="28"/>${lang}</w:rPr><w:t xml:space="preserve">${esc(p.text)}</w:t></w:r></w:p>`;
  });
  const files: Array<{ name: string; data: Uint8Array }> = [
    {
      name: '[Content_Types].xml',
      data: enc(
        `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
          '<Default Extension="odttf" ContentType="application/vnd.openxmlformats-officedocument.obfuscatedFont"/>' +
          '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
          '<Override PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"/>' +
          '<Override PartName="/word/fontTable.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.fontTable+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      data: enc(
        `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/></Relationships>`,
      ),
    },
    {
      name: 'word/document.xml',
      data: enc(
        `${XML}<w:document xmlns:w="${W}" xmlns:r="${R}"><w:body>${runs.join('')}<w:sectPr><w:pgSz w:w="${page.width}" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`,
      ),
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: enc(
        `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/settings" Target="settings.xml"/><Relationship Id="rId2" Type="${R}/fontTable" Target="fontTable.xml"/></Relationships>`,
      ),
    },
    {
      name: 'word/settings.xml',
      data: enc(
        `${XML}<w:settings xmlns:w="${W}">${embedded === undefined ? '' : '<w:embedTrueTypeFonts/><w:saveSubsetFonts/>'}${page.settings}</w:settings>`,
      ),
    },
    {
      name: 'word/fontTable.xml',
      data: enc(
        `${XML}<w:fonts xmlns:w="${W}" xmlns:r="${R}">` +
          (embedded === undefined
            ? ''
            : `<w:font w:name="${embedded.family}"><w:charset w:val="00"/><w:family w:val="swiss"/><w:pitch w:val="variable"/><w:embedRegular r:id="rId1" w:fontKey="${embedded.key}"/></w:font>`) +
          '</w:fonts>',
      ),
    },
  ];
  if (embedded !== undefined) {
    files.push({
      name: 'word/_rels/fontTable.xml.rels',
      data: enc(
        `${XML}<Relationships xmlns="${PKG}"><Relationship Id="rId1" Type="${R}/font" Target="fonts/font1.odttf"/></Relationships>`,
      ),
    });
    files.push({ name: 'word/fonts/font1.odttf', data: embedded.odttf });
  }
  return writeZip(files);
}

/** Font names in a PDF (subset prefix removed), as pdffonts lists them. */
function pdfFonts(pdf: string): string[] {
  const out = execFileSync('pdffonts', [pdf], { encoding: 'utf8' }).split('\n').slice(2);
  return [
    ...new Set(
      out
        .map((l) => l.split(/\s+/)[0] ?? '')
        .filter((n) => n !== '')
        .map((n) => n.replace(/^[A-Z]{6}\+/, '')),
    ),
  ].sort();
}

let pool: LibreOfficePool;
let n = 0;

/** Converts with the pool, writes the pdf and returns its fonts and text (pdftotext). */
async function toPdf(docx: Uint8Array, p: LibreOfficePool = pool): Promise<{ fonts: string[]; text: string; file: string }> {
  const pdf = await p.convert(docx, { from: 'docx', to: 'pdf' });
  const file = path.join(tmp, `out-${++n}.pdf`);
  fs.writeFileSync(file, pdf);
  return { fonts: pdfFonts(file), text: execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' }), file };
}

/** Dark pixels of the pdf's first page as poppler's pdftoppm draws it (150 dpi, grey): glyphs without outlines draw none. */
function ink(pdf: string): number {
  const prefix = `${pdf}-page`;
  execFileSync('pdftoppm', ['-gray', '-r', '150', '-f', '1', '-l', '1', '-singlefile', pdf, prefix]);
  const pgm = fs.readFileSync(`${prefix}.pgm`);
  // P5 header: magic, width, height, maxval, each followed by one whitespace byte.
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.toString('latin1', 0, 64));
  if (header === null) throw new Error('pdftoppm wrote no PGM');
  const pixels = pgm.subarray(header[0].length);
  let dark = 0;
  for (const v of pixels) if (v < 128) dark++;
  return dark;
}

const compact = (s: string): string => s.normalize('NFKC').replace(/\s+/g, '');

beforeAll(async () => {
  pool = new LibreOfficePool({ size: 1, log: () => {} });
  await pool.ready();
});
afterAll(async () => {
  await pool?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("Office's default fonts", () => {
  it('draws Calibri with Carlito and Cambria with Caladea (metric-compatible), Arial/Times with Liberation', async () => {
    const r = await toPdf(
      wordDocx([
        { text: 'Body text in Calibri', font: 'Calibri' },
        { text: 'A heading in Cambria', font: 'Cambria' },
        { text: 'Arial text', font: 'Arial' },
        { text: 'Times text', font: 'Times New Roman' },
      ]),
    );
    console.log(`[fonts] Calibri, Cambria, Arial, Times New Roman: ${r.fonts.join(', ')}`);
    expect(r.fonts.map((f) => f.replace(/-.*$/, ''))).toEqual(['Caladea', 'Carlito', 'LiberationSans', 'LiberationSerif']);
    expect(r.text).toContain('Body text in Calibri');
    expect(r.text).toContain('A heading in Cambria');
  });

  it('draws Aptos (no free metric twin) with Liberation Sans, as converter/fonts/substitutions.conf says', async () => {
    const r = await toPdf(wordDocx([{ text: 'Aptos is Office 2024s default', font: 'Aptos' }]));
    expect(r.fonts.map((f) => f.replace(/-.*$/, ''))).toEqual(['LiberationSans']);
  });
});

describe('every script gets real glyphs', () => {
  // Text in a font that does not cover it, as a Word user in that language writes it (Word picks the script's
  // font by itself; here the document names only a Latin one), so the font must come from fallback.
  const cases: Array<[string, Para, RegExp]> = [
    ['Chinese', { text: '中文文本示例', lang: 'zh-CN' }, /^NotoSans(Serif)?CJK/],
    ['Japanese', { text: '日本語のテキスト', lang: 'ja-JP' }, /^NotoS(ans|erif)CJK/],
    ['Korean', { text: '한국어 텍스트', lang: 'ko-KR' }, /^NotoS(ans|erif)CJK/],
    // DejaVu Sans (installed before) covers Arabic and Hebrew too; fontconfig says which faces cover the text.
    ['Arabic', { text: 'نص عربي للتجربة', rtl: true, lang: 'ar-SA' }, /Arabic|^DejaVuSans/],
    ['Hebrew', { text: 'טקסט בעברית', rtl: true, lang: 'he-IL' }, /Hebrew|^DejaVuSans/],
    ['Devanagari', { text: 'हिन्दी पाठ', lang: 'hi-IN' }, /Devanagari/],
    ['Thai', { text: 'ข้อความภาษาไทย', lang: 'th-TH' }, /Thai/],
    // Symbola: Noto Color Emoji is hidden from LibreOffice 7.4, which writes it without outlines (invisible).
    ['emoji', { text: '🎉😀🎈' }, /Symbola|Emoji/],
  ];
  for (const [script, para, covering] of cases) {
    it(`${script}: a font that covers it, and the text comes back`, async () => {
      const r = await toPdf(wordDocx([{ ...para, font: 'Calibri' }]));
      console.log(`[fonts] ${script}: ${r.fonts.join(', ')}`);
      expect(
        r.fonts.some((f) => covering.test(f)),
        `${script} drawn with ${r.fonts.join(', ')}`,
      ).toBe(true);
      // ...and fontconfig (not our code) confirms a face of that name covers every letter of it.
      const letters = [...new Set([...para.text.replace(/[\s\p{Script=Latin}]/gu, '')].map((c) => (c.codePointAt(0) ?? 0).toString(16)))];
      const covers = r.fonts
        .filter((f) => covering.test(f))
        .some(
          (f) =>
            execFileSync('fc-list', [`:postscriptname=${f.replace(/-VKana$/, '')}:charset=${letters.join(' ')}`, 'family'], {
              encoding: 'utf8',
            }).trim() !== '',
        );
      expect(covers, `${script}: fontconfig knows no face among ${r.fonts.join(', ')} covering ${letters.join(' ')}`).toBe(true);
      // Drawn: the glyphs leave ink on the page (a font without outlines for them leaves none).
      expect(ink(r.file), `${script}: nothing drawn`).toBeGreaterThan(10 * [...para.text.replace(/\s/g, '')].length);
      // pdftotext may return right-to-left text in visual order: compare the letters, not their order.
      const want = compact(para.text.replace(/[^\p{L}\p{M}\p{Extended_Pictographic}]/gu, ''));
      const got = compact(r.text);
      if (para.rtl === true) expect([...got].sort().join('')).toContain([...want].sort().join(''));
      else expect(got).toContain(want);
    });
  }
});

describe('hyphenation', () => {
  it("hyphenates a German paragraph when the document asks for it (Word's automatic hyphenation)", async () => {
    const words =
      'Donaudampfschifffahrtsgesellschaft Rechtsschutzversicherungsgesellschaften Geschwindigkeitsbegrenzung Arbeitsunfähigkeitsbescheinigung';
    // A column 7 cm wide: none of these words fits on a line whole with the margins.
    const doc = (settings: string) =>
      wordDocx([{ text: `${words} ${words}`, font: 'Calibri', lang: 'de-DE' }], undefined, { width: 2880 + 3969, settings });
    // pdftotext joins hyphenated words back in its default mode: read the lines as laid out.
    const lines = (pdf: { file: string }) =>
      execFileSync('pdftotext', ['-layout', '-enc', 'UTF-8', pdf.file, '-'], { encoding: 'utf8' })
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '');
    const hyphenated = lines(await toPdf(doc('<w:autoHyphenation/>'))).filter((l) => /\p{L}-$/u.test(l));
    console.log(`[fonts] hyphenated German lines: ${hyphenated.join(' | ')}`);
    expect(hyphenated.length).toBeGreaterThan(0);
    // The same paragraph without it breaks only between words (or inside one that fits no line), never with a hyphen.
    expect(lines(await toPdf(doc(''))).filter((l) => /\p{L}-$/u.test(l))).toEqual([]);
  });
});

/**
 * A copy of an installed TrueType font under another family name (a new 'name' table appended, its
 * directory entry pointed at it), so no installed font can stand in for it.
 */
function renamedFont(ttf: Buffer, family: string): Buffer {
  const numTables = ttf.readUInt16BE(4);
  const records: Array<[number, string]> = [
    [1, family],
    [2, 'Regular'],
    [3, `${family} Regular`],
    [4, family],
    [6, family.replace(/\s/g, '')],
  ];
  const strings = records.map(([, s]) => Buffer.from(s, 'utf16le').swap16());
  const header = Buffer.alloc(6 + 12 * records.length);
  header.writeUInt16BE(0, 0);
  header.writeUInt16BE(records.length, 2);
  header.writeUInt16BE(header.length, 4);
  let off = 0;
  records.forEach(([id], i) => {
    const at = 6 + 12 * i;
    header.writeUInt16BE(3, at);
    header.writeUInt16BE(1, at + 2);
    header.writeUInt16BE(0x409, at + 4);
    header.writeUInt16BE(id, at + 6);
    header.writeUInt16BE(strings[i]!.length, at + 8);
    header.writeUInt16BE(off, at + 10);
    off += strings[i]!.length;
  });
  const table = Buffer.concat([header, ...strings]);
  const pad = (b: Buffer): Buffer => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
  const base = pad(Buffer.from(ttf));
  const out = Buffer.concat([base, pad(table)]);
  for (let i = 0; i < numTables; i++) {
    const at = 12 + 16 * i;
    if (out.toString('latin1', at, at + 4) !== 'name') continue;
    let sum = 0;
    const padded = pad(table);
    for (let k = 0; k < padded.length; k += 4) sum = (sum + padded.readUInt32BE(k)) >>> 0;
    out.writeUInt32BE(sum, at + 4);
    out.writeUInt32BE(base.length, at + 8);
    out.writeUInt32BE(table.length, at + 12);
  }
  return out;
}

/** ECMA-376 font obfuscation: the first 32 bytes XORed with the key's bytes (the GUID's hex digits, reversed). */
function obfuscate(font: Buffer, key: string): Uint8Array {
  const hex = key.replace(/[{}-]/g, '');
  const bytes = Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).reverse();
  const out = Buffer.from(font);
  for (let i = 0; i < 32; i++) out[i] = (out[i] ?? 0) ^ (bytes[i % 16] ?? 0);
  return out;
}

const SOURCE_FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

describe("a document's own fonts and the deployment's", () => {
  it('uses a font embedded in the docx (w:embedTrueTypeFonts) that the machine does not have', async () => {
    const family = `Docgen Embedded ${randomUUID().slice(0, 8)}`;
    const key = `{${randomUUID().toUpperCase()}}`;
    const odttf = obfuscate(renamedFont(fs.readFileSync(SOURCE_FONT), family), key);
    // Without the embedded font the family is unknown: another face stands in. (First: LibreOffice keeps a
    // document's embedded fonts registered in the instance afterwards.)
    expect((await toPdf(wordDocx([{ text: 'Set in the embedded font', font: family }]))).fonts).not.toContain(family.replace(/\s/g, ''));
    const r = await toPdf(wordDocx([{ text: 'Set in the embedded font', font: family }], { family, odttf, key }));
    expect(r.fonts).toEqual([family.replace(/\s/g, '')]);
    expect(r.text).toContain('Set in the embedded font');
    // LibreOffice keeps the embedded font registered after that document: the instance restarts, so the next
    // document (maybe another subscription's) naming the family does not get it.
    const after = await toPdf(wordDocx([{ text: 'Another tenant names the family', font: family }]));
    expect(after.fonts).not.toContain(family.replace(/\s/g, ''));
    expect(after.text).toContain('Another tenant names the family');
  });

  it('uses the fonts of CONVERTER_FONTS_DIR, mounted read-only into the sandbox', async () => {
    const family = `Docgen Deployment ${randomUUID().slice(0, 8)}`;
    const dir = path.join(tmp, 'deployment-fonts');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'deployment.ttf'), renamedFont(fs.readFileSync(SOURCE_FONT), family));
    const before = converterSettings().fontsDir;
    const doc = wordDocx([{ text: 'Set in the deployment font', font: family }]);
    // Without the setting the family is unknown: LibreOffice substitutes another face.
    expect((await toPdf(doc)).fonts).not.toContain(family.replace(/\s/g, ''));
    configureConverter({ fontsDir: dir });
    const withDir = new LibreOfficePool({ size: 1, log: () => {} });
    try {
      await withDir.ready();
      expect(withDir.status().sandbox).toBe(pool.status().sandbox);
      const r = await toPdf(doc, withDir);
      expect(r.fonts).toEqual([family.replace(/\s/g, '')]);
    } finally {
      configureConverter({ fontsDir: before });
      await withDir.stop();
    }
  });
});

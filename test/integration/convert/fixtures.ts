/**
 * Office documents built from XML at test time, so every fixture is readable in the test that uses it
 * and can carry dynamic bits (a local server's port, a temp file's path).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { makeEntry, writeZip } from '../../../converter/zip.ts';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function pkg(files: Record<string, string | Uint8Array>): Uint8Array {
  return writeZip(Object.entries(files).map(([n, c]) => makeEntry(n, c)));
}

export const para = (text: string): string => `<w:p><w:r><w:t xml:space="preserve">${esc(text)}</w:t></w:r></w:p>`;
export const pageBreak = '<w:p><w:r><w:br w:type="page"/></w:r></w:p>';

export interface DocxParts {
  body: string;
  /** Extra <Relationship> elements for word/_rels/document.xml.rels. */
  rels?: string;
  app?: string;
  extra?: Record<string, string | Uint8Array>;
  /** The body's section properties (page size, margins); default A4 with 1-inch margins. */
  sectPr?: string;
  /** The content of word/styles.xml (inside <w:styles>), linked from the document. */
  styles?: string;
}

export const A4_SECTION =
  '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>';

export function makeDocx(p: DocxParts | string): Uint8Array {
  const d: DocxParts = typeof p === 'string' ? { body: p } : p;
  return pkg({
    '[Content_Types].xml':
      `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
      (d.app
        ? '<Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/>'
        : '') +
      (d.styles !== undefined
        ? '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
        : '') +
      '</Types>',
    '_rels/.rels':
      `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      `<Relationship Id="rId1" Type="${REL}/officeDocument" Target="word/document.xml"/>` +
      (d.app
        ? `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/>`
        : '') +
      '</Relationships>',
    'word/_rels/document.xml.rels':
      `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${d.rels ?? ''}` +
      (d.styles !== undefined ? `<Relationship Id="rIdStyles" Type="${REL}/styles" Target="styles.xml"/>` : '') +
      '</Relationships>',
    'word/document.xml':
      `${XML}<w:document xmlns:w="${W}" xmlns:r="${R}" ` +
      'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" ' +
      'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture">' +
      `<w:body>${d.body}${d.sectPr ?? A4_SECTION}</w:body></w:document>`,
    ...(d.styles !== undefined ? { 'word/styles.xml': `${XML}<w:styles xmlns:w="${W}">${d.styles}</w:styles>` } : {}),
    ...(d.app
      ? {
          'docProps/app.xml': `${XML}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">${d.app}</Properties>`,
        }
      : {}),
    ...(d.extra ?? {}),
  });
}

/** A docx of `pages` pages, each a heading line, separated by hard page breaks. */
export function pagedDocx(pages: number, label = 'Page'): Uint8Array {
  const parts: string[] = [];
  for (let i = 1; i <= pages; i++) parts.push(para(`${label} ${i} of ${pages}`) + (i < pages ? pageBreak : ''));
  return makeDocx(parts.join(''));
}

/** A long docx that takes LibreOffice a while (used to hit timeouts and cancel mid-conversion). */
export function longDocx(paragraphs: number): Uint8Array {
  const parts: string[] = [];
  for (let i = 0; i < paragraphs; i++)
    parts.push(para(`Paragraph ${i} lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.`));
  return makeDocx(parts.join(''));
}

/** The hostile layout of issue 36: 1-inch pages without margins, 72 pt type, 22-inch exact line
 *  spacing. Each paragraph's text lays out a character or two per line and a line per page, so 100
 *  paragraphs come to ~2 400 pages. `via: 'styles'` sets the same through the default paragraph style. */
export function hostileLayoutDocx(paragraphs: number, via: 'direct' | 'styles' = 'direct'): Uint8Array {
  const pPr = '<w:pPr><w:spacing w:line="31680" w:lineRule="exact"/></w:pPr>';
  const rPr = '<w:rPr><w:sz w:val="144"/></w:rPr>';
  const body: string[] = [];
  for (let i = 0; i < paragraphs; i++) {
    const text = `Paragraph ${i} of ${paragraphs} words`;
    body.push(via === 'direct' ? `<w:p>${pPr}<w:r>${rPr}<w:t xml:space="preserve">${text}</w:t></w:r></w:p>` : para(text));
  }
  return makeDocx({
    body: body.join(''),
    sectPr:
      '<w:sectPr><w:pgSz w:w="1440" w:h="1440"/><w:pgMar w:top="0" w:right="0" w:bottom="0" w:left="0" w:header="0" w:footer="0" w:gutter="0"/></w:sectPr>',
    ...(via === 'styles'
      ? {
          styles: `<w:docDefaults><w:rPrDefault>${rPr}</w:rPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/>${pPr}</w:style>`,
        }
      : {}),
  });
}

function colName(i: number): string {
  let s = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

export interface Sheet {
  name: string;
  rows: Array<Array<string | number>>;
}

export function makeXlsx(sheets: Sheet[]): Uint8Array {
  const files: Record<string, string> = {};
  files['[Content_Types].xml'] =
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
    sheets
      .map(
        (_, i) =>
          `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
      )
      .join('') +
    '</Types>';
  files['_rels/.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`;
  files['xl/workbook.xml'] =
    `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="${R}"><sheets>` +
    sheets.map((s, i) => `<sheet name="${esc(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('') +
    '</sheets></workbook>';
  files['xl/_rels/workbook.xml.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
    sheets.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${REL}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('') +
    '</Relationships>';
  sheets.forEach((s, si) => {
    const rows = s.rows
      .map(
        (row, r) =>
          `<row r="${r + 1}">` +
          row
            .map((v, c) => {
              const ref = `${colName(c)}${r + 1}`;
              return typeof v === 'number'
                ? `<c r="${ref}"><v>${v}</v></c>`
                : `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${esc(v)}</t></is></c>`;
            })
            .join('') +
          '</row>',
      )
      .join('');
    files[`xl/worksheets/sheet${si + 1}.xml`] =
      `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`;
  });
  return pkg(files);
}

const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';

/** A minimal pptx: one master, one layout, one text box per slide. */
export function makePptx(slides: string[]): Uint8Array {
  const files: Record<string, string> = {};
  files['[Content_Types].xml'] =
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>' +
    '<Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml"/>' +
    '<Override PartName="/ppt/slideLayouts/slideLayout1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml"/>' +
    slides
      .map(
        (_, i) =>
          `<Override PartName="/ppt/slides/slide${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`,
      )
      .join('') +
    '</Types>';
  files['_rels/.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/officeDocument" Target="ppt/presentation.xml"/></Relationships>`;
  files['ppt/presentation.xml'] =
    `${XML}<p:presentation xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${R}">` +
    '<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>' +
    slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 2}"/>`).join('') +
    '</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>';
  files['ppt/_rels/presentation.xml.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
    `<Relationship Id="rId1" Type="${REL}/slideMaster" Target="slideMasters/slideMaster1.xml"/>` +
    slides.map((_, i) => `<Relationship Id="rId${i + 2}" Type="${REL}/slide" Target="slides/slide${i + 1}.xml"/>`).join('') +
    '</Relationships>';
  const emptyTree =
    '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/></p:spTree></p:cSld>';
  files['ppt/slideMasters/slideMaster1.xml'] =
    `${XML}<p:sldMaster xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${R}">${emptyTree}` +
    '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>' +
    '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>';
  files['ppt/slideMasters/_rels/slideMaster1.xml.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>`;
  files['ppt/slideLayouts/slideLayout1.xml'] = `${XML}<p:sldLayout xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${R}">${emptyTree}</p:sldLayout>`;
  files['ppt/slideLayouts/_rels/slideLayout1.xml.rels'] =
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/slideMaster" Target="../slideMasters/slideMaster1.xml"/></Relationships>`;
  slides.forEach((text, i) => {
    files[`ppt/slides/slide${i + 1}.xml`] =
      `${XML}<p:sld xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${R}"><p:cSld><p:spTree>` +
      '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>' +
      '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Text"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>' +
      '<p:spPr><a:xfrm><a:off x="914400" y="914400"/><a:ext cx="7315200" cy="1828800"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>' +
      `<p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US" sz="3200"/><a:t>${esc(text)}</a:t></a:r></a:p></p:txBody></p:sp>` +
      '</p:spTree></p:cSld></p:sld>';
    files[`ppt/slides/_rels/slide${i + 1}.xml.rels`] =
      `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL}/slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>`;
  });
  return pkg(files);
}

/** A PNG file of `raw` (filtered scanlines) with the given header fields. */
export function pngFile(width: number, height: number, bitDepth: number, colourType: number, raw: Buffer, level = 6): Uint8Array {
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = colourType;
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', deflateSync(raw, { level })),
      chunk('IEND', Buffer.alloc(0)),
    ]),
  );
}

/** A valid 16x16 PNG of one colour (for linked-image tests). */
export function png(rgb: [number, number, number] = [200, 30, 30]): Uint8Array {
  const w = 16;
  const raw = Buffer.alloc((w * 3 + 1) * w);
  for (let y = 0; y < w; y++) for (let x = 0; x < w; x++) raw.set(rgb, y * (w * 3 + 1) + 1 + x * 3);
  return pngFile(w, w, 8, 2, raw);
}

/** An inline picture whose blip is linked (r:link) or embedded (r:embed) through relationship `rid`. */
export function pictureRun(rid: string, mode: 'link' | 'embed', id: number): string {
  return (
    `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="${id}" name="Picture ${id}"/>` +
    '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>' +
    `<pic:nvPicPr><pic:cNvPr id="${id}" name="p${id}"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:${mode}="${rid}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    '<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic>' +
    '</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>'
  );
}

/** A complex field (begin / instr / separate / cached result / end). */
export function fieldRun(instr: string, cached: string): string {
  return (
    '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r>' +
    `<w:r><w:instrText xml:space="preserve"> ${esc(instr)} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>` +
    `<w:r><w:t>${esc(cached)}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`
  );
}

export function relationship(id: string, type: string, target: string, external: boolean): string {
  return `<Relationship Id="${id}" Type="${REL}/${type}" Target="${esc(target)}"${external ? ' TargetMode="External"' : ''}/>`;
}

/** Runs a poppler tool on PDF bytes and returns stdout (throws on failure so tests fail loudly). */
export function poppler(tool: 'pdfinfo' | 'pdftotext' | 'pdfimages', pdf: Uint8Array, args: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convert-test-'));
  try {
    const f = path.join(dir, 'x.pdf');
    fs.writeFileSync(f, pdf);
    const argv = tool === 'pdftotext' ? [...args, f, '-'] : [...args, f];
    const r = spawnSync(tool, argv, { encoding: 'utf8', maxBuffer: 64 << 20 });
    if (r.status !== 0) throw new Error(`${tool} failed: ${r.stderr}`);
    return r.stdout;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function pdfinfoPages(pdf: Uint8Array): number {
  return Number(/^Pages:\s+(\d+)/m.exec(poppler('pdfinfo', pdf))?.[1] ?? NaN);
}

/** Documents the pool tests convert: one page; ~110 pages (about a second of LibreOffice); ~450 pages (several seconds). */
export const poolDocs = { small: makeDocx(para('small document')), medium: longDocx(3_000), long: longDocx(12_000) };

/** Polls `check` until it holds, bounded generously: a loaded machine is slow, not wrong. */
export async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

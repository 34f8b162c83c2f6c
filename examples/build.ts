// Builds the example templates in this folder from readable XML, so every tag they use is visible here:
//   node examples/build.ts
// invoice.docx        a logo image, an address block, a table row repeated per line item, amounts
//                     formatted as currency, totals computed by filters, a formatted date
// monthly-report.xlsx a row repeated per region, typed number cells, a SUM row that grows with the rows
// products.pptx       one slide per product ({:products}), with its price and a bullet list per slide
// reminder.docx       a payment reminder with a condition, one per row of customers.csv
// and their data (invoice.json with the logo as a data URL, monthly-report.json, products.json;
// invoice-einvoice.json: the same invoice with its EN 16931 e-invoice, docs/einvoice.md).
import fs from 'node:fs';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { writeZip } from '../engine/zip.ts';

const here = import.meta.dirname;
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const CT = 'http://schemas.openxmlformats.org/package/2006/content-types';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const S = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function pkg(files: Record<string, string | Uint8Array>): Uint8Array {
  return writeZip(Object.entries(files).map(([name, v]) => ({ name, data: typeof v === 'string' ? Buffer.from(v, 'utf8') : v })));
}

function rels(list: [id: string, type: string, target: string][]): string {
  return `${XML}<Relationships xmlns="${PKG_REL}">${list.map(([id, type, target]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${target}"/>`).join('')}</Relationships>`;
}

function contentTypes(overrides: [part: string, type: string][]): string {
  return (
    `${XML}<Types xmlns="${CT}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
    '<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>' +
    overrides.map(([part, type]) => `<Override PartName="${part}" ContentType="${type}"/>`).join('') +
    '</Types>'
  );
}

// ---------------------------------------------------------------------------------------------- docx

interface RunStyle {
  bold?: boolean;
  size?: number; // points
  color?: string;
}
function run(text: string, s: RunStyle = {}): string {
  const pr = `${s.bold ? '<w:b/>' : ''}${s.color ? `<w:color w:val="${s.color}"/>` : ''}${s.size ? `<w:sz w:val="${s.size * 2}"/>` : ''}`;
  return `<w:r>${pr ? `<w:rPr>${pr}</w:rPr>` : ''}<w:t xml:space="preserve">${esc(text)}</w:t></w:r>`;
}
function para(runs: string, opts: { align?: 'left' | 'right' | 'center'; after?: number } = {}): string {
  // CT_PPr order: w:spacing comes before w:jc.
  const pr = `<w:spacing w:after="${opts.after ?? 120}"/>${opts.align ? `<w:jc w:val="${opts.align}"/>` : ''}`;
  return `<w:p><w:pPr>${pr}</w:pPr>${runs}</w:p>`;
}
function cell(content: string, width: number, opts: { shade?: string; align?: 'left' | 'right' } = {}): string {
  const shade = opts.shade ? `<w:shd w:val="clear" w:color="auto" w:fill="${opts.shade}"/>` : '';
  return `<w:tc><w:tcPr><w:tcW w:w="${width}" w:type="dxa"/>${shade}</w:tcPr>${para(content, { align: opts.align ?? 'left', after: 0 })}</w:tc>`;
}

function invoiceDocx(): Uint8Array {
  const widths = [4600, 1100, 1650, 1650];
  const border =
    '<w:top w:val="single" w:sz="4" w:color="BFBFBF"/><w:bottom w:val="single" w:sz="4" w:color="BFBFBF"/><w:insideH w:val="single" w:sz="4" w:color="BFBFBF"/>';
  // A header row (repeated on each page; a screen reader announces its cells as the column headings).
  const header = `<w:tr><w:trPr><w:tblHeader/></w:trPr>${cell(run('Description', { bold: true, color: 'FFFFFF' }), widths[0]!, { shade: '1F4E79' })}${cell(run('Qty', { bold: true, color: 'FFFFFF' }), widths[1]!, { shade: '1F4E79', align: 'right' })}${cell(run('Unit price', { bold: true, color: 'FFFFFF' }), widths[2]!, { shade: '1F4E79', align: 'right' })}${cell(run('Amount', { bold: true, color: 'FFFFFF' }), widths[3]!, { shade: '1F4E79', align: 'right' })}</w:tr>`;
  // The loop's tags sit in different cells of one row: the engine repeats that row per item.
  const line =
    `<w:tr>${cell(run('{#items}{description}'), widths[0]!)}${cell(run('{quantity}'), widths[1]!, { align: 'right' })}` +
    `${cell(run('{unitPrice | currency:currency}'), widths[2]!, { align: 'right' })}${cell(run('{net | currency:currency}{/items}'), widths[3]!, { align: 'right' })}</w:tr>`;
  const table = `<w:tbl><w:tblPr><w:tblW w:w="9000" w:type="dxa"/><w:tblBorders>${border}</w:tblBorders><w:tblCellMar><w:left w:w="80" w:type="dxa"/><w:right w:w="80" w:type="dxa"/></w:tblCellMar></w:tblPr><w:tblGrid>${widths.map((w) => `<w:gridCol w:w="${w}"/>`).join('')}</w:tblGrid>${header}${line}</w:tbl>`;
  const body = [
    para(run('{%logo}')),
    para(run('{seller.name}', { bold: true, size: 14 }) + run(' · {seller.address} · VAT {seller.vatId}', { color: '595959' }), {
      after: 360,
    }),
    para(run('INVOICE {number}', { bold: true, size: 22, color: '1F4E79' })),
    para(run('Issued {issuedOn | date:"d MMMM yyyy"}, due {dueOn | date:"d MMMM yyyy"}', { color: '595959' }), { after: 240 }),
    para(run('Bill to', { bold: true })),
    para(run('{customer.name}'), { after: 0 }),
    para(run('{customer.street}'), { after: 0 }),
    para(run('{customer.postcode} {customer.city}'), { after: 0 }),
    para(run('{customer.country}'), { after: 240 }),
    table,
    para('', { after: 120 }),
    para(run('Net total  ') + run('{items | sum:"net" | currency:currency}', { bold: true }), { align: 'right', after: 0 }),
    para(run('VAT {vatRate | percent}  ') + run('{(items | sum:"net") * vatRate | currency:currency}', { bold: true }), {
      align: 'right',
      after: 0,
    }),
    para(
      run('Total due  ', { bold: true, size: 13 }) +
        run('{(items | sum:"net") * (1 + vatRate) | currency:currency}', { bold: true, size: 13, color: '1F4E79' }),
      { align: 'right', after: 360 },
    ),
    para(run('{#notes}{.}{/notes}', { color: '595959' })),
    para(
      run('Please pay by {dueOn | date:"d MMMM yyyy"} to IBAN {seller.iban}, quoting {number}. Thank you for your business.', {
        color: '595959',
      }),
    ),
  ].join('');
  const document =
    `${XML}<w:document xmlns:w="${W}" xmlns:r="${REL}" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" ` +
    `xmlns:a="${A}" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>${body}` +
    '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1134" w:right="1134" w:bottom="1134" w:left="1134" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>';
  const styles =
    `${XML}<w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Liberation Sans" w:hAnsi="Liberation Sans" w:cs="Liberation Sans"/>` +
    '<w:sz w:val="20"/></w:rPr></w:rPrDefault></w:docDefaults></w:styles>';
  return pkg({
    '[Content_Types].xml': contentTypes([
      ['/word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'],
      ['/word/styles.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml'],
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
    'word/_rels/document.xml.rels': rels([['rId1', 'styles', 'styles.xml']]),
    'word/document.xml': document,
    'word/styles.xml': styles,
  });
}

/** A one-page reminder letter, one per row of customers.csv (`docgen generate --each`). */
function reminderDocx(): Uint8Array {
  const body = [
    para(run('Northwind Print & Paper', { bold: true, size: 14 }) + run(' · 12 rue des Archives, 75004 Paris', { color: '595959' }), {
      after: 480,
    }),
    para(run('{name}'), { after: 0 }),
    para(run('{city}'), { after: 480 }),
    para(run('Dear {contact},')),
    para(
      run('Our records show an open balance of ') +
        run('{balance | currency:"EUR"}', { bold: true }) +
        run(' on your account, due since {dueOn | date:"d MMMM yyyy"}.'),
    ),
    para(run('{#balance > 1000}As the amount exceeds €1,000, please contact us to agree a payment plan.{/}')),
    para(run('If you have already paid, please ignore this letter.'), { after: 360 }),
    para(run('Kind regards,'), { after: 0 }),
    para(run('Accounts team')),
  ].join('');
  return pkg({
    '[Content_Types].xml': contentTypes([
      ['/word/document.xml', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'],
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
    'word/_rels/document.xml.rels': rels([]),
    'word/document.xml':
      `${XML}<w:document xmlns:w="${W}" xmlns:r="${REL}"><w:body>${body}` +
      '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1134" w:right="1134" w:bottom="1134" w:left="1134" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>',
  });
}

const CUSTOMERS_CSV = [
  'id,name,contact,city,balance,dueOn',
  'C-1001,ACME & Co.,Ms Ada Lovelace,London,1250.4,2026-10-15',
  'C-1002,Globex,Mr Hank Scorpio,Cypress Creek,310,2026-10-31',
  '"C-1003","Initech, Ltd.",Mr Bill Lumbergh,Austin,89.99,2026-11-01',
  '',
].join('\n');

// ---------------------------------------------------------------------------------------------- xlsx

function monthlyReportXlsx(): Uint8Array {
  const inline = (ref: string, text: string, style = 0) =>
    `<c r="${ref}" t="inlineStr"${style ? ` s="${style}"` : ''}><is><t xml:space="preserve">${esc(text)}</t></is></c>`;
  // Row 4 is the template row: the loop's tags in its first and last cells repeat it per region. Cells
  // holding one field become typed numbers; the SUM ranges end in the repeated row, so they grow.
  const sheet =
    `${XML}<worksheet xmlns="${S}"><dimension ref="A1:E5"/><cols><col min="1" max="1" width="22" customWidth="1"/><col min="2" max="5" width="14" customWidth="1"/></cols><sheetData>` +
    `<row r="1">${inline('A1', 'Sales report {month}', 1)}</row>` +
    `<row r="2">${inline('A2', '{company} · generated for {preparedFor}')}</row>` +
    `<row r="3">${inline('A3', 'Region', 2)}${inline('B3', 'Orders', 2)}${inline('C3', 'Revenue', 2)}${inline('D3', 'Returns', 2)}${inline('E3', 'Net revenue', 2)}</row>` +
    `<row r="4">${inline('A4', '{#regions}{name}')}${inline('B4', '{orders}')}${inline('C4', '{revenue}', 3)}${inline('D4', '{returns}', 3)}<c r="E4" s="3"><f>C4-D4</f></c>${inline('F4', '{/regions}')}</row>` +
    `<row r="5">${inline('A5', 'Total', 2)}<c r="B5" s="4"><f>SUM(B4:B4)</f></c><c r="C5" s="5"><f>SUM(C4:C4)</f></c><c r="D5" s="5"><f>SUM(D4:D4)</f></c><c r="E5" s="5"><f>SUM(E4:E4)</f></c></row>` +
    '</sheetData><mergeCells count="2"><mergeCell ref="A1:E1"/><mergeCell ref="A2:E2"/></mergeCells></worksheet>';
  const styles =
    `${XML}<styleSheet xmlns="${S}"><numFmts count="1"><numFmt numFmtId="164" formatCode="#,##0.00 &quot;€&quot;"/></numFmts>` +
    '<fonts count="3"><font><sz val="11"/><name val="Liberation Sans"/></font><font><b/><sz val="11"/><name val="Liberation Sans"/></font><font><b/><sz val="16"/><color rgb="FF1F4E79"/><name val="Liberation Sans"/></font></fonts>' +
    '<fills count="3"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill><fill><patternFill patternType="solid"><fgColor rgb="FFDDEBF7"/></patternFill></fill></fills>' +
    '<borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="6">' +
    '<xf/>' + // 0 default
    '<xf fontId="2" applyFont="1"/>' + // 1 title
    '<xf fontId="1" fillId="2" applyFont="1" applyFill="1"/>' + // 2 header / total label
    '<xf numFmtId="164" applyNumberFormat="1"/>' + // 3 money
    '<xf fontId="1" fillId="2" applyFont="1" applyFill="1"/>' + // 4 total count
    '<xf numFmtId="164" fontId="1" fillId="2" applyNumberFormat="1" applyFont="1" applyFill="1"/>' + // 5 total money
    '</cellXfs></styleSheet>';
  return pkg({
    '[Content_Types].xml': contentTypes([
      ['/xl/workbook.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml'],
      ['/xl/worksheets/sheet1.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml'],
      ['/xl/styles.xml', 'application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml'],
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'xl/workbook.xml']]),
    'xl/workbook.xml': `${XML}<workbook xmlns="${S}" xmlns:r="${REL}"><sheets><sheet name="Report" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': rels([
      ['rId1', 'worksheet', 'worksheets/sheet1.xml'],
      ['rId2', 'styles', 'styles.xml'],
    ]),
    'xl/worksheets/sheet1.xml': sheet,
    'xl/styles.xml': styles,
  });
}

// ---------------------------------------------------------------------------------------------- pptx

function textShape(
  id: number,
  name: string,
  box: [x: number, y: number, cx: number, cy: number],
  paragraphs: string[],
  size: number,
  opts: { bold?: boolean; color?: string } = {},
): string {
  const rPr = `<a:rPr lang="en-GB" sz="${size * 100}"${opts.bold ? ' b="1"' : ''}>${opts.color ? `<a:solidFill><a:srgbClr val="${opts.color}"/></a:solidFill>` : ''}<a:latin typeface="Liberation Sans"/></a:rPr>`;
  return (
    `<p:sp><p:nvSpPr><p:cNvPr id="${id}" name="${name}"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>` +
    `<p:spPr><a:xfrm><a:off x="${box[0]}" y="${box[1]}"/><a:ext cx="${box[2]}" cy="${box[3]}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>` +
    `<p:txBody><a:bodyPr wrap="square"/><a:lstStyle/>${paragraphs.map((t) => `<a:p><a:r>${rPr}<a:t>${esc(t)}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp>`
  );
}

function productsPptx(): Uint8Array {
  const tree = (shapes: string) =>
    `<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>${shapes}</p:spTree></p:cSld>`;
  const band =
    '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Band" descr="Blue band"><a:extLst><a:ext uri="{C183D7F6-B498-43B3-948B-1728B52AA6E4}"><adec:decorative xmlns:adec="http://schemas.microsoft.com/office/drawing/2017/decorative" val="1"/></a:ext></a:extLst></p:cNvPr><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="12192000" cy="457200"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:solidFill><a:srgbClr val="1F4E79"/></a:solidFill></p:spPr></p:sp>';
  // `{:products}` repeats this slide once per product; the other tags read the product.
  const slide =
    `${XML}<p:sld xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}">` +
    tree(
      band +
        textShape(3, 'Title', [609600, 762000, 10972800, 1066800], ['{:products}{name}'], 40, { bold: true, color: '1F4E79' }) +
        textShape(4, 'Tagline', [609600, 1828800, 10972800, 762000], ['{tagline}'], 24, { color: '595959' }) +
        textShape(5, 'Points', [609600, 2743200, 7315200, 2743200], ['{#highlights}', '• {.}', '{/highlights}'], 20) +
        textShape(6, 'Price', [8229600, 2743200, 3352800, 1219200], ['{price | currency:currency}'], 36, { bold: true, color: '1F4E79' }) +
        textShape(7, 'Footer', [609600, 6096000, 10972800, 457200], ['{catalogue}'], 14, { color: '7F7F7F' }),
    ) +
    '</p:sld>';
  const master =
    `${XML}<p:sldMaster xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}">${tree('')}` +
    '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>' +
    '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>';
  return pkg({
    '[Content_Types].xml': contentTypes([
      ['/ppt/presentation.xml', 'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml'],
      ['/ppt/slideMasters/slideMaster1.xml', 'application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml'],
      ['/ppt/slideLayouts/slideLayout1.xml', 'application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml'],
      ['/ppt/slides/slide1.xml', 'application/vnd.openxmlformats-officedocument.presentationml.slide+xml'],
    ]),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'ppt/presentation.xml']]),
    'ppt/presentation.xml':
      `${XML}<p:presentation xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}"><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>` +
      '<p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst><p:sldSz cx="12192000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>',
    'ppt/_rels/presentation.xml.rels': rels([
      ['rId1', 'slideMaster', 'slideMasters/slideMaster1.xml'],
      ['rId2', 'slide', 'slides/slide1.xml'],
    ]),
    'ppt/slideMasters/slideMaster1.xml': master,
    'ppt/slideMasters/_rels/slideMaster1.xml.rels': rels([['rId1', 'slideLayout', '../slideLayouts/slideLayout1.xml']]),
    'ppt/slideLayouts/slideLayout1.xml': `${XML}<p:sldLayout xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}">${tree('')}</p:sldLayout>`,
    'ppt/slideLayouts/_rels/slideLayout1.xml.rels': rels([['rId1', 'slideMaster', '../slideMasters/slideMaster1.xml']]),
    'ppt/slides/slide1.xml': slide,
    'ppt/slides/_rels/slide1.xml.rels': rels([['rId1', 'slideLayout', '../slideLayouts/slideLayout1.xml']]),
  });
}

// ------------------------------------------------------------------------------------ the logo (png)

/** A 240x64 RGB PNG: a blue badge with three white bars, drawn pixel by pixel. */
function logoPng(): Uint8Array {
  const w = 240;
  const h = 64;
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    raw[y * (w * 3 + 1)] = 0; // filter: none
    for (let x = 0; x < w; x++) {
      const inBadge = x < 64;
      const bar = inBadge && x >= 14 && x < 50 && [14, 28, 42].some((top) => y >= top && y < top + 8);
      const [r, g, b] = bar
        ? [255, 255, 255]
        : inBadge
          ? [31, 78, 121]
          : x < 72
            ? [255, 255, 255]
            : y >= 26 && y < 38
              ? [189, 215, 238]
              : [255, 255, 255];
      raw.set([r, g, b], y * (w * 3 + 1) + 1 + x * 3);
    }
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.writeUInt8(8, 8); // bit depth
  ihdr.writeUInt8(2, 9); // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// ------------------------------------------------------------------------------------------- data

function invoiceData(): unknown {
  return {
    number: 'INV-2026-0117',
    issuedOn: '2026-11-02',
    dueOn: '2026-12-02',
    currency: 'EUR',
    vatRate: 0.2,
    logo: {
      data: `data:image/png;base64,${Buffer.from(logoPng()).toString('base64')}`,
      width: 180,
      height: 48,
      alt: 'Northwind Print & Paper logo',
    },
    seller: {
      name: 'Northwind Print & Paper',
      address: '12 rue des Archives, 75004 Paris',
      vatId: 'FR40123456824',
      iban: 'FR76 3000 6000 0112 3456 7890 189',
    },
    customer: { name: 'ACME & Co.', street: '221 Baker Street', postcode: 'NW1 6XE', city: 'London', country: 'United Kingdom' },
    items: [
      { description: 'Letterpress business cards (box of 500)', quantity: 4, unitPrice: 89.9, net: 359.6 },
      { description: 'A4 recycled paper, 80 g/m² (ream)', quantity: 25, unitPrice: 6.4, net: 160 },
      { description: 'Embossed envelopes C5 (pack of 100)', quantity: 3, unitPrice: 42.5, net: 127.5 },
      { description: 'Design and proofing, hours', quantity: 2.5, unitPrice: 75, net: 187.5 },
    ],
    notes: ['Delivered on 30 October 2026 under order PO-88417.'],
  };
}

/** The same invoice with its e-invoice beside what the template renders (docs/einvoice.md's model under
 *  `einvoice`, built from the same values, amounts as strings): a generate with
 *  `document.einvoice: {"standard": "facturx", "data": "einvoice"}` renders invoice.docx and embeds the XML. */
function invoiceEInvoiceData(): unknown {
  const base = invoiceData() as { items: { description: string; quantity: number; unitPrice: number }[] };
  return {
    ...base,
    einvoice: {
      number: 'INV-2026-0117',
      issueDate: '2026-11-02',
      dueDate: '2026-12-02',
      deliveryDate: '2026-10-30',
      currency: 'EUR',
      orderReference: 'PO-88417',
      note: 'Delivered on 30 October 2026 under order PO-88417.',
      seller: {
        name: 'Northwind Print & Paper',
        vatId: 'FR40123456824',
        electronicAddress: 'billing@northwind.example',
        address: { line1: '12 rue des Archives', city: 'Paris', postcode: '75004', countryCode: 'FR' },
      },
      buyer: {
        name: 'ACME & Co.',
        address: { line1: '221 Baker Street', city: 'London', postcode: 'NW1 6XE', countryCode: 'GB' },
      },
      paymentMeans: { typeCode: '58', iban: 'FR7630006000011234567890189' },
      paymentTerms: 'Payable by 2 December 2026',
      lines: base.items.map((item, i) => ({
        id: String(i + 1),
        name: item.description,
        quantity: String(item.quantity),
        unitCode: item.description.endsWith('hours') ? 'HUR' : 'C62',
        netPrice: item.unitPrice.toFixed(2),
        vat: { category: 'S', rate: '20' },
      })),
      totals: { lineTotal: '834.60', taxTotal: '166.92', grandTotal: '1001.52', duePayable: '1001.52' },
    },
  };
}

function monthlyReportData(): unknown {
  return {
    month: 'October 2026',
    company: 'Northwind Print & Paper',
    preparedFor: 'the board',
    regions: [
      { name: 'Île-de-France', orders: 412, revenue: 48210.5, returns: 1210 },
      { name: 'Auvergne-Rhône-Alpes', orders: 268, revenue: 30115.25, returns: 845.5 },
      { name: 'Occitanie', orders: 173, revenue: 19870, returns: 320 },
      { name: 'Hauts-de-France', orders: 151, revenue: 16402.75, returns: 0 },
      { name: 'Bretagne', orders: 96, revenue: 10988.4, returns: 219.9 },
    ],
  };
}

function productsData(): unknown {
  return {
    catalogue: 'Northwind autumn catalogue 2026',
    currency: 'EUR',
    products: [
      {
        name: 'Letterpress cards',
        tagline: 'Deep impressions on 600 g/m² cotton board',
        price: 89.9,
        highlights: ['Two colours included', 'Ready in five working days', 'Recycled cotton'],
      },
      {
        name: 'Recycled A4 paper',
        tagline: 'Everyday paper, made from 100 % post-consumer fibre',
        price: 6.4,
        highlights: ['80 g/m², 500 sheets', 'FSC Recycled', 'Laser and inkjet'],
      },
      {
        name: 'Embossed envelopes',
        tagline: 'Your logo, raised, on every envelope',
        price: 42.5,
        highlights: ['C5 and DL formats', 'Blind or foil embossing', 'Packs of 100'],
      },
    ],
  };
}

export function buildExamples(dir = here): string[] {
  const json = (v: unknown) => Buffer.from(`${JSON.stringify(v, null, 2)}\n`, 'utf8');
  const files: [string, Uint8Array][] = [
    ['invoice.docx', invoiceDocx()],
    ['invoice.json', json(invoiceData())],
    ['invoice-einvoice.json', json(invoiceEInvoiceData())],
    ['monthly-report.xlsx', monthlyReportXlsx()],
    ['monthly-report.json', json(monthlyReportData())],
    ['products.pptx', productsPptx()],
    ['products.json', json(productsData())],
    ['reminder.docx', reminderDocx()],
    ['customers.csv', Buffer.from(CUSTOMERS_CSV, 'utf8')],
  ];
  for (const [name, bytes] of files) fs.writeFileSync(path.join(dir, name), bytes);
  return files.map(([name]) => path.join(dir, name));
}

if (import.meta.main) {
  for (const file of buildExamples()) process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}

import { inflateEntry, readZip, writeZip } from '../../../engine/zip.ts';

/** Builds small Office packages in code, so tests do not depend on binary fixtures. */

const W_NS = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const R_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

export function zip(files: Record<string, string | Uint8Array>): Uint8Array {
  return writeZip(Object.entries(files).map(([name, v]) => ({ name, data: typeof v === 'string' ? Buffer.from(v, 'utf8') : v })));
}

export function unzipText(bytes: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, e] of readZip(bytes)) out.set(name, inflateEntry(e).toString('utf8'));
  return out;
}

export function partText(bytes: Uint8Array, name: string): string {
  const t = unzipText(bytes).get(name);
  if (t === undefined) throw new Error(`missing part ${name}`);
  return t;
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One paragraph; each argument becomes its own run, the way Word splits text. */
export function p(...texts: string[]): string {
  const runs = texts.map((t) => `<w:r><w:rPr><w:b/></w:rPr><w:t xml:space="preserve">${esc(t)}</w:t></w:r>`);
  return `<w:p>${runs.join('')}</w:p>`;
}

/** A table's properties and column grid (both required by the schema) for `cols` columns. */
export function tableStart(cols: number): string {
  return `<w:tbl><w:tblPr/><w:tblGrid>${'<w:gridCol w:w="2000"/>'.repeat(cols)}</w:tblGrid>`;
}

export function table(rows: string[][]): string {
  return `${tableStart(Math.max(1, ...rows.map((r) => r.length)))}${rows.map((r) => `<w:tr>${r.map((c) => `<w:tc><w:tcPr/>${p(c)}</w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`;
}

export function docx(bodyXml: string, extra: Record<string, string | Uint8Array> = {}): Uint8Array {
  return zip({
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R_NS}/officeDocument" Target="word/document.xml"/></Relationships>`,
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W_NS}" xmlns:r="${R_NS}"><w:body>${bodyXml}<w:sectPr/></w:body></w:document>`,
    'word/_rels/document.xml.rels':
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>',
    ...extra,
  });
}

/** Visible text of a WordprocessingML/DrawingML part, one string per paragraph. */
export function paragraphs(xml: string): string[] {
  const out: string[] = [];
  for (const m of xml.matchAll(/<(w|a):p[\s>][\s\S]*?<\/\1:p>|<(w|a):p\/>/g)) {
    let s = '';
    for (const t of m[0].matchAll(/<(?:w|a):t(?:\s[^>]*)?>([^<]*)<\/(?:w|a):t>|<(?:w|a):br\b[^>]*\/?>|<w:tab\/>/g)) {
      if (t[0].includes(':br')) s += '\n';
      else if (t[0] === '<w:tab/>') s += '\t';
      else
        s += (t[1] ?? '')
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&quot;/g, '"')
          .replace(/&amp;/g, '&');
    }
    out.push(s);
  }
  return out;
}

export function docText(bytes: Uint8Array, part = 'word/document.xml'): string[] {
  return paragraphs(partText(bytes, part));
}

const SML_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const PKG_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';

export interface XlsxSpec {
  /** Shared strings, referenced from cells as `s:N`. */
  strings: string[];
  /** Inner XML of sheetData (rows). */
  rows: string;
  /** XML after sheetData (mergeCells etc.). */
  tail?: string;
  definedNames?: string;
  table?: string;
  calcChain?: boolean;
}

export function xlsx(spec: XlsxSpec): Uint8Array {
  const files: Record<string, string> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
      (spec.calcChain === true
        ? '<Override PartName="/xl/calcChain.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.calcChain+xml"/>'
        : '') +
      '</Types>',
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${R_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${SML_NS}" xmlns:r="${R_NS}"><sheets><sheet name="Data Sheet" sheetId="1" r:id="rId1"/></sheets>${spec.definedNames === undefined ? '' : `<definedNames>${spec.definedNames}</definedNames>`}<calcPr calcId="1"/></workbook>`,
    'xl/_rels/workbook.xml.rels':
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${R_NS}/worksheet" Target="worksheets/sheet1.xml"/>` +
      `<Relationship Id="rId2" Type="${R_NS}/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rId3" Type="${R_NS}/styles" Target="styles.xml"/>` +
      (spec.calcChain === true ? `<Relationship Id="rId4" Type="${R_NS}/calcChain" Target="calcChain.xml"/>` : '') +
      '</Relationships>',
    'xl/sharedStrings.xml': `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${SML_NS}" count="${spec.strings.length}" uniqueCount="${spec.strings.length}">${spec.strings.map((s) => `<si><t xml:space="preserve">${esc(s)}</t></si>`).join('')}</sst>`,
    'xl/styles.xml': `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${SML_NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/></numFmts><cellXfs count="3"><xf numFmtId="0" fontId="0"/><xf numFmtId="4" fontId="0" applyNumberFormat="1"/><xf numFmtId="164" fontId="0" applyNumberFormat="1"/></cellXfs></styleSheet>`,
    'xl/worksheets/sheet1.xml': `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${SML_NS}" xmlns:r="${R_NS}"><dimension ref="A1:C9"/><sheetData>${spec.rows}</sheetData>${spec.tail ?? ''}${spec.table === undefined ? '' : '<tableParts count="1"><tablePart r:id="rId1"/></tableParts>'}</worksheet>`,
  };
  if (spec.table !== undefined) {
    files['xl/worksheets/_rels/sheet1.xml.rels'] =
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${R_NS}/table" Target="../tables/table1.xml"/></Relationships>`;
    files['xl/tables/table1.xml'] = spec.table;
  }
  if (spec.calcChain === true)
    files['xl/calcChain.xml'] = `<?xml version="1.0" encoding="UTF-8"?><calcChain xmlns="${SML_NS}"><c r="C3" i="1"/></calcChain>`;
  return zip(files);
}

/** `s:N` = shared string N, `n:V` = number, `f:F` = formula; `style` optional. */
export function row(r: number, cells: Array<[string, string, number?]>): string {
  return `<row r="${r}">${cells
    .map(([ref, v, s]) => {
      const st = s === undefined ? '' : ` s="${s}"`;
      if (v.startsWith('s:')) return `<c r="${ref}"${st} t="s"><v>${v.slice(2)}</v></c>`;
      if (v.startsWith('f:')) return `<c r="${ref}"${st}><f>${v.slice(2)}</f><v>0</v></c>`;
      return `<c r="${ref}"${st}><v>${v.slice(2)}</v></c>`;
    })
    .join('')}</row>`;
}

/** Cells of a rendered sheet as `REF=value` (shared strings resolved), in document order. */
export function sheetCells(bytes: Uint8Array, part = 'xl/worksheets/sheet1.xml'): string[] {
  const files = unzipText(bytes);
  const shared = [...(files.get('xl/sharedStrings.xml') ?? '').matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) =>
    (m[1] ?? '').replace(/<[^>]+>/g, ''),
  );
  const xml = files.get(part) ?? '';
  const out: string[] = [];
  for (const m of xml.matchAll(/<c r="([A-Z]+\d+)"([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
    const attrs = m[2] ?? '';
    const body = m[3] ?? '';
    const t = /\st="([^"]*)"/.exec(attrs)?.[1];
    const f = /<f>([^<]*)<\/f>/.exec(body)?.[1];
    const v = /<v>([^<]*)<\/v>/.exec(body)?.[1] ?? '';
    let value: string;
    if (f !== undefined) value = `=${f}`;
    else if (t === 's') value = shared[Number(v)] ?? '?';
    else if (t === 'inlineStr') value = (body.match(/<t[^>]*>([^<]*)<\/t>/g) ?? []).map((x) => x.replace(/<[^>]+>/g, '')).join('');
    else if (t === 'b') value = `bool:${v}`;
    else value = v === '' ? '' : `num:${v}`;
    const s = /\ss="(\d+)"/.exec(attrs)?.[1];
    out.push(`${m[1]}=${value}${s !== undefined && value.startsWith('num:') ? `@${s}` : ''}`);
  }
  return out;
}

const P_NS = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const A_NS = 'http://schemas.openxmlformats.org/drawingml/2006/main';

/** A text shape with one paragraph per string. */
export function shape(id: number, ...paras: string[]): string {
  return (
    `<p:sp><p:nvSpPr><p:cNvPr id="${id}" name="S${id}"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="100" y="200"/><a:ext cx="4000" cy="2000"/></a:xfrm></p:spPr>` +
    `<p:txBody><a:bodyPr/>${paras.map((t) => `<a:p><a:r><a:rPr lang="en-US"/><a:t>${esc(t)}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp>`
  );
}

/** The group properties a slide's shape tree starts with (required by the schema). */
export const SP_TREE_START = '<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>';

const A16 = 'http://schemas.microsoft.com/office/drawing/2014/main';

/**
 * A table on a slide: one row per array, one paragraph per line of a cell; each row `rowHeight` EMU high (the frame
 * is as high as its rows) and marked with an a16:rowId as PowerPoint writes it.
 */
export function slideTable(id: number, rows: string[][], rowHeight = 370840): string {
  const cols = Math.max(1, ...rows.map((r) => r.length));
  const trs = rows
    .map(
      (r, i) =>
        `<a:tr h="${rowHeight}">${r
          .map(
            (t) =>
              `<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>${t
                .split('\n')
                .map((x) => `<a:p><a:r><a:rPr lang="en-US"/><a:t>${esc(x)}</a:t></a:r></a:p>`)
                .join('')}</a:txBody><a:tcPr/></a:tc>`,
          )
          .join('')}` +
        `<a:extLst><a:ext uri="{0D108BD9-81ED-4DB2-BD59-A6C34878D82A}"><a16:rowId xmlns:a16="${A16}" val="${7 + i}"/></a:ext></a:extLst></a:tr>`,
    )
    .join('');
  return (
    `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="${id}" name="Table ${id}"/><p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>` +
    `<p:xfrm><a:off x="500000" y="1500000"/><a:ext cx="${cols * 2000000}" cy="${rows.length * rowHeight}"/></p:xfrm>` +
    `<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table"><a:tbl><a:tblPr firstRow="1" bandRow="1"/><a:tblGrid>${'<a:gridCol w="2000000"/>'.repeat(cols)}</a:tblGrid>${trs}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`
  );
}

export function pptx(slides: string[]): Uint8Array {
  const files: Record<string, string> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>' +
      slides
        .map(
          (_, i) =>
            `<Override PartName="/ppt/slides/slide${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`,
        )
        .join('') +
      '</Types>',
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${R_NS}/officeDocument" Target="ppt/presentation.xml"/></Relationships>`,
    'ppt/presentation.xml': `<?xml version="1.0" encoding="UTF-8"?><p:presentation xmlns:a="${A_NS}" xmlns:r="${R_NS}" xmlns:p="${P_NS}"><p:sldIdLst>${slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 1}"/>`).join('')}</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>`,
    'ppt/_rels/presentation.xml.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}">${slides.map((_, i) => `<Relationship Id="rId${i + 1}" Type="${R_NS}/slide" Target="slides/slide${i + 1}.xml"/>`).join('')}</Relationships>`,
  };
  slides.forEach((body, i) => {
    files[`ppt/slides/slide${i + 1}.xml`] =
      `<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:a="${A_NS}" xmlns:r="${R_NS}" xmlns:p="${P_NS}"><p:cSld><p:spTree>${SP_TREE_START}${body}</p:spTree></p:cSld></p:sld>`;
    files[`ppt/slides/_rels/slide${i + 1}.xml.rels`] =
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}"></Relationships>`;
  });
  return zip(files);
}

/** 2x1 red PNG. */
export const PNG_2x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAEElEQVR4nGP4z8DAwMDAAAAJ/QH/X8mTXQAAAABJRU5ErkJggg==',
  'base64',
);

export interface BookSheet {
  name: string;
  /** Inner XML of sheetData. */
  rows: string;
  /** XML after sheetData (conditional formats, validations, drawing). */
  tail?: string;
  /** Relationships of the sheet (e.g. its drawing). */
  rels?: string;
}

/** A workbook with several sheets; extra parts (charts, drawings) with their content types. */
export function xlsxBook(spec: {
  strings: string[];
  sheets: BookSheet[];
  definedNames?: string;
  extra?: Record<string, { xml: string; type?: string }>;
  /** Workbook elements after calcPr (pivotCaches) and the workbook relationships they use. */
  workbook?: { tail: string; rels: string };
}): Uint8Array {
  const extra = spec.extra ?? {};
  const files: Record<string, string> = {
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>' +
      '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>' +
      spec.sheets
        .map(
          (_, i) =>
            `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
        )
        .join('') +
      Object.entries(extra)
        .filter(([, v]) => v.type !== undefined)
        .map(([k, v]) => `<Override PartName="/${k}" ContentType="${v.type ?? ''}"/>`)
        .join('') +
      '</Types>',
    '_rels/.rels': `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}"><Relationship Id="rId1" Type="${R_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml':
      `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${SML_NS}" xmlns:r="${R_NS}"><sheets>` +
      spec.sheets.map((s, i) => `<sheet name="${esc(s.name)}" sheetId="${i + 1}" r:id="rIdS${i + 1}"/>`).join('') +
      `</sheets>${spec.definedNames === undefined ? '' : `<definedNames>${spec.definedNames}</definedNames>`}<calcPr calcId="1"/>${spec.workbook?.tail ?? ''}</workbook>`,
    'xl/_rels/workbook.xml.rels':
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}">` +
      spec.sheets
        .map((_, i) => `<Relationship Id="rIdS${i + 1}" Type="${R_NS}/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`)
        .join('') +
      `<Relationship Id="rIdSS" Type="${R_NS}/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rIdST" Type="${R_NS}/styles" Target="styles.xml"/>${spec.workbook?.rels ?? ''}</Relationships>`,
    'xl/sharedStrings.xml': `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${SML_NS}" count="${spec.strings.length}" uniqueCount="${spec.strings.length}">${spec.strings.map((s) => `<si><t xml:space="preserve">${esc(s)}</t></si>`).join('')}</sst>`,
    'xl/styles.xml': `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${SML_NS}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs><dxfs count="1"><dxf><font><b/></font></dxf></dxfs></styleSheet>`,
  };
  spec.sheets.forEach((s, i) => {
    files[`xl/worksheets/sheet${i + 1}.xml`] =
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${SML_NS}" xmlns:r="${R_NS}"><sheetData>${s.rows}</sheetData>${s.tail ?? ''}</worksheet>`;
    if (s.rels !== undefined)
      files[`xl/worksheets/_rels/sheet${i + 1}.xml.rels`] =
        `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${PKG_RELS}">${s.rels}</Relationships>`;
  });
  for (const [name, v] of Object.entries(extra)) files[name] = v.xml;
  return zip(files);
}

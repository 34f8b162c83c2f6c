// Office documents written as plain text, and read back as plain text, for the template authors' guide
// (docs/templates.md, checked by test/unit/engine/templates-guide.test.ts). One notation for templates and
// for what the engine made of them:
//
//   docx   one line per paragraph; `| a | b |` lines are the rows of a table; `[text](address)` is a
//          hyperlink; `**bold**` and `*italic*` runs; a paragraph style as `[Heading1] text`; a picture
//          as `[image 120×40]` (its size in pixels); a line break inside a paragraph as ` ↵ `.
//   pptx   `--- slide ---` starts a slide, each following line a paragraph of its text box; a picture
//          as `[image W×H]`.
//   xlsx   `--- sheet Name ---` starts a sheet, then one line per row: `| a | b |` from column A, row 1
//          (the reader prefixes each row with its number: `3 | Pen | 2 |`); a cell `=SUM(B2:B2)` is a
//          formula, a plain number a number, anything else text; dates read back as `2026-01-15 (date)`.
import { inflateEntry, readZip, writeZip } from '../../engine/zip.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';
const REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';
const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const P = 'http://schemas.openxmlformats.org/presentationml/2006/main';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const S = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function pkg(files: Record<string, string>): Uint8Array {
  return writeZip(Object.entries(files).map(([name, text]) => ({ name, data: enc(text) })));
}

function types(overrides: Record<string, string>): string {
  return (
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
    Object.entries(overrides)
      .map(([part, type]) => `<Override PartName="/${part}" ContentType="application/vnd.openxmlformats-officedocument.${type}"/>`)
      .join('') +
    '</Types>'
  );
}

function rels(list: [id: string, type: string, target: string, external?: boolean][]): string {
  return `${XML}<Relationships xmlns="${PKG_REL}">${list.map(([id, type, target, ext]) => `<Relationship Id="${id}" Type="${REL}/${type}" Target="${esc(target)}"${ext ? ' TargetMode="External"' : ''}/>`).join('')}</Relationships>`;
}

/** The runs of a line of the notation: plain, **bold**, *italic*, and [text](address) hyperlinks. */
function docxRuns(line: string, links: [string, string, string, boolean][]): string {
  let out = '';
  const re = /\[([^\]]*)\]\(([^)]*)\)|\*\*([^*]+)\*\*|\*([^*]+)\*|([^[*]+|[[*])/g;
  const run = (text: string, props = '') =>
    `<w:r>${props ? `<w:rPr>${props}</w:rPr>` : ''}<w:t xml:space="preserve">${esc(text)}</w:t></w:r>`;
  for (const m of line.matchAll(re)) {
    if (m[1] !== undefined) {
      const id = `rIdLink${links.length + 1}`;
      links.push([id, 'hyperlink', m[2]!, true]);
      out += `<w:hyperlink r:id="${id}">${run(m[1], '<w:rStyle w:val="Hyperlink"/>')}</w:hyperlink>`;
    } else if (m[3] !== undefined) out += run(m[3], '<w:b/>');
    else if (m[4] !== undefined) out += run(m[4], '<w:i/>');
    else out += run(m[5]!);
  }
  return out;
}

/** The cells of a `| a | b |` line; a `|` inside a tag (a filter) does not separate cells. */
function cellsOf(line: string): string[] {
  const cells = [''];
  let depth = 0;
  const inner = line.trim().slice(1, -1);
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (c === '{') depth++;
    else if (c === '}') depth = Math.max(0, depth - 1);
    if (c === '|' && depth === 0) cells.push('');
    else cells[cells.length - 1] += c;
  }
  return cells.map((c) => c.trim());
}

function docxBody(lines: string[], links: [string, string, string, boolean][]): string {
  let body = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('|')) {
      let rows = '';
      for (; i < lines.length && lines[i]!.startsWith('|'); i++) {
        const cells = cellsOf(lines[i]!);
        rows += `<w:tr>${cells.map((c) => `<w:tc><w:p>${docxRuns(c, links)}</w:p></w:tc>`).join('')}</w:tr>`;
      }
      i--;
      body += `<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/></w:tblPr>${rows}</w:tbl>`;
    } else {
      const style = /^\[(\w+)\] (.*)$/.exec(line);
      body += `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style[1]}"/></w:pPr>` : ''}${docxRuns(style ? style[2]! : line, links)}</w:p>`;
    }
  }
  return body;
}

/** A docx from the notation (a document part, its relationships for hyperlinks). */
export function docxFrom(text: string): Uint8Array {
  const links: [string, string, string, boolean][] = [];
  const body = docxBody(text.split('\n'), links);
  return pkg({
    '[Content_Types].xml': types({ 'word/document.xml': 'wordprocessingml.document.main+xml' }),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'word/document.xml']]),
    'word/_rels/document.xml.rels': rels(links),
    'word/document.xml': `${XML}<w:document xmlns:w="${W}" xmlns:r="${REL}"><w:body>${body}<w:sectPr/></w:body></w:document>`,
  });
}

/** A pptx from the notation: one text box per slide, a paragraph per line. */
export function pptxFrom(text: string): Uint8Array {
  const slides = text
    .split(/^--- slide ---$/m)
    .slice(1)
    .map((s) => s.split('\n').filter((l) => l !== ''));
  const tree = (inner: string) =>
    `<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>${inner}</p:spTree></p:cSld>`;
  const files: Record<string, string> = {
    '[Content_Types].xml': types({
      'ppt/presentation.xml': 'presentationml.presentation.main+xml',
      'ppt/slideMasters/slideMaster1.xml': 'presentationml.slideMaster+xml',
      'ppt/slideLayouts/slideLayout1.xml': 'presentationml.slideLayout+xml',
      ...Object.fromEntries(slides.map((_, i) => [`ppt/slides/slide${i + 1}.xml`, 'presentationml.slide+xml'])),
    }),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'ppt/presentation.xml']]),
    'ppt/presentation.xml':
      `${XML}<p:presentation xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}"><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>` +
      slides.map((_, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 2}"/>`).join('') +
      '</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>',
    'ppt/_rels/presentation.xml.rels': rels([
      ['rId1', 'slideMaster', 'slideMasters/slideMaster1.xml'],
      ...slides.map((_, i) => [`rId${i + 2}`, 'slide', `slides/slide${i + 1}.xml`] as [string, string, string]),
    ]),
    'ppt/slideMasters/slideMaster1.xml':
      `${XML}<p:sldMaster xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}">${tree('')}` +
      '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>' +
      '<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>',
    'ppt/slideMasters/_rels/slideMaster1.xml.rels': rels([['rId1', 'slideLayout', '../slideLayouts/slideLayout1.xml']]),
    'ppt/slideLayouts/slideLayout1.xml': `${XML}<p:sldLayout xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}">${tree('')}</p:sldLayout>`,
    'ppt/slideLayouts/_rels/slideLayout1.xml.rels': rels([['rId1', 'slideMaster', '../slideMasters/slideMaster1.xml']]),
  };
  slides.forEach((lines, i) => {
    const shape =
      '<p:sp><p:nvSpPr><p:cNvPr id="2" name="Text"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>' +
      '<p:spPr><a:xfrm><a:off x="914400" y="914400"/><a:ext cx="7315200" cy="1828800"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr>' +
      `<p:txBody><a:bodyPr/><a:lstStyle/>${lines.map((l) => `<a:p><a:r><a:rPr lang="en-US"/><a:t>${esc(l)}</a:t></a:r></a:p>`).join('')}</p:txBody></p:sp>`;
    files[`ppt/slides/slide${i + 1}.xml`] = `${XML}<p:sld xmlns:p="${P}" xmlns:a="${A}" xmlns:r="${REL}">${tree(shape)}</p:sld>`;
    files[`ppt/slides/_rels/slide${i + 1}.xml.rels`] = rels([['rId1', 'slideLayout', '../slideLayouts/slideLayout1.xml']]);
  });
  return pkg(files);
}

function colName(i: number): string {
  let s = '';
  for (let n = i + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** An xlsx from the notation: sheets of rows; formulas, numbers and inline strings. */
export function xlsxFrom(text: string): Uint8Array {
  const sheets = text
    .split(/^--- sheet (.+) ---$/m)
    .slice(1)
    .reduce<{ name: string; rows: string[][] }[]>((acc, part, i, all) => {
      if (i % 2 === 0)
        acc.push({
          name: part,
          rows: all[i + 1]!.split('\n')
            .filter((l) => l.startsWith('|'))
            .map(cellsOf),
        });
      return acc;
    }, []);
  const cell = (v: string, ref: string) =>
    v === ''
      ? ''
      : v.startsWith('=')
        ? `<c r="${ref}"><f>${esc(v.slice(1))}</f></c>`
        : /^-?\d+(\.\d+)?$/.test(v)
          ? `<c r="${ref}"><v>${v}</v></c>`
          : `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${esc(v)}</t></is></c>`;
  const files: Record<string, string> = {
    '[Content_Types].xml': types({
      'xl/workbook.xml': 'spreadsheetml.sheet.main+xml',
      'xl/styles.xml': 'spreadsheetml.styles+xml',
      ...Object.fromEntries(sheets.map((_, i) => [`xl/worksheets/sheet${i + 1}.xml`, 'spreadsheetml.worksheet+xml'])),
    }),
    '_rels/.rels': rels([['rId1', 'officeDocument', 'xl/workbook.xml']]),
    'xl/workbook.xml': `${XML}<workbook xmlns="${S}" xmlns:r="${REL}"><sheets>${sheets.map((s, i) => `<sheet name="${esc(s.name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join('')}</sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': rels([
      ...sheets.map((_, i) => [`rId${i + 1}`, 'worksheet', `worksheets/sheet${i + 1}.xml`] as [string, string, string]),
      [`rId${sheets.length + 1}`, 'styles', 'styles.xml'],
    ]),
    'xl/styles.xml':
      `${XML}<styleSheet xmlns="${S}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>` +
      '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
      '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs></styleSheet>',
  };
  sheets.forEach((s, si) => {
    const rows = s.rows.map((row, r) => `<row r="${r + 1}">${row.map((v, c) => cell(v, `${colName(c)}${r + 1}`)).join('')}</row>`).join('');
    files[`xl/worksheets/sheet${si + 1}.xml`] = `${XML}<worksheet xmlns="${S}"><sheetData>${rows}</sheetData></worksheet>`;
  });
  return pkg(files);
}

// --- reading back -------------------------------------------------------------------------------------

interface Node {
  name: string;
  attrs: Record<string, string>;
  children: (Node | string)[];
}

function unesc(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}

/** A small XML tree (namespaced names as written), enough for the parts this reader looks at. */
function parseXml(xml: string): Node {
  const root: Node = { name: '#root', attrs: {}, children: [] };
  const stack = [root];
  for (const m of xml.matchAll(
    /<\?[^>]*\?>|<!--[\s\S]*?-->|<\/([\w:.-]+)\s*>|<([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)/g,
  )) {
    const top = stack.at(-1)!;
    if (m[1]) stack.pop();
    else if (m[2]) {
      const attrs: Record<string, string> = {};
      for (const a of m[3]!.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs[a[1]!] = unesc(a[2] ?? a[3] ?? '');
      const node: Node = { name: m[2], attrs, children: [] };
      top.children.push(node);
      if (!m[4]) stack.push(node);
    } else if (m[5] !== undefined) top.children.push(unesc(m[5]));
  }
  return root;
}

const kids = (n: Node) => n.children.filter((c): c is Node => typeof c !== 'string');
function find(n: Node, name: string): Node | undefined {
  for (const c of kids(n)) {
    if (c.name === name) return c;
    const f = find(c, name);
    if (f) return f;
  }
  return undefined;
}
function findAll(n: Node, name: string, out: Node[] = []): Node[] {
  for (const c of kids(n)) {
    if (c.name === name) out.push(c);
    else findAll(c, name, out);
  }
  return out;
}
const textOf = (n: Node): string => n.children.map((c) => (typeof c === 'string' ? c : textOf(c))).join('');

function parts(bytes: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, entry] of readZip(bytes)) if (/\.(xml|rels)$/.test(name)) out.set(name, inflateEntry(entry).toString('utf8'));
  return out;
}

/** Relationship id -> target of a part's relationships. */
function relsOf(files: Map<string, string>, part: string): Map<string, string> {
  const at = part.lastIndexOf('/');
  const xml = files.get(`${part.slice(0, at)}/_rels/${part.slice(at + 1)}.rels`);
  const map = new Map<string, string>();
  if (xml) for (const r of findAll(parseXml(xml), 'Relationship')) map.set(r.attrs.Id!, r.attrs.Target!);
  return map;
}

const px = (emu: string | undefined) => Math.round(Number(emu ?? 0) / 9525);

function docxParagraph(p: Node, links: Map<string, string>): string {
  const style = find(p, 'w:pPr') && kids(find(p, 'w:pPr')!).find((c) => c.name === 'w:pStyle')?.attrs['w:val'];
  const pieces: { text: string; mark: string }[] = [];
  const runText = (r: Node) => {
    let t = '';
    for (const c of kids(r)) {
      if (c.name === 'w:t') t += textOf(c);
      else if (c.name === 'w:tab') t += '\t';
      else if (c.name === 'w:br') t += ' ↵ ';
      else if (c.name === 'w:drawing') {
        const ext = find(c, 'wp:extent');
        t += `[image ${px(ext?.attrs.cx)}×${px(ext?.attrs.cy)}]`;
      }
    }
    return t;
  };
  const on = (rPr: Node | undefined, name: string) => {
    const e = rPr && kids(rPr).find((c) => c.name === name);
    return !!e && !['0', 'false', 'off'].includes(e.attrs['w:val'] ?? 'true');
  };
  const visit = (n: Node) => {
    for (const c of kids(n)) {
      if (c.name === 'w:r') {
        const rPr = kids(c).find((k) => k.name === 'w:rPr');
        pieces.push({ text: runText(c), mark: on(rPr, 'w:b') ? '**' : on(rPr, 'w:i') ? '*' : '' });
      } else if (c.name === 'w:hyperlink') {
        const inner: { text: string; mark: string }[] = [];
        for (const r of findAll(c, 'w:r')) inner.push({ text: runText(r), mark: '' });
        pieces.push({ text: `[${inner.map((x) => x.text).join('')}](${links.get(c.attrs['r:id'] ?? '') ?? ''})`, mark: '' });
      } else if (c.name !== 'w:pPr') visit(c);
    }
  };
  visit(p);
  // Neighbouring runs with the same mark read as one.
  const merged: { text: string; mark: string }[] = [];
  for (const piece of pieces) {
    const last = merged.at(-1);
    if (last && last.mark === piece.mark) last.text += piece.text;
    else merged.push({ ...piece });
  }
  const text = merged.map((m) => (m.mark && m.text.trim() ? `${m.mark}${m.text}${m.mark}` : m.text)).join('');
  return style ? `[${style}] ${text}` : text;
}

/** The notation of a docx's body: paragraphs and tables, in order. */
export function docxText(bytes: Uint8Array): string {
  const files = parts(bytes);
  const links = relsOf(files, 'word/document.xml');
  const body = find(parseXml(files.get('word/document.xml')!), 'w:body')!;
  const lines: string[] = [];
  for (const c of kids(body)) {
    if (c.name === 'w:p') lines.push(docxParagraph(c, links));
    else if (c.name === 'w:tbl') {
      for (const tr of kids(c).filter((k) => k.name === 'w:tr')) {
        lines.push(
          `| ${kids(tr)
            .filter((k) => k.name === 'w:tc')
            .map((tc) =>
              findAll(tc, 'w:p')
                .map((p) => docxParagraph(p, links))
                .filter(Boolean)
                .join(' / '),
            )
            .join(' | ')} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

/** The notation of a pptx: each slide's text box paragraphs and pictures, in presentation order. */
export function pptxText(bytes: Uint8Array): string {
  const files = parts(bytes);
  const presRels = relsOf(files, 'ppt/presentation.xml');
  const out: string[] = [];
  for (const id of findAll(parseXml(files.get('ppt/presentation.xml')!), 'p:sldId')) {
    const part = `ppt/${presRels.get(id.attrs['r:id']!)!}`;
    out.push('--- slide ---');
    const tree = find(parseXml(files.get(part)!), 'p:spTree')!;
    for (const shape of kids(tree)) {
      if (shape.name === 'p:sp') for (const p of findAll(shape, 'a:p')) out.push(findAll(p, 'a:t').map(textOf).join(''));
      else if (shape.name === 'p:pic') {
        const xfrm = find(shape, 'a:xfrm');
        const ext = xfrm && kids(xfrm).find((k) => k.name === 'a:ext');
        out.push(`[image ${px(ext?.attrs.cx)}×${px(ext?.attrs.cy)}]`);
      }
    }
  }
  return out.join('\n');
}

/** The notation of an xlsx: each sheet's rows, numbered, with formulas, numbers, text and dates. */
export function xlsxText(bytes: Uint8Array): string {
  const files = parts(bytes);
  const wbRels = relsOf(files, 'xl/workbook.xml');
  const shared = files.has('xl/sharedStrings.xml') ? findAll(parseXml(files.get('xl/sharedStrings.xml')!), 'si').map(textOf) : [];
  const styles = files.has('xl/styles.xml') ? parseXml(files.get('xl/styles.xml')!) : undefined;
  const formats = new Map((styles ? findAll(styles, 'numFmt') : []).map((f) => [f.attrs.numFmtId!, f.attrs.formatCode!]));
  const xfs = styles && find(styles, 'cellXfs') ? kids(find(styles, 'cellXfs')!) : [];
  const isDate = (s: string | undefined) => {
    const id = xfs[Number(s ?? 0)]?.attrs.numFmtId ?? '0';
    const code = formats.get(id);
    return (Number(id) >= 14 && Number(id) <= 22) || (code !== undefined && /[dmy]/i.test(code.replace(/"[^"]*"|\[[^\]]*\]/g, '')));
  };
  const out: string[] = [];
  for (const sheet of findAll(parseXml(files.get('xl/workbook.xml')!), 'sheet')) {
    out.push(`--- sheet ${sheet.attrs.name} ---`);
    const part = `xl/${wbRels.get(sheet.attrs['r:id']!)!.replace(/^\/?xl\//, '')}`;
    for (const row of findAll(parseXml(files.get(part)!), 'row')) {
      const cells: string[] = [];
      for (const c of kids(row).filter((k) => k.name === 'c')) {
        const col = /^[A-Z]+/.exec(c.attrs.r!)![0];
        let index = 0;
        for (const ch of col) index = index * 26 + ch.charCodeAt(0) - 64;
        while (cells.length < index - 1) cells.push('');
        const f = kids(c).find((k) => k.name === 'f');
        const v = kids(c).find((k) => k.name === 'v');
        const t = c.attrs.t;
        let value = '';
        if (f) value = `=${textOf(f)}`;
        else if (t === 'inlineStr') value = textOf(find(c, 'is')!);
        else if (t === 's') value = shared[Number(v ? textOf(v) : 0)] ?? '';
        else if (t === 'b') value = v && textOf(v) === '1' ? 'TRUE' : 'FALSE';
        else if (v && isDate(c.attrs.s))
          value = `${new Date(Date.UTC(1899, 11, 30) + Number(textOf(v)) * 86_400_000).toISOString().slice(0, 10)} (date)`;
        else if (v) value = textOf(v);
        cells.push(value);
      }
      out.push(`${row.attrs.r} | ${cells.join(' | ')} |`);
    }
  }
  return out.join('\n');
}

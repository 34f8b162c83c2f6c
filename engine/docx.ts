import type { CompileSpec } from './compile.ts';
import type { LexOptions } from './lexer.ts';
import type { OpcPackage } from './package.ts';

/** WordprocessingML specifics: which parts carry tags and how their markup is shaped. */

const WORD_PART_TYPES = /wordprocessingml\.(header|footer|footnotes|endnotes|comments)\+xml$/;

export function docxTemplatedParts(pkg: OpcPackage): string[] {
  const parts = [pkg.main];
  for (const [name, type] of pkg.overrides) {
    if (WORD_PART_TYPES.test(type) && pkg.entries.has(name)) parts.push(name);
  }
  // Some producers omit overrides for headers/footers; the file names are conventional.
  for (const name of pkg.entries.keys()) {
    if (/^word\/(header|footer)\d*\.xml$/.test(name) && !parts.includes(name)) parts.push(name);
  }
  return parts;
}

export function docxLex(part: string, start: string, end: string): LexOptions {
  return {
    part,
    textTags: new Set(['w:t', 'm:t']),
    paragraphTag: 'w:p',
    runTag: 'w:r',
    runPropsTag: 'w:rPr',
    start,
    end,
    droppedInTag: new Set(['w:p', 'w:br', 'w:bookmarkStart', 'w:bookmarkEnd']),
  };
}

export function docxSpec(paragraphLoop: boolean): CompileSpec {
  return {
    paragraph: 'w:p',
    row: 'w:tr',
    cell: 'w:tc',
    rawExpand: 'w:p',
    includeExpand: 'w:p',
    htmlExpand: 'w:p',
    centerImageExpand: 'w:p',
    paragraphLoop,
    lineBreak: () => '</w:t><w:br/><w:t xml:space="preserve">',
  };
}

/**
 * Word refuses tables without rows and cells whose last block is not a paragraph; loops that render
 * nothing (or an empty `{@raw}`) can leave both behind, so they are repaired after rendering.
 */
export function docxRepair(xml: string): string {
  if (xml.indexOf('<w:tbl') >= 0) xml = dropEmptyTables(xml);
  if (xml.indexOf('<w:tc') >= 0) xml = endCellsWithParagraphs(xml);
  return xml;
}

// Containers whose last block counts as the cell's last block (a content control, custom XML).
const BLOCK_WRAPPERS = new Set(['w:sdt', 'w:sdtContent', 'w:customXml']);
const TAG = /<(\/?)([\w:.-]+)\b[^>]*?(\/?)>/g;

/**
 * A cell must end with a paragraph (ISO/IEC 29500 17.4.66), directly or as the last block of a content
 * control or custom XML element that ends the cell; whitespace does not count. A cell that does not gets
 * an empty paragraph before `</w:tc>`.
 */
function endCellsWithParagraphs(xml: string): string {
  // Per open element: whether its last child element so far ends with a paragraph.
  const stack: Array<{ name: string; ok: boolean }> = [];
  const inserts: number[] = [];
  for (const m of xml.matchAll(TAG)) {
    const [, closing, name = '', self] = m;
    if (name.startsWith('?') || name.startsWith('!')) continue;
    const parent = (): { name: string; ok: boolean } | undefined => stack[stack.length - 1];
    if (self === '/') {
      const p = parent();
      if (p !== undefined) p.ok = name === 'w:p';
    } else if (closing !== '/') {
      stack.push({ name, ok: false });
    } else {
      const frame = stack.pop();
      if (frame === undefined) continue;
      if (name === 'w:tc' && !frame.ok) inserts.push(m.index);
      const p = parent();
      if (p !== undefined) p.ok = name === 'w:p' || (BLOCK_WRAPPERS.has(name) && frame.ok);
    }
  }
  if (inserts.length === 0) return xml;
  let out = '';
  let pos = 0;
  for (const at of inserts) {
    out += `${xml.slice(pos, at)}<w:p/>`;
    pos = at;
  }
  return out + xml.slice(pos);
}

function dropEmptyTables(xml: string): string {
  const re = /<w:tbl>|<w:tbl\s[^>]*>|<\/w:tbl>|<w:tr[\s>/]/g;
  interface Frame {
    start: number;
    rows: number;
  }
  const stack: Frame[] = [];
  const cuts: Array<[number, number]> = [];
  for (const m of xml.matchAll(re)) {
    const tok = m[0];
    const at = m.index;
    if (tok.startsWith('</w:tbl')) {
      const f = stack.pop();
      if (f !== undefined && f.rows === 0) cuts.push([f.start, at + tok.length]);
    } else if (tok.startsWith('<w:tbl')) {
      stack.push({ start: at, rows: 0 });
    } else {
      const top = stack[stack.length - 1];
      if (top !== undefined) top.rows++;
    }
  }
  if (cuts.length === 0) return xml;
  // Nested cuts: keep only outermost ones.
  cuts.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [s, e] of cuts) {
    if (s < pos) continue;
    out += xml.slice(pos, s);
    pos = e;
  }
  return out + xml.slice(pos);
}

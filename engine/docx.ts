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

/**
 * A cell must end with a paragraph (ISO/IEC 29500 17.4.66), directly or as the last block of a content
 * control or custom XML element that ends the cell; whitespace does not count. A cell that does not gets
 * an empty paragraph before `</w:tc>`.
 *
 * Nearly every cell ends with `</w:p>` (or `<w:p/>`) right before `</w:tc>`: that is checked first at each
 * `</w:tc>` alone, and only a part with some other cell end is read element by element.
 */
export function endCellsWithParagraphs(xml: string): string {
  return everyCellEndsWithParagraph(xml) ? xml : endCellsByElements(xml);
}

const CELL_END = '</w:tc>';

/** Whether the markup before each `</w:tc>` (text aside) is a paragraph's end: `</w:p>` or a self-closing `<w:p/>`. */
function everyCellEndsWithParagraph(xml: string): boolean {
  for (let at = xml.indexOf(CELL_END); at >= 0; at = xml.indexOf(CELL_END, at + CELL_END.length)) {
    if (xml.startsWith('</w:p>', at - 6)) continue;
    const gt = xml.lastIndexOf('>', at - 1);
    if (gt < 0) return false;
    const lt = xml.lastIndexOf('<', gt);
    // No markup between that '>' and the cell's end, and that '>' closes the tag starting at lt.
    if (lt < 0 || xml.indexOf('<', lt + 1) !== at) return false;
    if (gt - lt === 5 && xml.startsWith('</w:p', lt)) continue;
    if (xml.charCodeAt(gt - 1) === SLASH && xml.startsWith('<w:p', lt)) {
      const next = xml.charCodeAt(lt + 4);
      if (next === SLASH || isSpace(next)) continue;
    }
    return false;
  }
  return true;
}

const SLASH = 47;

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** `[\w:.-]`: the characters of an element name as the repair reads it. */
function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 58 || c === 46 || c === 45;
}

function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

interface OpenElement {
  name: string;
  /** Whether its last child element so far ends with a paragraph. */
  ok: boolean;
}

/**
 * Every element in order (the tags `<(\/?)([\w:.-]+)\b[^>]*?(\/?)>` finds; comments and declarations are
 * not elements), keeping per open element whether its last child ends with a paragraph; `<w:p/>` goes
 * before each `</w:tc>` whose cell does not.
 */
function endCellsByElements(xml: string): string {
  const stack: OpenElement[] = [];
  const inserts: number[] = [];
  let i = xml.indexOf('<');
  while (i >= 0) {
    const closing = xml.charCodeAt(i + 1) === SLASH;
    const nameStart = closing ? i + 2 : i + 1;
    let nameEnd = nameStart;
    while (nameEnd < xml.length && isNameChar(xml.charCodeAt(nameEnd))) nameEnd++;
    // The name ends at a word boundary: trailing ':', '.', '-' are not part of it.
    while (nameEnd > nameStart && !isWordChar(xml.charCodeAt(nameEnd - 1))) nameEnd--;
    if (nameEnd === nameStart) {
      i = xml.indexOf('<', i + 1);
      continue;
    }
    const gt = xml.indexOf('>', nameEnd);
    if (gt < 0) break;
    const name = xml.slice(nameStart, nameEnd);
    if (xml.charCodeAt(gt - 1) === SLASH) {
      const p = stack[stack.length - 1];
      if (p !== undefined) p.ok = name === 'w:p';
    } else if (!closing) {
      stack.push({ name, ok: false });
    } else {
      const frame = stack.pop();
      if (frame !== undefined) {
        if (name === 'w:tc' && !frame.ok) inserts.push(i);
        const p = stack[stack.length - 1];
        if (p !== undefined) p.ok = name === 'w:p' || (BLOCK_WRAPPERS.has(name) && frame.ok);
      }
    }
    i = xml.indexOf('<', gt + 1);
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

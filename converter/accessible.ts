/**
 * Accessible pdfs (document.options.accessible, docs/accessibility.md): what the converter reads in the
 * Office package before a tagged PDF/UA-1 export. The language the template sets (so that document.locale
 * fills only a template without one), and what a screen reader would miss: pictures without alternative
 * text that are not marked decorative, tables whose first row is not a header row.
 *
 * Pure functions over the package's XML: no LibreOffice.
 */
import { entryText, readZip, type ZipEntry } from './zip.ts';
import type { OfficeFormat } from './types.ts';

/** One thing a reader of the pdf would miss, located by part (and, for pictures, the picture's name). A
 *  picture marked decorative is one too: LibreOffice 7.4 has no artifacts for pictures, so it still needs a
 *  description to pass PDF/UA (docs/accessibility.md). */
export interface AccessibilityProblem {
  code: 'IMAGE_WITHOUT_ALT_TEXT' | 'TABLE_WITHOUT_HEADER_ROW';
  /** For people: what, where, and how to fix it. */
  message: string;
  /** The package part, e.g. word/document.xml, ppt/slides/slide2.xml, xl/drawings/drawing1.xml. */
  part: string;
}

/** Office's decorative mark (a16 "decorative" extension of a picture's non-visual properties). */
const DECORATIVE = /<(?:\w+:)?decorative\b[^>]*\bval="(?:1|true)"/;

function partsOf(bytes: Uint8Array): Map<string, ZipEntry> {
  return new Map(readZip(bytes).map((e) => [e.name, e]));
}

/** The template's own language, when it sets one: Word's document defaults (w:docDefaults' w:lang), a
 *  presentation's default text style (a:defRPr lang). Workbooks have none. */
export function templateLanguage(bytes: Uint8Array, format: OfficeFormat): string | undefined {
  const parts = partsOf(bytes);
  if (format === 'docx') {
    const styles = parts.get('word/styles.xml');
    const defaults = styles ? /<w:docDefaults\b[\s\S]*?<\/w:docDefaults>/.exec(entryText(styles))?.[0] : undefined;
    const lang = defaults ? /<w:lang\b[^>]*\bw:val="([^"]+)"/.exec(defaults)?.[1] : undefined;
    return lang || undefined;
  }
  if (format === 'pptx') {
    const pres = parts.get('ppt/presentation.xml');
    const style = pres ? /<p:defaultTextStyle\b[\s\S]*?<\/p:defaultTextStyle>/.exec(entryText(pres))?.[0] : undefined;
    const lang = style ? /<a:defRPr\b[^>]*\blang="([^"]+)"/.exec(style)?.[1] : undefined;
    return lang || undefined;
  }
  return undefined;
}

/** The parts that hold the document's visible content, in reading order as far as the names tell. */
function contentParts(parts: Map<string, ZipEntry>, format: OfficeFormat): string[] {
  const byNumber = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
  const names = [...parts.keys()];
  if (format === 'docx')
    return names.filter((n) => /^word\/(?:document|header\d*|footer\d*|footnotes|endnotes)\.xml$/.test(n)).sort(byNumber);
  if (format === 'pptx') return names.filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).sort(byNumber);
  return names.filter((n) => /^xl\/drawings\/drawing\d+\.xml$/.test(n)).sort(byNumber);
}

/** The non-visual properties of each picture in a part: Word's wp:docPr (inline and anchored drawings),
 *  PowerPoint's and Excel's p:pic / xdr:pic cNvPr. */
function pictures(xml: string, format: OfficeFormat): { name: string; descr: string; title: string; decorative: boolean }[] {
  const out: { name: string; descr: string; title: string; decorative: boolean }[] = [];
  const found =
    format === 'docx'
      ? // A drawing is a picture when its graphic is one (not a chart, a shape or a text box).
        [...xml.matchAll(/<wp:(?:inline|anchor)\b[\s\S]*?<\/wp:(?:inline|anchor)>/g)]
          .map((m) => m[0])
          .filter((d) => /<pic:pic\b/.test(d))
          .map((d) => /<wp:docPr\b[^>]*?(?:\/>|>[\s\S]*?<\/wp:docPr>)/.exec(d)?.[0])
      : [...xml.matchAll(/<(p|xdr):pic\b[\s\S]*?<\/\1:pic>/g)].map(
          (m) => /<(?:p|xdr):cNvPr\b[^>]*?(?:\/>|>[\s\S]*?<\/(?:p|xdr):cNvPr>)/.exec(m[0])?.[0],
        );
  for (const pr of found) {
    if (pr === undefined) continue;
    const open = /^<[^>]*>/.exec(pr)?.[0] ?? pr;
    const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(open)?.[1] ?? '';
    out.push({ name: attr('name'), descr: attr('descr').trim(), title: attr('title').trim(), decorative: DECORATIVE.test(pr) });
  }
  return out;
}

/** Word tables whose first row is not marked as a header row (w:tblHeader), which a reader announces as
 *  the column headings. Nested tables are counted with their own first rows. */
function tablesWithoutHeader(xml: string): number {
  let count = 0;
  for (const m of xml.matchAll(/<w:tbl>|<w:tbl\s[^>]*>/g)) {
    const rest = xml.slice(m.index + m[0].length);
    const row = /<w:tr\b[\s\S]*?(?:<\/w:trPr>|<w:tc\b)/.exec(rest)?.[0] ?? '';
    if (!/<w:tblHeader(?:\s*\/>|\s+w:val="(?:1|true|on)"|>)/.test(row)) count++;
  }
  return count;
}

/**
 * What a screen reader would miss in a merged document: each picture with neither alternative text
 * (descr, or a title) nor Office's decorative mark, and each Word table without a header row. In
 * reading order; one problem per picture and per part with tables.
 */
export function accessibilityProblems(bytes: Uint8Array, format: OfficeFormat): AccessibilityProblem[] {
  const parts = partsOf(bytes);
  const problems: AccessibilityProblem[] = [];
  for (const part of contentParts(parts, format)) {
    const xml = entryText(parts.get(part)!);
    for (const p of pictures(xml, format)) {
      if (p.descr || p.title) continue;
      problems.push({
        code: 'IMAGE_WITHOUT_ALT_TEXT',
        message: p.decorative
          ? `the picture "${p.name}" in ${part} is marked decorative, but LibreOffice 7.4 cannot export it as an artifact: it becomes a figure without alternative text; give it a short description too (Office does not read it out for a decorative picture)`
          : `the picture "${p.name}" in ${part} has no alternative text: give an image tag's value an alt text ({"src": ..., "alt": "..."}), or set it on the picture in the template`,
        part,
      });
    }
    if (format === 'docx') {
      const n = tablesWithoutHeader(xml);
      if (n > 0)
        problems.push({
          code: 'TABLE_WITHOUT_HEADER_ROW',
          message: `${n === 1 ? 'a table' : `${n} tables`} in ${part} ${n === 1 ? 'has' : 'have'} no header row: mark the first row as a header row in the template (Word: Table Properties, Row, "Repeat as header row at the top of each page")`,
          part,
        });
    }
  }
  return problems;
}

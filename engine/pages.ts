// Page counts for metering (`pages-generated`, `pages-managed`). Exact for pdf. Office files have no
// page count until something lays them out, so without a rendition the rule is explicit and stable:
//   pptx: number of slides; xlsx: number of worksheets;
//   docx: 1 + hard page breaks + page-starting section breaks + paragraphs with "page break before"
//         (a lower bound: text that overflows a page is not counted without a rendition).
import { inflateEntry, readZip } from './zip.ts';

export function countPages(bytes: Uint8Array, fileFormat: string): number {
  switch (fileFormat) {
    case 'pdf':
      return countPdfPages(bytes);
    case 'pptx':
      return Math.max(1, [...readZip(bytes).keys()].filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length);
    case 'xlsx':
      return Math.max(1, [...readZip(bytes).keys()].filter((n) => /^xl\/worksheets\/[^/]+\.xml$/.test(n)).length);
    case 'docx': {
      const doc = readZip(bytes).get('word/document.xml');
      if (!doc) return 1;
      const xml = inflateEntry(doc).toString('utf8');
      const breaks = xml.match(/<w:br\b[^>]*w:type="page"/g)?.length ?? 0;
      const before = xml.match(/<w:pageBreakBefore(?:\s*\/>|\s+w:val="(?:1|true|on)")/g)?.length ?? 0;
      // Section breaks live in a paragraph's pPr; the body's final sectPr describes the last section.
      const sections = xml.match(/<w:pPr>(?:(?!<\/w:pPr>).)*<w:sectPr\b(?:(?!<\/w:sectPr>).)*<\/w:sectPr>/gs) ?? [];
      const pageSections = sections.filter((s) => !/<w:type w:val="continuous"\/>/.test(s)).length;
      return 1 + breaks + before + pageSections;
    }
    default:
      return 1;
  }
}

/** Counts page objects (`/Type /Page`, not `/Pages`) in the PDF's text; LibreOffice does not hide
 *  them in object streams. */
export function countPdfPages(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return Math.max(1, text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0);
}

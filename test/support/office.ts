// Minimal, valid Office packages built in code for tests, and a reader for their text.
import { inflateEntry, readZip, writeZip } from '../../engine/zip.ts';

const enc = (s: string) => new TextEncoder().encode(s);

/** A one-part docx whose paragraphs are the given texts (each may hold template tags). A tag can be
 *  split over several runs by passing an array of run texts. */
export function makeDocx(paragraphs: (string | string[])[]): Uint8Array {
  const body = paragraphs
    .map(
      (p) => `<w:p>${(Array.isArray(p) ? p : [p]).map((r) => `<w:r><w:t xml:space="preserve">${escapeXml(r)}</w:t></w:r>`).join('')}</w:p>`,
    )
    .join('');
  return writeZip([
    {
      name: '[Content_Types].xml',
      data: enc(
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      ),
    },
    {
      name: '_rels/.rels',
      data: enc(
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
    },
    {
      name: 'word/document.xml',
      data: enc(
        `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}<w:sectPr/></w:body></w:document>`,
      ),
    },
  ]);
}

/** The text of each paragraph of word/document.xml (runs joined). */
export function docxParagraphs(docx: Uint8Array): string[] {
  const entry = readZip(docx).get('word/document.xml');
  if (!entry) throw new Error('no word/document.xml');
  const xml = inflateEntry(entry).toString('utf8');
  return [...xml.matchAll(/<w:p\b[^>]*>([\s\S]*?)<\/w:p>/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((t) => unescapeXml(t[1] ?? '')).join(''),
  );
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

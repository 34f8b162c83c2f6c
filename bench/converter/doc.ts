// The document the converter benchmarks convert (concurrency.ts, sandbox.ts): `pages` pages of
// invoice-like lines, built here so that no file is needed.
import { makeEntry, writeZip } from '../../converter/zip.ts';

export function benchDocx(pages: number): Uint8Array {
  const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
  let body = '';
  // ~45 lines of text fill an A4 page with the default style.
  for (let p = 0; p < pages; p++) {
    body += `<w:p><w:r><w:t>Invoice page ${p + 1}</w:t></w:r></w:p>`;
    for (let i = 0; i < 40; i++)
      body += `<w:p><w:r><w:t xml:space="preserve">item ${p * 40 + i}  qty ${i}  price ${i * 2}.00</w:t></w:r></w:p>`;
  }
  return writeZip([
    makeEntry(
      '[Content_Types].xml',
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    makeEntry(
      '_rels/.rels',
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
    makeEntry(
      'word/document.xml',
      `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}"><w:body>${body}</w:body></w:document>`,
    ),
  ]);
}

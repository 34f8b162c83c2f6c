/**
 * The one change docgen makes to an accessible pdf that is also PDF/A (docs/accessibility.md): LibreOffice 7.4
 * tags it and identifies it as PDF/UA-1 (pdfuaid:part in the XMP packet), but
 *  - keeps calling it PDF/A level B (pdfaid:conformance B), though a tagged file with Unicode text is what
 *    level A asks for, and
 *  - writes pdfuaid:part without the PDF/A extension schema that declares it, which every PDF/A part
 *    requires of a property outside the predefined schemas (veraPDF: ISO 19005-2 6.6.2.3.1).
 * So the packet is rewritten: conformance A, and the extension schema of the pdfuaid namespace (its one
 * property, `part`, an Integer, as ISO 14289-1 defines it). The file gets an incremental update holding the
 * new metadata stream under the same object number; the original bytes are untouched (PDF/A allows it).
 * veraPDF's PDF/A-2a and PDF/UA-1 profiles judge the result in CI (.ci/run).
 */
import { ConvertError } from './errors.ts';
import { appendUpdate, openForUpdate, outerDict, topLevel, type UpdatablePdf } from './pdf.ts';

const EXTENSION =
  '<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" ' +
  'xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">\n' +
  '   <pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">\n' +
  '    <pdfaSchema:schema>PDF/UA identification schema</pdfaSchema:schema>\n' +
  '    <pdfaSchema:namespaceURI>http://www.aiim.org/pdfua/ns/id/</pdfaSchema:namespaceURI>\n' +
  '    <pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix>\n' +
  '    <pdfaSchema:property><rdf:Seq><rdf:li rdf:parseType="Resource">\n' +
  '     <pdfaProperty:name>part</pdfaProperty:name>\n' +
  '     <pdfaProperty:valueType>Integer</pdfaProperty:valueType>\n' +
  '     <pdfaProperty:category>internal</pdfaProperty:category>\n' +
  '     <pdfaProperty:description>The part of ISO 14289 the file conforms to</pdfaProperty:description>\n' +
  '    </rdf:li></rdf:Seq></pdfaSchema:property>\n' +
  '   </rdf:li></rdf:Bag></pdfaExtension:schemas>\n' +
  '  </rdf:Description>\n  ';

/** The XMP packet with conformance A and the pdfuaid extension schema (once). */
export function levelAXmp(xmp: string): string {
  let out = xmp
    .replace(/(<pdfaid:conformance>)\s*B\s*(<\/pdfaid:conformance>)/, '$1A$2')
    .replace(/pdfaid:conformance="B"/, 'pdfaid:conformance="A"');
  if (/xmlns:pdfuaid=/.test(out) && !/pdfaSchema:prefix>\s*pdfuaid\s*</.test(out))
    out = out.replace(/<\/rdf:RDF>/, `${EXTENSION}</rdf:RDF>`);
  return out;
}

/**
 * A PDF/A file LibreOffice tagged and identified as PDF/UA-1, claimed at level A (above). Only for
 * classic-xref files with an uncompressed metadata stream, which is how LibreOffice writes them; anything
 * else is a CONVERSION_FAILED rather than a file claiming what it is not.
 */
export function claimPdfaLevelA(bytes: Uint8Array): Uint8Array {
  const fail = (why: string) => new ConvertError('CONVERSION_FAILED', `cannot mark the accessible PDF/A file as level A: ${why}`);
  const { pdf, catalog } = openWithCatalog(bytes, fail);
  const metaM = /\/Metadata\s+(\d+)\s+(\d+)\s+R/.exec(catalog);
  const meta = metaM ? pdf.get(Number(metaM[1])) : undefined;
  if (!metaM || meta === undefined) throw fail('the catalog has no metadata stream');
  const dict = outerDict(meta) ?? '';
  if (/\/Filter/.test(dict)) throw fail('the metadata stream is compressed');
  const start = meta.indexOf('<?xpacket begin');
  const end = meta.indexOf('<?xpacket end');
  const close = end < 0 ? -1 : meta.indexOf('?>', end);
  if (start < 0 || close < 0) throw fail('the metadata stream holds no XMP packet');
  // The packet as UTF-8 (its bytes are in the latin1 view one char per byte).
  const packet = Buffer.from(meta.slice(start, close + 2), 'latin1').toString('utf8');
  const rewritten = levelAXmp(packet);
  if (!/<pdfaid:conformance>A</.test(rewritten)) throw fail('the XMP packet has no pdfaid:conformance');
  const data = Buffer.from(rewritten, 'utf8');
  const body = Buffer.concat([
    Buffer.from(`<</Type/Metadata/Subtype/XML/Length ${data.byteLength}>>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream', 'latin1'),
  ]);
  return appendUpdate(bytes, pdf, [{ num: Number(metaM[1]), gen: Number(metaM[2]), body }]);
}

/**
 * The document's language in the catalog (/Lang), which screen readers speak the text in: Impress's export
 * writes the office's own locale whatever the document's language, so an accessible pdf whose catalog names
 * another language than the one docgen set gets its catalog updated (an incremental update).
 */
export function setCatalogLanguage(bytes: Uint8Array, language: string): Uint8Array {
  const fail = (why: string) => new ConvertError('CONVERSION_FAILED', `cannot set the accessible pdf's language: ${why}`);
  const { pdf, catalog } = openWithCatalog(bytes, fail);
  const current = /\/Lang\s*\(([^)]*)\)/.exec(topLevel(catalog))?.[1];
  if (current === language) return bytes;
  if (!/^[A-Za-z0-9-]{1,64}$/.test(language)) throw fail(`${JSON.stringify(language)} is not a language tag`);
  const dict = current === undefined ? `${catalog}/Lang(${language})` : catalog.replace(/\/Lang\s*\([^)]*\)/, `/Lang(${language})`);
  return appendUpdate(bytes, pdf, [{ num: pdf.root.num, gen: pdf.root.gen, body: Buffer.from(`<<${dict}>>`, 'latin1') }]);
}

/** The pdf opened for an incremental update (pdf.ts openForUpdate) with its catalog; what cannot be read
 *  fails with this function's own words. */
function openWithCatalog(bytes: Uint8Array, fail: (why: string) => Error): { pdf: UpdatablePdf; catalog: string } {
  let pdf: UpdatablePdf;
  try {
    pdf = openForUpdate(bytes);
  } catch (err) {
    throw fail(err instanceof Error ? err.message.replace(/^cannot update the PDF: /, '') : String(err));
  }
  const body = pdf.get(pdf.root.num);
  const catalog = body === undefined ? undefined : outerDict(body);
  if (catalog === undefined) throw fail('unreadable catalog');
  return { pdf, catalog };
}

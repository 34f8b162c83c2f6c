/**
 * Factur-X / ZUGFeRD 2.x: a PDF/A-3b file with the invoice's CII XML embedded, as the standard requires
 * (Factur-X 1.07, section 6): the XML an embedded file stream (Subtype text/xml, Params ModDate and Size)
 * behind a file specification named factur-x.xml with an AFRelationship (Alternative for the profiles
 * that are full EN 16931 invoices, Data for MINIMUM and BASIC WL), listed in the catalog's /AF array and
 * its EmbeddedFiles name tree, and the XMP packet extended with the fx: schema (DocumentType INVOICE,
 * DocumentFileName, Version, ConformanceLevel) and its PDF/A extension schema description. Written as an
 * incremental update of LibreOffice's PDF/A-3b output (new catalog and metadata objects; PDF/A allows
 * updates), so no PDF library is needed. CI checks the result with veraPDF and Mustang (tools/).
 */
import { deflateSync } from 'node:zlib';
import { ConvertError } from './errors.ts';
import { appendUpdate, openForUpdate, pdfaIdentification } from './pdf.ts';

export interface FacturXEmbedding {
  /** The XML's name in the pdf: factur-x.xml (Factur-X and ZUGFeRD 2.1 onwards). */
  fileName: string;
  /** The XMP fx:ConformanceLevel: MINIMUM, BASIC WL, BASIC, EN 16931, EXTENDED. */
  conformanceLevel: string;
  /** /AFRelationship: Alternative (BASIC, EN 16931, EXTENDED) or Data (MINIMUM, BASIC WL). */
  relationship: 'Alternative' | 'Data' | 'Source';
  /** The file's modification date (its Params /ModDate); defaults to now. */
  date?: Date;
}

const FX_NS = 'urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#';

export function embedFacturX(pdf: Uint8Array, xml: string, e: FacturXEmbedding): Uint8Array {
  const id = pdfaIdentification(pdf);
  if (!id || id.part !== 3) throw new ConvertError('CONVERSION_FAILED', 'a Factur-X invoice needs a PDF/A-3 pdf to embed its XML into');
  const doc = openForUpdate(pdf);
  const catalogBody = doc.get(doc.root.num);
  const catalog = catalogBody === undefined ? undefined : doc.dictOf(catalogBody);
  if (catalog === undefined) throw new ConvertError('CONVERSION_FAILED', 'cannot read the PDF catalog');
  if (/\/Names\b/.test(catalog) || /\/AF\b/.test(catalog))
    throw new ConvertError(
      'CONVERSION_FAILED',
      'the PDF already has a name dictionary or associated files; docgen embeds into its own output only',
    );
  const metaNum = Number(/\/Metadata\s+(\d+)\s+\d+\s+R/.exec(catalog)?.[1] ?? NaN);
  const metaBody = Number.isFinite(metaNum) ? doc.get(metaNum) : undefined;
  const xmp = metaBody === undefined ? undefined : /stream\r?\n([\s\S]*?)\r?\nendstream/.exec(metaBody)?.[1];
  if (xmp === undefined || /\/Filter/.test(doc.dictOf(metaBody!) ?? ''))
    throw new ConvertError('CONVERSION_FAILED', 'cannot read the PDF/A XMP metadata to extend it');

  const date = e.date ?? new Date();
  const pdfDate = `D:${date.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
  const xmlBytes = Buffer.from(xml, 'utf8');
  const packed = deflateSync(xmlBytes);
  const fileNum = doc.size;
  const specNum = doc.size + 1;
  const name = `(${e.fileName.replace(/([()\\])/g, '\\$1')})`;
  const stream = (dict: string, data: Buffer) =>
    Buffer.concat([Buffer.from(`<<${dict} /Length ${data.byteLength}>>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  const fileObj = stream(
    `/Type /EmbeddedFile /Subtype /text#2Fxml /Filter /FlateDecode /Params << /ModDate (${pdfDate}) /Size ${xmlBytes.byteLength} >>`,
    packed,
  );
  const specObj = Buffer.from(
    `<< /Type /Filespec /F ${name} /UF ${name} /Desc (Factur-X invoice) /AFRelationship /${e.relationship} /EF << /F ${fileNum} 0 R /UF ${fileNum} 0 R >> >>`,
    'latin1',
  );
  const newCatalog = Buffer.from(
    `<<${catalog.trim()}\n/AF [${specNum} 0 R]\n/Names << /EmbeddedFiles << /Names [${name} ${specNum} 0 R] >> >> >>`,
    'latin1',
  );
  const metaObj = stream('/Type /Metadata /Subtype /XML', Buffer.from(extendXmp(xmp, e), 'latin1'));
  return appendUpdate(pdf, doc, [
    { num: doc.root.num, gen: doc.root.gen, body: newCatalog },
    { num: metaNum, body: metaObj },
    { num: fileNum, body: fileObj },
    { num: specNum, body: specObj },
  ]);
}

/** The XMP packet (latin1 view of its UTF-8 bytes) with the fx: properties and their extension schema. */
function extendXmp(xmp: string, e: FacturXEmbedding): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const prop = (n: string, d: string) =>
    `<rdf:li rdf:parseType="Resource"><pdfaProperty:name>${n}</pdfaProperty:name><pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category><pdfaProperty:description>${d}</pdfaProperty:description></rdf:li>`;
  const added =
    `  <rdf:Description rdf:about="" xmlns:fx="${FX_NS}">\n` +
    `   <fx:DocumentType>INVOICE</fx:DocumentType>\n` +
    `   <fx:DocumentFileName>${esc(e.fileName)}</fx:DocumentFileName>\n` +
    `   <fx:Version>1.0</fx:Version>\n` +
    `   <fx:ConformanceLevel>${esc(e.conformanceLevel)}</fx:ConformanceLevel>\n` +
    `  </rdf:Description>\n` +
    `  <rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">\n` +
    `   <pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType="Resource">` +
    `<pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema><pdfaSchema:namespaceURI>${FX_NS}</pdfaSchema:namespaceURI><pdfaSchema:prefix>fx</pdfaSchema:prefix>` +
    `<pdfaSchema:property><rdf:Seq>` +
    prop('DocumentFileName', 'The name of the embedded XML document') +
    prop('DocumentType', 'The type of the hybrid document in capital letters, e.g. INVOICE or ORDER') +
    prop('Version', 'The actual version of the standard applying to the embedded XML document') +
    prop('ConformanceLevel', 'The conformance level of the embedded XML document') +
    `</rdf:Seq></pdfaSchema:property></rdf:li></rdf:Bag></pdfaExtension:schemas>\n  </rdf:Description>\n`;
  const at = xmp.lastIndexOf('</rdf:RDF>');
  if (at < 0) throw new ConvertError('CONVERSION_FAILED', 'the PDF/A XMP metadata has no rdf:RDF element');
  return xmp.slice(0, at) + added + ' ' + xmp.slice(at);
}

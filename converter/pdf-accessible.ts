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
import { classicSection, latin1, objectAt, outerDict, readXref } from './pdf.ts';

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
  const pdf = openClassic(bytes, fail);
  const metaM = /\/Metadata\s+(\d+)\s+(\d+)\s+R/.exec(pdf.catalog);
  const meta = metaM ? pdf.at(Number(metaM[1])) : undefined;
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
  return appendObject(bytes, pdf, Number(metaM[1]), Number(metaM[2]), body);
}

/**
 * The document's language in the catalog (/Lang), which screen readers speak the text in: Impress's export
 * writes the office's own locale whatever the document's language, so an accessible pdf whose catalog names
 * another language than the one docgen set gets its catalog updated (an incremental update).
 */
export function setCatalogLanguage(bytes: Uint8Array, language: string): Uint8Array {
  const fail = (why: string) => new ConvertError('CONVERSION_FAILED', `cannot set the accessible pdf's language: ${why}`);
  const pdf = openClassic(bytes, fail);
  const current = /\/Lang\s*\(([^)]*)\)/.exec(topLevelOf(pdf.catalog))?.[1];
  if (current === language) return bytes;
  if (!/^[A-Za-z0-9-]{1,64}$/.test(language)) throw fail(`${JSON.stringify(language)} is not a language tag`);
  const dict = current === undefined ? `${pdf.catalog}/Lang(${language})` : pdf.catalog.replace(/\/Lang\s*\([^)]*\)/, `/Lang(${language})`);
  return appendObject(bytes, pdf, pdf.root.num, pdf.root.gen, Buffer.from(`<<${dict}>>`, 'latin1'));
}

/** A dictionary's own entries, without nested dictionaries (where /Lang of a nested one could hide). */
function topLevelOf(dict: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < dict.length; i++) {
    if (dict.startsWith('<<', i)) {
      depth++;
      i++;
    } else if (dict.startsWith('>>', i)) {
      depth--;
      i++;
    } else if (depth === 0) out += dict[i];
  }
  return out;
}

interface ClassicPdf {
  text: string;
  startxref: number;
  trailerDict: string;
  size: number;
  root: { num: number; gen: number; ref: string };
  /** The catalog dictionary's inside (between << and >>). */
  catalog: string;
  at(num: number): string | undefined;
}

function openClassic(bytes: Uint8Array, fail: (why: string) => Error): ClassicPdf {
  const text = latin1(bytes);
  const sx = text.lastIndexOf('startxref');
  const startxref = Number(/startxref\s+(\d+)/.exec(text.slice(sx))?.[1] ?? -1);
  const classic = startxref >= 0 ? classicSection(text, startxref) : null;
  if (!classic) throw fail('the PDF has no classic xref table');
  const trailerDict = outerDict(classic.trailer) ?? '';
  const size = Number(/\/Size\s+(\d+)/.exec(trailerDict)?.[1] ?? NaN);
  const rootM = /\/Root\s+(\d+)\s+(\d+)\s+R/.exec(trailerDict);
  if (!Number.isFinite(size) || !rootM) throw fail('unreadable trailer');
  const xref = readXref(text, startxref);
  const at = (num: number): string | undefined => {
    const e = xref?.entries.get(num);
    return e?.type === 1 ? objectAt(text, e.offset) : undefined;
  };
  const catalog = outerDict(at(Number(rootM[1])) ?? '');
  if (catalog === undefined) throw fail('unreadable catalog');
  return {
    text,
    startxref,
    trailerDict,
    size,
    root: { num: Number(rootM[1]), gen: Number(rootM[2]), ref: rootM[0] },
    catalog,
    at,
  };
}

/** An incremental update replacing object `num` by `body` (the object's contents after `num gen obj`). */
function appendObject(bytes: Uint8Array, pdf: ClassicPdf, num: number, gen: number, body: Buffer): Uint8Array {
  const sep = pdf.text.endsWith('\n') ? '' : '\n';
  const objOffset = bytes.byteLength + sep.length;
  const obj = Buffer.concat([Buffer.from(`${sep}${num} ${gen} obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
  const xrefOffset = bytes.byteLength + obj.byteLength;
  const info = /\/Info\s+\d+\s+\d+\s+R/.exec(pdf.trailerDict)?.[0] ?? '';
  const id = /\/ID\s*\[[^\]]*\]/.exec(pdf.trailerDict)?.[0] ?? '';
  const tail = Buffer.from(
    `xref\n${num} 1\n${String(objOffset).padStart(10, '0')} ${String(gen).padStart(5, '0')} n \n` +
      `trailer\n<< /Size ${pdf.size} ${pdf.root.ref} ${info} ${id} /Prev ${pdf.startxref} >>\nstartxref\n${xrefOffset}\n%%EOF\n`,
    'latin1',
  );
  return new Uint8Array(Buffer.concat([bytes, obj, tail]));
}

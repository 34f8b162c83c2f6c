/**
 * Pre-conversion hardening of OOXML packages (GUIDE §5, issues #4 and #11; Gotenberg's GHSA-2mrg-35hw-x3x9
 * and GHSA-rm4c-xj6x-49mw are what happens without it: LibreOffice happily fetches linked images, linked
 * OLE objects and INCLUDETEXT targets from file:// and http:// while converting).
 *
 * Every part of the package is looked at, whatever its name or case: a part is XML when its bytes say so
 * (a `<` first, after an optional UTF-8 byte order mark and white space), not when its name ends in
 * `.xml`, because LibreOffice follows relationships to whatever part they name. XML parts are parsed with
 * the engine's strict tokenizer (engine/xml.ts: quote-aware tags, no DOCTYPE) and a strict attribute
 * parser here (quoted values, predefined and numeric entities only, no duplicates), so what is judged is
 * what an XML parser reads, not what a regular expression happens to match.
 *
 * Refused outright (BAD_INPUT): anything that is not a sane zip, macros (vbaProject parts, a macro
 * relationship or content type, whatever part it names), a part that is not well-formed UTF-8 XML
 * (DOCTYPE, undefined entities, mismatched tags, UTF-16 or another encoding, a duplicated or ambiguous
 * attribute), DDE and OLE links of spreadsheets (`ddeLink`, `oleLink`).
 *
 * Stripped:
 * - in every relationship part (`*.rels` anywhere, any case): relationships whose TargetMode is anything
 *   but Internal (any case, any surrounding white space) or whose Target is absolute (a scheme, `//` or a
 *   UNC path), except http(s)/mailto hyperlinks that the part they belong to uses only as hyperlinks
 *   (those become clickable links and are never fetched), and every altChunk import;
 * - in every XML part: altChunk elements; `href`/`src` attributes holding an absolute URL or path (VML
 *   `imagedata`, SVG images...); the instructions of fields that pull content from elsewhere (INCLUDE,
 *   INCLUDEPICTURE, INCLUDETEXT, LINK, DDE, DDEAUTO, IMPORT, DATABASE, RD) and of fields whose name is
 *   computed by a nested field, reassembled across runs, CDATA and comments before being judged; the
 *   field's cached result, if any, is what the author saw, and stays; spreadsheet formulas with a DDE
 *   reference (`app|topic!item`), keeping their cached value; a data: URI whose bytes are not a raster
 *   image (LibreOffice sniffs bytes, not declared types);
 * - in an SVG (an XML part with an `svg` element, whatever its name): every reference that does not stay
 *   inside the document (`href`/`src` other than `#id`, relative ones included, `xml:base`, `url(...)` of
 *   another file, a style sheet that imports or names one);
 * - images, by their bytes: a gzip-compressed part (LibreOffice inflates svgz, emz and wmz unseen) is
 *   inflated and judged again, an SVG cleaned as above, stored inflated; EMF/WMF whose comments or
 *   escapes (where EMF+ images live) name a file or a server or embed SVG, PDF, PostScript or a gzip
 *   stream; PDF, PostScript and the other graphic formats anywhere; and any image part (by relationship or
 *   content type) that is not a raster image (PNG, JPEG, GIF, BMP, TIFF, WebP, JPEG XR), SVG, EMF or WMF:
 *   its bytes become a transparent 1x1 PNG, so relationships and layout stay valid. Stripped, not refused,
 *   as an external relationship is: the document converts without what it would have fetched.
 *
 * This is the first line; the second is LibreOffice itself (its sandbox, no network, macros off,
 * UpdateDocMode NO_UPDATE) — see sandbox.ts and pool.ts.
 */
import { constants as zlibConstants, gunzipSync, inflateRawSync } from 'node:zlib';
import { tokenize, type XmlToken, XmlSyntaxError } from '../engine/xml.ts';
import { ConvertError } from './errors.ts';
import { entryData, makeEntry, readZip, writeZip } from './zip.ts';
import type { OutEntry, ZipEntry } from '../engine/zip.ts';

export interface SanitizeResult {
  bytes: Uint8Array;
  /** Human-readable list of what was removed, empty when the input came back unchanged. */
  removed: string[];
  /** The package carries fonts of its own (word/fonts, ppt/fonts: Word's and PowerPoint's embedded fonts).
   *  LibreOffice registers them for the whole process and keeps them after the document closes. */
  embedsFonts: boolean;
}

/** Where Word, PowerPoint and Excel keep a document's embedded fonts (obfuscated .odttf, .fntdata, plain). */
const EMBEDDED_FONT = /^(word|ppt|xl)\/fonts\/|\.(odttf|fntdata|ttf|otf|ttc)$/i;

const DANGEROUS_FIELD = /^\s*(INCLUDEPICTURE|INCLUDETEXT|INCLUDE|LINK|DDE|DDEAUTO|IMPORT|DATABASE|RD)(?![\w])/i;
const SAFE_EXTERNAL_HYPERLINK = /^(https?:|mailto:)/i;
const HYPERLINK_TYPES = new Set([
  'http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink',
  'http://purl.oclc.org/ooxml/officeDocument/relationships/hyperlink',
]);
/** Elements whose `id` attribute names a relationship used as a clickable link only. */
const HYPERLINK_ELEMENTS = new Set(['hyperlink', 'hlinkclick', 'hlinkhover', 'hlinkmouseover']);
/** A scheme (`file:`, `http:`, a drive letter `c:`), a network path (`//host`, `\\host`). */
const ABSOLUTE_TARGET = /^\s*([a-z][a-z0-9+.-]*:|[/\\]{2})/i;

function refuse(part: string, why: string): never {
  throw new ConvertError('BAD_INPUT', `${part}: ${why}`);
}

// --- strict XML reading ---------------------------------------------------------------------------------

interface Attr {
  name: string;
  /** Lower-cased local name (after the prefix): LibreOffice matches names exactly, we match them in any
   *  case so that a spelling it would ignore is judged too. */
  local: string;
  value: string;
}

interface StartTag {
  name: string;
  local: string;
  attrs: Attr[];
  self: boolean;
}

const localOf = (name: string) => name.slice(name.lastIndexOf(':') + 1).toLowerCase();

/** Entity references as XML without a DTD defines them: the five predefined ones and character references. */
function decodeEntities(part: string, s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&([^;&]*);?/g, (m, ref: string) => {
    if (!m.endsWith(';')) refuse(part, "an '&' that starts no entity reference");
    switch (ref) {
      case 'amp':
        return '&';
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
    }
    const num = /^#(?:x([0-9a-f]+)|([0-9]+))$/i.exec(ref);
    const code = num ? parseInt(num[1] ?? num[2] ?? '', num[1] ? 16 : 10) : NaN;
    if (!(code > 0 && code <= 0x10ffff)) refuse(part, `undefined entity reference &${ref.slice(0, 20)};`);
    return String.fromCodePoint(code);
  });
}

const NAME = /^[A-Za-z_:\u00C0-\uFFFF][\w.:\u00B7-\uFFFF-]*/;

/** Parses a start tag's text exactly as XML defines it: Name (S Name S? = S? 'value' | "value")* S? /? */
function parseStartTag(part: string, text: string, selfClosing: boolean): StartTag {
  const body = text.slice(1, selfClosing ? -2 : -1);
  const nameMatch = NAME.exec(body);
  if (!nameMatch) refuse(part, 'malformed start tag');
  const name = nameMatch[0];
  const attrs: Attr[] = [];
  const seen = new Set<string>();
  let i = name.length;
  for (;;) {
    const ws = /^[ \t\r\n]*/.exec(body.slice(i))?.[0].length ?? 0;
    i += ws;
    if (i >= body.length) break;
    if (ws === 0) refuse(part, `<${name}>: attributes must be separated by white space`);
    const m = /^([A-Za-z_:\u00C0-\uFFFF][\w.:\u00B7-\uFFFF-]*)[ \t\r\n]*=[ \t\r\n]*("([^"]*)"|'([^']*)')/.exec(body.slice(i));
    if (!m) refuse(part, `<${name}>: malformed attribute`);
    const attrName = m[1] ?? '';
    if (seen.has(attrName)) refuse(part, `<${name}>: attribute ${attrName} appears twice`);
    seen.add(attrName);
    // Attribute-value normalisation: literal white space characters read as spaces.
    const raw = (m[3] ?? m[4] ?? '').replace(/[\t\r\n]/g, ' ');
    attrs.push({ name: attrName, local: localOf(attrName), value: decodeEntities(part, raw) });
    i += m[0].length;
  }
  return { name, local: localOf(name), attrs, self: selfClosing };
}

function startTagText(tag: StartTag): string {
  const esc = (v: string) =>
    v
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/"/g, '&quot;')
      .replace(/\t/g, '&#9;')
      .replace(/\n/g, '&#10;')
      .replace(/\r/g, '&#13;');
  return `<${tag.name}${tag.attrs.map((a) => ` ${a.name}="${esc(a.value)}"`).join('')}${tag.self ? '/>' : '>'}`;
}

/** The values of the attributes with this local name (any case). */
const attrValues = (tag: StartTag, local: string) => tag.attrs.filter((a) => a.local === local).map((a) => a.value);

/** The one value of an attribute that must not be ambiguous; refuses two spellings of it. */
function singleAttr(part: string, tag: StartTag, local: string): string | undefined {
  const values = attrValues(tag, local);
  if (values.length > 1) refuse(part, `<${tag.name}> has ${values.length} ${local} attributes`);
  return values[0];
}

interface XmlPart {
  text: string;
  tokens: XmlToken[];
}

/** Decodes and tokenizes a part that is XML by its content; undefined when it is not XML at all. */
function readXmlPart(part: string, bytes: Uint8Array): XmlPart | undefined {
  let start = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  if (
    (bytes[0] === 0xff && bytes[1] === 0xfe) ||
    (bytes[0] === 0xfe && bytes[1] === 0xff) ||
    (bytes[0] === 0x3c && bytes[1] === 0) ||
    (bytes[0] === 0 && bytes[1] === 0x3c)
  ) {
    refuse(part, 'UTF-16 XML parts are refused (OOXML parts are UTF-8)');
  }
  while (start < bytes.length && (bytes[start] === 0x20 || bytes[start] === 0x09 || bytes[start] === 0x0a || bytes[start] === 0x0d))
    start++;
  if (bytes[start] !== 0x3c) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    refuse(part, 'not valid UTF-8');
  }
  const decl = /^\s*<\?xml\b[^?]*?\bencoding\s*=\s*["']([^"']*)["']/.exec(text);
  if (decl && !/^(utf-?8|us-ascii)$/i.test(decl[1] ?? '')) refuse(part, `encoding ${decl[1] ?? ''} is refused (OOXML parts are UTF-8)`);
  let tokens: XmlToken[];
  try {
    tokens = tokenize(text);
  } catch (err) {
    if (err instanceof XmlSyntaxError && err.id === 'doctype_forbidden')
      throw new ConvertError('BAD_INPUT', `DOCTYPE declarations are refused (${part})`);
    refuse(part, `not well-formed XML (${(err as Error).message})`);
  }
  // Nesting: every close tag matches its open tag.
  const stack: string[] = [];
  for (const t of tokens) {
    if (t.k === 'open' && !t.self) stack.push(t.name);
    else if (t.k === 'close' && stack.pop() !== t.name) refuse(part, `not well-formed XML (</${t.name}> does not close the open element)`);
    else if (t.k === 'text' && t.text.includes('&') && /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/.test(t.text))
      refuse(part, "undefined entity reference or unescaped '&'");
  }
  if (stack.length > 0) refuse(part, `not well-formed XML (<${stack[stack.length - 1] ?? ''}> is not closed)`);
  return { text, tokens };
}

/** The character data of a text or CDATA token. */
function charData(part: string, t: XmlToken): string {
  if (t.k === 'text') return decodeEntities(part, t.text);
  if (t.k === 'other' && t.text.startsWith('<![CDATA[')) return t.text.slice(9, -3);
  return '';
}

/** True when an spreadsheet formula references DDE (`app|topic!item`) outside string literals. */
function isDdeFormula(formula: string): boolean {
  return formula.replace(/"(?:[^"]|"")*"/g, '').includes('|');
}

// --- what an attribute may point at -------------------------------------------------------------------

/** A `url(...)` (CSS, SVG paint and filter references) that names anything but an element of this document. */
function externalCssUrl(value: string): boolean {
  if (!/url\s*\(/i.test(value)) return false;
  for (const m of value.matchAll(/url\s*\(\s*(['"]?)([^'")]*)\1\s*\)/gi)) if (!(m[2] ?? '').trim().startsWith('#')) return true;
  // url( that the pattern above does not read (escapes, unbalanced quotes) is judged external.
  return (value.match(/url\s*\(/gi) ?? []).length !== [...value.matchAll(/url\s*\(\s*(['"]?)([^'")]*)\1\s*\)/gi)].length;
}

/** The bytes of a data: URI, or undefined when it is not one that decodes. */
function dataUriBytes(value: string): Uint8Array | undefined {
  const m = /^\s*data:([^,]*),(.*)$/is.exec(value);
  if (!m) return undefined;
  const body = (m[2] ?? '').trim();
  try {
    return /;\s*base64\s*$/i.test(m[1] ?? '')
      ? new Uint8Array(Buffer.from(body.replace(/\s+/g, ''), 'base64'))
      : new TextEncoder().encode(decodeURIComponent(body));
  } catch {
    return undefined;
  }
}

/**
 * Whether an attribute makes LibreOffice load something: an `href`/`src` holding an absolute URL or path,
 * or a data: URI whose bytes are not a raster image (LibreOffice sniffs the bytes, not the declared type:
 * `data:image/png;base64,` of an SVG is an SVG, with its own references). In an SVG (`svg`), anything but a
 * reference to an element of the same document (`#id`) or a raster data: URI: relative references
 * resolve against the document's own location, `xml:base` moves them, and `url(...)` in paint, filter or
 * style attributes names other files too.
 */
function fetchingAttribute(a: Attr, svg: boolean): boolean {
  if (a.local === 'href' || a.local === 'src') {
    const v = a.value.trim();
    if (/^data:/i.test(v)) {
      const bytes = dataUriBytes(v);
      return bytes === undefined || sniffRaster(bytes) === undefined;
    }
    return svg ? !v.startsWith('#') : ABSOLUTE_TARGET.test(a.value);
  }
  if (!svg) return false;
  return a.name === 'xml:base' || externalCssUrl(a.value);
}

// --- binary parts: images by what their bytes are ------------------------------------------------------

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => sig.every((x, i) => b[at + i] === x);
const ascii = (b: Uint8Array, at: number, len: number) => Buffer.from(b.subarray(at, at + len)).toString('latin1');

/** The raster formats LibreOffice decodes that cannot reference anything outside themselves. */
function sniffRaster(b: Uint8Array): string | undefined {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'PNG';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'JPEG';
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'GIF';
  if (ascii(b, 0, 2) === 'BM' && b.length > 26) return 'BMP';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a])) return 'TIFF';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'WebP';
  if (startsWith(b, [0x49, 0x49, 0xbc])) return 'JPEG XR'; // HD Photo (Office's wdp)
  return undefined;
}

/** EMF (an EMR_HEADER record with its " EMF" signature) or WMF (placeable, or a standard header). */
function sniffMetafile(b: Uint8Array): 'EMF' | 'WMF' | undefined {
  if (startsWith(b, [0x01, 0x00, 0x00, 0x00]) && ascii(b, 40, 4) === ' EMF') return 'EMF';
  if (startsWith(b, [0xd7, 0xcd, 0xc6, 0x9a])) return 'WMF';
  if ((b[0] === 1 || b[0] === 2) && b[1] === 0 && b[2] === 9 && b[3] === 0 && b[4] === 0 && (b[5] === 1 || b[5] === 3)) return 'WMF';
  return undefined;
}

/** Graphic formats LibreOffice also renders as images, none of which a document needs as a part. */
function sniffOtherGraphic(b: Uint8Array): string | undefined {
  if (ascii(b, 0, 1024).includes('%PDF-')) return 'PDF';
  if (ascii(b, 0, 4) === '%!PS' || startsWith(b, [0xc5, 0xd0, 0xd3, 0xc6])) return 'PostScript';
  if (ascii(b, 0, 6) === 'VCLMTF') return 'StarView metafile';
  if (ascii(b, 0, 4) === '8BPS') return 'Photoshop';
  return undefined;
}

/** What in a metafile's embedded data means it does not draw from its own bytes alone: a URL or path, or
 *  a format LibreOffice would hand to its own importers (SVG and XML, PDF, PostScript, its metafile). */
const EMBEDDED_REFERENCE =
  /(?:\b(?:file|https?|ftp|smb|nfs|davs?|vnd\.sun\.star\.[a-z.]+):(?:\/\/|\/|\\)|\\\\[a-z0-9_.$-]+\\|<svg\b|<\?xml|%PDF-|%!PS|VCLMTF)/i;

function embeddedReference(b: Uint8Array): string | undefined {
  const latin1 = Buffer.from(b).toString('latin1');
  const even = Buffer.from(b.subarray(0, b.length - (b.length % 2))).toString('utf16le');
  const odd = b.length > 1 ? Buffer.from(b.subarray(1, b.length - ((b.length - 1) % 2))).toString('utf16le') : '';
  const hit = EMBEDDED_REFERENCE.exec(latin1)?.[0] ?? EMBEDDED_REFERENCE.exec(even)?.[0] ?? EMBEDDED_REFERENCE.exec(odd)?.[0];
  if (hit) return hit;
  // A gzip stream (svgz, emz...) that inflates: its content is judged, not its compressed bytes.
  for (let i = latin1.indexOf('\x1f\x8b\x08'); i >= 0; i = latin1.indexOf('\x1f\x8b\x08', i + 1)) {
    if (gzipInflates(b, i)) return 'a gzip-compressed stream';
  }
  return undefined;
}

/** Whether the bytes at `at` start a gzip member whose deflate data inflates (to anything). */
function gzipInflates(b: Uint8Array, at: number): boolean {
  const flags = b[at + 3] ?? 0;
  let p = at + 10;
  if (flags & 4) p += 2 + u16(b, p); // FEXTRA
  for (const bit of [8, 16]) if (flags & bit) while (p < b.length && b[p++] !== 0); // FNAME, FCOMMENT
  if (flags & 2) p += 2; // FHCRC
  try {
    return inflateRawSync(b.subarray(p), { maxOutputLength: 1 << 20, finishFlush: zlibConstants.Z_SYNC_FLUSH }).length > 0;
  } catch (err) {
    // Past the cap it inflates all the same; anything else is no deflate stream.
    return err instanceof RangeError;
  }
}

const u16 = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
const u32 = (b: Uint8Array, at: number) => (u16(b, at) | (u16(b, at + 2) << 16)) >>> 0;

/**
 * What a metafile references or embeds beyond drawing records, judged record by record: EMF comments
 * (EMR_GDICOMMENT, which carry EMF+ objects: images that LibreOffice decodes by sniffing their bytes) and
 * escapes, WMF escapes. Visible text (EMF+ DrawString, text records) is not judged: a URL drawn as text is
 * just text. Bytes past a malformed record are judged whole.
 */
function metafileReference(b: Uint8Array, kind: 'EMF' | 'WMF'): string | undefined {
  const payloads: Uint8Array[] = [];
  if (kind === 'EMF') {
    for (let off = 0; off + 8 <= b.length;) {
      const type = u32(b, off);
      const size = u32(b, off + 4);
      if (size < 8 || size % 4 !== 0 || off + size > b.length) {
        payloads.push(b.subarray(off));
        break;
      }
      if (type === 70) {
        // EMR_GDICOMMENT: DataSize, then the data; EMF+ records are judged one by one.
        const data = b.subarray(off + 12, Math.min(off + size, off + 12 + u32(b, off + 8)));
        if (u32(data, 0) === 0x2b464d45) {
          for (let p = 4; p + 12 <= data.length;) {
            const t = u16(data, p);
            const len = u32(data, p + 4);
            if (len < 12 || p + len > data.length) {
              payloads.push(data.subarray(p));
              break;
            }
            if (t !== 0x401c && t !== 0x4036) payloads.push(data.subarray(p + 12, p + len));
            p += len;
          }
        } else payloads.push(data);
      } else if (type === 105 || type === 106 || type === 110) payloads.push(b.subarray(off + 8, off + size)); // escapes
      if (type === 14) break; // EMR_EOF
      off += size;
    }
  } else {
    let off = u32(b, 0) === 0x9ac6cdd7 ? 22 : 0;
    off += u16(b, off + 2) * 2; // the header's size, in 16-bit words
    while (off + 6 <= b.length) {
      const size = u32(b, off) * 2;
      const fn = u16(b, off + 4);
      if (size < 6 || off + size > b.length) {
        payloads.push(b.subarray(off));
        break;
      }
      if (fn === 0x0626) payloads.push(b.subarray(off + 6, off + size)); // META_ESCAPE
      if (fn === 0) break; // META_EOF
      off += size;
    }
  }
  for (const p of payloads) {
    const hit = embeddedReference(p);
    if (hit) return hit;
  }
  return undefined;
}

/** A transparent 1x1 PNG: what a stripped image part holds, so that its relationships and layout stay valid. */
const EMPTY_PNG = new Uint8Array(
  Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==', 'base64'),
);

/** Inflated size past which a gzip-compressed part is not inflated (and is stripped). */
const MAX_INFLATED_PART = 64 * 1024 * 1024;

/** An XML part is an SVG when it has an element named svg (any prefix): LibreOffice's SVG import reads it. */
const isSvg = (xml: XmlPart) =>
  // The plain word first: its search is twenty times faster than the tag's over a part without it.
  /svg/i.test(xml.text) && /<([\w.-]+:)?svg[\s/>]/i.test(xml.text) && xml.tokens.some((t) => t.k === 'open' && localOf(t.name) === 'svg');

/**
 * Judges a part that is not XML by its bytes: the replacement when it changes (cleaned SVG text, an inflated
 * metafile, the empty PNG), undefined when it stays. `image`: a relationship or content type says it is an
 * image. Raster formats stay; gzip is inflated (LibreOffice inflates svgz, emz and wmz whatever the part is
 * called) and judged again; EMF/WMF stay unless they name a file or a server; other graphic formats (PDF,
 * PostScript...) anywhere, and an image part that is none of these, are stripped.
 */
function sanitizeBinary(part: string, bytes: Uint8Array, image: boolean, removed: string[]): Uint8Array | string | undefined {
  const strip = (what: string) => {
    removed.push(`${part}: ${what}; replaced by an empty image`);
    return EMPTY_PNG;
  };
  if (sniffRaster(bytes)) return undefined;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    let inner: Uint8Array;
    try {
      inner = new Uint8Array(gunzipSync(bytes, { maxOutputLength: MAX_INFLATED_PART }));
    } catch (err) {
      return strip(`gzip-compressed part that does not inflate within ${MAX_INFLATED_PART} bytes (${(err as Error).message})`);
    }
    const xml = readXmlPart(`${part} (inflated)`, inner);
    if (xml) {
      const svg = isSvg(xml);
      const r = sanitizeContent(part, xml, new Set(), removed, svg);
      removed.push(`${part}: gzip-compressed ${svg ? 'SVG' : 'XML'} inflated and cleaned`);
      return r.text ?? xml.text;
    }
    const meta = sniffMetafile(inner);
    if (meta) {
      const ref = metafileReference(inner, meta);
      if (ref) return strip(`gzip-compressed ${meta} that references ${ref}`);
      removed.push(`${part}: gzip-compressed ${meta} inflated`);
      return inner;
    }
    return strip('gzip-compressed part that is not an SVG, EMF or WMF');
  }
  const meta = sniffMetafile(bytes);
  if (meta) {
    const ref = metafileReference(bytes, meta);
    return ref ? strip(`${meta} that references ${ref}`) : undefined;
  }
  const other = sniffOtherGraphic(bytes);
  if (other) return strip(`${other} image (not a known raster image, SVG, EMF or WMF)`);
  if (image) return strip('image part whose bytes are not a known raster image, SVG, EMF or WMF');
  return undefined;
}

// --- content parts: fields, altChunk, absolute href/src, DDE ------------------------------------------

interface ContentResult {
  text: string | undefined;
  /** Hyperlink relationship ids this part uses other than as hyperlinks. */
  nonLinkRefs: Set<string>;
}

/** Elements judged by name. */
const INTERESTING = new Set(['altchunk', 'ddelink', 'olelink', 'fldsimple', 'fldchar', 'instrtext', 'delinstrtext', 'f']);

/** Whether a start tag's attributes need reading: an entity (anything may hide behind one), an href or
 *  src, or the id of one of the part's hyperlink relationships. */
function mayMatter(tagText: string, linkIds: ReadonlySet<string>): boolean {
  if (tagText.includes('&') || /href|src/i.test(tagText)) return true;
  for (const id of linkIds) if (tagText.includes(id)) return true;
  return false;
}

interface Field {
  text: string;
  /** Token indices of the instruction's character data. */
  instr: number[];
  /** Token indices of the instructions of fields nested in this field's instruction. */
  nested: number[];
  /** Every instruction token of this field, for its parent's `nested`. */
  all: number[];
  /** A nested field started while this field's name was still empty: its name is computed. */
  computedName: boolean;
  dangerous: boolean;
  /** Past the separate mark: what follows is the cached result. */
  inResult: boolean;
}

/** `linkIds`: the ids of the hyperlink relationships of this part; a use of one of them by anything but a
 *  hyperlink element (an image's r:link, an OLE object's r:id...) is recorded in nonLinkRefs. */
function sanitizeContent(part: string, xml: XmlPart, linkIds: ReadonlySet<string>, removed: string[], svg = false): ContentResult {
  const { tokens } = xml;
  const nonLinkRefs = new Set<string>();
  /** Token index -> replacement text ('' drops the token). */
  const replace = new Map<number, string>();
  const stack: Field[] = [];
  let instrDepth = 0; // inside w:instrText / w:delInstrText
  let dropDepth = 0; // inside an element being removed
  let formulaStart = -1;
  let formulaText = '';
  const openNames: string[] = [];

  const judge = (f: Field) => {
    const dangerous = f.computedName || DANGEROUS_FIELD.test(f.text);
    if (!dangerous || f.dangerous) return;
    f.dangerous = true;
    removed.push(
      `${part}: field ${f.computedName ? '(name computed by a nested field)' : f.text.trim().split(/\s+/).slice(0, 2).join(' ')}`,
    );
  };
  const blankInstr = (f: Field) => {
    if (!f.dangerous) return;
    for (const i of f.instr) replace.set(i, ' ');
    for (const i of f.nested) replace.set(i, ' ');
  };

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (dropDepth > 0) {
      replace.set(i, '');
      if (t.k === 'open' && !t.self) dropDepth++;
      else if (t.k === 'close') dropDepth--;
      continue;
    }
    if (t.k === 'open') {
      const local = localOf(t.name);
      if (!t.self) openNames.push(local);
      // A spreadsheet formula holds text only; an element with children (OMML's m:f) is something else.
      formulaStart = -1;
      // Most elements (runs, text, properties) can neither fetch nor carry a field: their attributes
      // are read only when the element or its text could matter (this keeps big parts fast).
      if (!svg && !INTERESTING.has(local) && !mayMatter(t.text, linkIds)) continue;
      const tag = parseStartTag(part, t.text, t.self);
      const hyperlinkElement = HYPERLINK_ELEMENTS.has(tag.local);
      for (const a of tag.attrs) if (linkIds.has(a.value) && !(hyperlinkElement && a.local === 'id')) nonLinkRefs.add(a.value);
      if (tag.local === 'altchunk') {
        // Listed once, with its relationship (stripped below).
        replace.set(i, '');
        if (!t.self) {
          dropDepth = 1;
          openNames.pop();
        }
        continue;
      }
      if (tag.local === 'ddelink' || tag.local === 'olelink') refuse(part, `${tag.local === 'ddelink' ? 'DDE' : 'OLE'} links are refused`);
      let rewritten = false;
      const absolute = tag.attrs.filter((a) => fetchingAttribute(a, svg));
      if (absolute.length > 0) {
        for (const a of absolute)
          removed.push(`${part}: <${tag.name}> ${a.name} → ${a.value.length > 100 ? `${a.value.slice(0, 100)}…` : a.value}`);
        tag.attrs = tag.attrs.filter((a) => !absolute.includes(a));
        rewritten = true;
      }
      if (tag.local === 'fldsimple') {
        const instr = singleAttr(part, tag, 'instr') ?? '';
        const f: Field = { text: instr, instr: [], computedName: false, dangerous: false, inResult: false, nested: [], all: [] };
        judge(f);
        if (f.dangerous) {
          tag.attrs = tag.attrs.map((a) => (a.local === 'instr' ? { ...a, value: '' } : a));
          rewritten = true;
        }
      } else if (tag.local === 'fldchar') {
        const kind = (singleAttr(part, tag, 'fldchartype') ?? '').trim().toLowerCase();
        if (kind === 'begin') {
          const parent = stack[stack.length - 1];
          if (parent && !parent.inResult && parent.text.trim() === '') parent.computedName = true;
          stack.push({ text: '', instr: [], computedName: false, dangerous: false, inResult: false, nested: [], all: [] });
        } else if (kind === 'separate') {
          const f = stack[stack.length - 1];
          if (f) {
            // The instruction is complete at separate; runs after it belong to the cached result.
            judge(f);
            blankInstr(f);
            f.instr = [];
            f.inResult = true;
          }
        } else if (kind === 'end') {
          const f = stack.pop();
          if (f) {
            judge(f);
            blankInstr(f);
            const parent = stack[stack.length - 1];
            if (parent && !parent.inResult) parent.nested.push(...f.all, ...f.nested);
          }
        }
      } else if (tag.local === 'instrtext' || tag.local === 'delinstrtext') {
        if (!t.self) instrDepth++;
      } else if (tag.local === 'f' && !t.self) {
        formulaStart = i;
        formulaText = '';
      }
      if (rewritten) replace.set(i, startTagText(tag));
      continue;
    }
    if (t.k === 'close') {
      const local = openNames.pop();
      if ((local === 'instrtext' || local === 'delinstrtext') && instrDepth > 0) instrDepth--;
      if (local === 'f' && formulaStart >= 0) {
        if (isDdeFormula(formulaText)) {
          removed.push(`${part}: DDE formula ${formulaText.slice(0, 60)}`);
          for (let j = formulaStart + 1; j < i; j++) replace.set(j, '');
        }
        formulaStart = -1;
      }
      continue;
    }
    const data = charData(part, t);
    if (svg && openNames[openNames.length - 1] === 'style' && (externalCssUrl(data) || /@import/i.test(data))) {
      // A style sheet that imports or points at anything but this document goes whole.
      removed.push(`${part}: <style> with an external reference`);
      replace.set(i, '');
      continue;
    }
    if (formulaStart >= 0) formulaText += data;
    if (instrDepth > 0 && (t.k === 'text' || data !== '')) {
      const f = stack[stack.length - 1];
      if (f) {
        f.text += data;
        f.instr.push(i);
        f.all.push(i);
      } else if (DANGEROUS_FIELD.test(data)) {
        // Instruction text outside any field: nothing to judge it by, so it goes.
        removed.push(`${part}: stray field instruction ${data.trim().split(/\s+/)[0] ?? ''}`);
        replace.set(i, ' ');
      }
    }
  }
  // Fields left open at the end of the part are judged on what they have.
  for (const f of stack) {
    judge(f);
    blankInstr(f);
  }
  if (replace.size === 0) return { text: undefined, nonLinkRefs };
  let out = '';
  for (let i = 0; i < tokens.length; i++) out += replace.get(i) ?? tokens[i]!.text;
  return { text: out, nonLinkRefs };
}

// --- relationship parts ---------------------------------------------------------------------------------

/** The part a relationship part describes, case-insensitively: word/_rels/document.xml.rels → word/document.xml. */
function sourcePartOf(relsName: string): string | undefined {
  const m = /^(.*?)_rels\/([^/]+)\.rels$/i.exec(relsName);
  return m ? `${m[1] ?? ''}${m[2] ?? ''}`.toLowerCase() : undefined;
}

/** Relationship types that load macros (VBA projects, their signatures and data, Word's key bindings and
 *  toolbars, Excel 4.0 macro sheets), whatever part they point at. */
const MACRO_RELATIONSHIP =
  /\/(vbaProject|vbaProjectSignature\w*|wordVbaData|keyMapCustomizations|attachedToolbars|xlMacrosheet|xlIntlMacrosheet)$/i;
/** Content types of the same. */
const MACRO_CONTENT_TYPE = /vbaProject|vbaData|macroEnabled|macrosheet|keyMapCustomizations|attachedToolbars/i;
/** Relationship types whose target LibreOffice decodes as an image. */
const IMAGE_RELATIONSHIP = /\/(image|hdphoto)$/i;

/** A relationship's internal target as a (lower-cased) part name, resolved against the part it belongs to. */
function resolveTarget(relsName: string, target: string): string {
  const base = (sourcePartOf(relsName) ?? '').replace(/[^/]*$/, '');
  let t = target.trim();
  try {
    t = decodeURIComponent(t);
  } catch {
    /* kept as written */
  }
  const segments: string[] = [];
  for (const seg of (t.startsWith('/') ? t.slice(1) : base + t).split('/')) {
    if (seg === '..') segments.pop();
    else if (seg !== '.' && seg !== '') segments.push(seg);
  }
  return segments.join('/').toLowerCase();
}

interface RelsFacts {
  /** The ids of the hyperlink-typed relationships. */
  linkIds: Set<string>;
  /** The parts image relationships point at. */
  images: string[];
}

/** What a relationship part says about its part: hyperlinks and images; refuses a macro relationship. */
function readRels(part: string, xml: XmlPart): RelsFacts {
  const facts: RelsFacts = { linkIds: new Set(), images: [] };
  for (const t of xml.tokens) {
    if (t.k !== 'open') continue;
    const tag = parseStartTag(part, t.text, t.self);
    if (tag.local !== 'relationship') continue;
    const type = (singleAttr(part, tag, 'type') ?? '').trim();
    const target = singleAttr(part, tag, 'target') ?? '';
    if (MACRO_RELATIONSHIP.test(type))
      throw new ConvertError(
        'BAD_INPUT',
        `macro-enabled documents are refused (${part}: a ${type.slice(type.lastIndexOf('/') + 1)} relationship to ${target})`,
      );
    if (HYPERLINK_TYPES.has(type)) facts.linkIds.add(singleAttr(part, tag, 'id') ?? '');
    if (IMAGE_RELATIONSHIP.test(type) && !ABSOLUTE_TARGET.test(target)) facts.images.push(resolveTarget(part, target));
  }
  return facts;
}

/** The image parts by content type ([Content_Types].xml: Default by extension, Override by part name);
 *  refuses macro content types. */
function imageContentTypes(xml: XmlPart): { isImage: (name: string) => boolean } {
  const part = '[Content_Types].xml';
  const defaults = new Map<string, string>();
  const overrides = new Map<string, string>();
  for (const t of xml.tokens) {
    if (t.k !== 'open') continue;
    const tag = parseStartTag(part, t.text, t.self);
    const type = (singleAttr(part, tag, 'contenttype') ?? '').trim();
    if (MACRO_CONTENT_TYPE.test(type)) throw new ConvertError('BAD_INPUT', `macro-enabled documents are refused (content type ${type})`);
    if (tag.local === 'default') defaults.set((singleAttr(part, tag, 'extension') ?? '').toLowerCase(), type);
    else if (tag.local === 'override') overrides.set((singleAttr(part, tag, 'partname') ?? '').replace(/^\//, '').toLowerCase(), type);
  }
  return {
    isImage: (name) => {
      const lower = name.toLowerCase();
      const type = overrides.get(lower) ?? defaults.get(/\.([^./]*)$/.exec(lower)?.[1] ?? '') ?? '';
      return /^image\//i.test(type);
    },
  };
}

function sanitizeRels(part: string, xml: XmlPart, nonLinkRefs: Set<string> | undefined, removed: string[]): string | undefined {
  const { tokens } = xml;
  const drop = new Set<number>();
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (depth > 0) {
      drop.add(i);
      if (t.k === 'open' && !t.self) depth++;
      else if (t.k === 'close') depth--;
      continue;
    }
    if (t.k !== 'open') continue;
    const tag = parseStartTag(part, t.text, t.self);
    if (tag.local !== 'relationship') continue;
    const id = singleAttr(part, tag, 'id') ?? '?';
    const type = (singleAttr(part, tag, 'type') ?? '').trim();
    const targets = attrValues(tag, 'target');
    const modes = attrValues(tag, 'targetmode');
    if (modes.length > 1) refuse(part, `relationship ${id} has ${modes.length} TargetMode attributes`);
    const shortType = type.slice(type.lastIndexOf('/') + 1);
    const target = targets.join(' ');
    let why: string | undefined;
    if (shortType.toLowerCase() === 'afchunk') why = `altChunk import of ${target}`;
    else {
      const external = modes.length === 1 && modes[0]?.trim().toLowerCase() !== 'internal';
      if (external || targets.some((v) => ABSOLUTE_TARGET.test(v))) {
        const clickable =
          HYPERLINK_TYPES.has(type) &&
          targets.length === 1 &&
          SAFE_EXTERNAL_HYPERLINK.test(target.trim()) &&
          !(nonLinkRefs?.has(id) ?? false);
        if (!clickable) why = `external ${shortType} → ${target}`;
      }
    }
    if (!why) continue;
    removed.push(`${part}#${id}: ${why}`);
    drop.add(i);
    if (!t.self) depth = 1;
  }
  if (drop.size === 0) return undefined;
  let out = '';
  for (let i = 0; i < tokens.length; i++) if (!drop.has(i)) out += tokens[i]!.text;
  return out;
}

export function sanitizeOoxml(input: Uint8Array, format: string): SanitizeResult {
  const entries = readZip(input);
  const r = sanitizeParts(
    entries.map((entry) => ({ name: entry.name, entry })),
    format,
  );
  if (r.entries === undefined) return { bytes: input, removed: r.removed, embedsFonts: r.embedsFonts };
  return {
    bytes: writeZip(r.entries.map((e) => ('entry' in e ? e.entry : makeEntry(e.name, e.data)))),
    removed: r.removed,
    embedsFonts: r.embedsFonts,
  };
}

// A template's own parts are the same entries in every merge of it (the engine's template cache), and what
// judging one finds depends only on its bytes, its name and what the package says of it (the hyperlink ids of
// its relationships; whether it is an image): each is judged once per entry and per such context, and its
// verdict (what it becomes, what was removed, the ids it uses) given again. A part that is refused is never
// remembered, so it is refused every time. Entries of a package read from bytes are new objects: never found.
interface XmlVerdict {
  text: string | undefined;
  nonLinkRefs: Set<string>;
  removed: string[];
}
interface BinaryVerdict {
  next: Uint8Array | string | undefined;
  removed: string[];
}
/** Per entry: a relationship part's tokens and facts, [Content_Types].xml's image types, or the verdicts (an
 *  entry with binary verdicts is not XML). */
const relsOfEntry = new WeakMap<ZipEntry, { name: string; xml: XmlPart; facts: RelsFacts } | null>();
const typesOfEntry = new WeakMap<ZipEntry, { isImage: (name: string) => boolean }>();
const xmlVerdicts = new WeakMap<ZipEntry, Map<string, XmlVerdict>>();
const binaryVerdicts = new WeakMap<ZipEntry, Map<string, BinaryVerdict>>();

function remember<K, V>(verdicts: WeakMap<ZipEntry, Map<K, V>>, entry: ZipEntry, key: K, verdict: V): void {
  let byKey = verdicts.get(entry);
  if (!byKey) verdicts.set(entry, (byKey = new Map()));
  // A part judged in many contexts (a template whose rendered relationships differ per merge) keeps a few.
  if (byKey.size >= 8) byKey.clear();
  byKey.set(key, verdict);
}

/** sanitizeOoxml over a package's parts before they are zipped (a render's, engine/index.ts renderParts):
 *  `entries` is undefined when every part stays as it is, else the parts with the cleaned ones in hand. */
export function sanitizeParts(
  entries: readonly OutEntry[],
  format: string,
): { entries: OutEntry[] | undefined; removed: string[]; embedsFonts: boolean } {
  const dataOf = (e: OutEntry): Uint8Array => ('entry' in e ? entryData(e.entry, true) : e.data);
  const types = entries.find((e) => e.name === '[Content_Types].xml');
  if (!types) throw new ConvertError('BAD_INPUT', `not an OOXML ${format} package (no [Content_Types].xml)`);
  const removed: string[] = [];
  const replaced = new Map<string, string | Uint8Array>();
  const rels: [string, XmlPart][] = [];
  const refsByPart = new Map<string, Set<string>>();
  for (const e of entries) {
    if (/(^|\/)vbaProject\.bin$|(^|\/)vbaData\.xml$/i.test(e.name)) {
      throw new ConvertError('BAD_INPUT', `macro-enabled documents are refused (${e.name})`);
    }
  }
  let contentTypes = 'entry' in types ? typesOfEntry.get(types.entry) : undefined;
  if (!contentTypes) {
    const typesXml = readXmlPart(types.name, dataOf(types));
    contentTypes = typesXml ? imageContentTypes(typesXml) : { isImage: () => false };
    if ('entry' in types) typesOfEntry.set(types.entry, contentTypes);
  }
  const linkIdsByPart = new Map<string, Set<string>>();
  const imageParts = new Set<string>();
  // Relationship parts first (small): which ids are hyperlinks, per part they describe, and which parts
  // are images; a macro relationship refuses the package.
  for (const e of entries) {
    if (!/\.rels$/i.test(e.name)) continue;
    // Its facts depend on its name too (targets are resolved from it).
    let read = 'entry' in e ? relsOfEntry.get(e.entry) : undefined;
    if (read === undefined || (read && read.name !== e.name)) {
      const xml = readXmlPart(e.name, dataOf(e));
      read = xml ? { name: e.name, xml, facts: readRels(e.name, xml) } : null;
      if ('entry' in e) relsOfEntry.set(e.entry, read);
    }
    if (!read) continue;
    rels.push([e.name, read.xml]);
    const source = sourcePartOf(e.name);
    if (source !== undefined) linkIdsByPart.set(source, read.facts.linkIds);
    for (const p of read.facts.images) imageParts.add(p);
  }
  // Then every other part, one at a time (its tokens are dropped once it is judged): XML by its content,
  // anything else by what its bytes are.
  for (const e of entries) {
    if (/\.rels$/i.test(e.name)) continue;
    const entry = 'entry' in e ? e.entry : undefined;
    const linkIds = linkIdsByPart.get(e.name.toLowerCase()) ?? new Set<string>();
    // A template's part not known to be other than XML: its verdict for its name and the ids its
    // relationships name hyperlinks.
    const context = entry && !binaryVerdicts.has(entry) ? [e.name, ...[...linkIds].sort()].join('\n') : undefined;
    const known = context === undefined ? undefined : xmlVerdicts.get(entry!)?.get(context);
    if (known) {
      removed.push(...known.removed);
      refsByPart.set(e.name.toLowerCase(), known.nonLinkRefs);
      if (known.text !== undefined) replaced.set(e.name, known.text);
      continue;
    }
    const bytes = dataOf(e);
    const xml = entry && binaryVerdicts.has(entry) ? undefined : readXmlPart(e.name, bytes);
    if (!xml) {
      const image = imageParts.has(e.name.toLowerCase()) || contentTypes.isImage(e.name);
      const key = `${e.name}\n${image}`;
      const knownBinary = entry && binaryVerdicts.get(entry)?.get(key);
      if (knownBinary) {
        removed.push(...knownBinary.removed);
        if (knownBinary.next !== undefined) replaced.set(e.name, knownBinary.next);
        continue;
      }
      const own: string[] = [];
      const next = sanitizeBinary(e.name, bytes, image, own);
      removed.push(...own);
      if (next !== undefined) replaced.set(e.name, next);
      if (entry) remember(binaryVerdicts, entry, key, { next, removed: own });
      continue;
    }
    if (e.name === '[Content_Types].xml' && /macroEnabled/i.test(xml.text))
      throw new ConvertError('BAD_INPUT', 'macro-enabled documents are refused');
    const own: string[] = [];
    const r = sanitizeContent(e.name, xml, linkIds, own, isSvg(xml));
    removed.push(...own);
    refsByPart.set(e.name.toLowerCase(), r.nonLinkRefs);
    if (r.text !== undefined) replaced.set(e.name, r.text);
    if (context !== undefined) remember(xmlVerdicts, entry!, context, { text: r.text, nonLinkRefs: r.nonLinkRefs, removed: own });
  }
  for (const [name, xml] of rels) {
    const source = sourcePartOf(name);
    const next = sanitizeRels(name, xml, source === undefined ? undefined : refsByPart.get(source), removed);
    if (next !== undefined) replaced.set(name, next);
  }
  const embedsFonts = entries.some((e) => EMBEDDED_FONT.test(e.name));
  if (!replaced.size) return { entries: undefined, removed, embedsFonts };
  const out = entries.map((e): OutEntry => {
    const t = replaced.get(e.name);
    return t === undefined ? e : { name: e.name, data: typeof t === 'string' ? Buffer.from(t, 'utf8') : t };
  });
  return { entries: out, removed, embedsFonts };
}

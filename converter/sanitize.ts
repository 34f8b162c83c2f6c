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
 * Refused outright (BAD_INPUT): anything that is not a sane zip, macro parts, a part that is not
 * well-formed UTF-8 XML (DOCTYPE, undefined entities, mismatched tags, UTF-16 or another encoding, a
 * duplicated or ambiguous attribute), DDE and OLE links of spreadsheets (`ddeLink`, `oleLink`).
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
 *   reference (`app|topic!item`), keeping their cached value.
 *
 * This is the first line; the second is LibreOffice itself (no network namespace, macros off,
 * UpdateDocMode NO_UPDATE) — see pool.ts.
 */
import { tokenize, type XmlToken, XmlSyntaxError } from '../engine/xml.ts';
import { ConvertError } from './errors.ts';
import { entryData, makeEntry, readZip, writeZip } from './zip.ts';
import type { ZipEntry } from './zip.ts';

export interface SanitizeResult {
  bytes: Uint8Array;
  /** Human-readable list of what was removed, empty when the input came back unchanged. */
  removed: string[];
}

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
      case 'amp': return '&';
      case 'lt': return '<';
      case 'gt': return '>';
      case 'quot': return '"';
      case 'apos': return "'";
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
  const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
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
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0x3c && bytes[1] === 0) || (bytes[0] === 0 && bytes[1] === 0x3c)) {
    refuse(part, 'UTF-16 XML parts are refused (OOXML parts are UTF-8)');
  }
  while (start < bytes.length && (bytes[start] === 0x20 || bytes[start] === 0x09 || bytes[start] === 0x0a || bytes[start] === 0x0d)) start++;
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
    if (err instanceof XmlSyntaxError && err.id === 'doctype_forbidden') throw new ConvertError('BAD_INPUT', `DOCTYPE declarations are refused (${part})`);
    refuse(part, `not well-formed XML (${(err as Error).message})`);
  }
  // Nesting: every close tag matches its open tag.
  const stack: string[] = [];
  for (const t of tokens) {
    if (t.k === 'open' && !t.self) stack.push(t.name);
    else if (t.k === 'close' && stack.pop() !== t.name) refuse(part, `not well-formed XML (</${t.name}> does not close the open element)`);
    else if (t.k === 'text' && t.text.includes('&') && /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/.test(t.text)) refuse(part, "undefined entity reference or unescaped '&'");
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
function sanitizeContent(part: string, xml: XmlPart, linkIds: ReadonlySet<string>, removed: string[]): ContentResult {
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
    removed.push(`${part}: field ${f.computedName ? '(name computed by a nested field)' : f.text.trim().split(/\s+/).slice(0, 2).join(' ')}`);
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
      if (!INTERESTING.has(local) && !mayMatter(t.text, linkIds)) continue;
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
      // data: URIs (SVG images embed pictures so) carry their bytes and fetch nothing.
      const absolute = tag.attrs.filter((a) => (a.local === 'href' || a.local === 'src') && ABSOLUTE_TARGET.test(a.value) && !/^\s*data:/i.test(a.value));
      if (absolute.length > 0) {
        for (const a of absolute) removed.push(`${part}: <${tag.name}> ${a.name} → ${a.value}`);
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

/** The ids of the hyperlink-typed relationships of a relationship part. */
function hyperlinkIds(part: string, xml: XmlPart): Set<string> {
  const ids = new Set<string>();
  for (const t of xml.tokens) {
    if (t.k !== 'open') continue;
    const tag = parseStartTag(part, t.text, t.self);
    if (tag.local === 'relationship' && HYPERLINK_TYPES.has((singleAttr(part, tag, 'type') ?? '').trim())) ids.add(singleAttr(part, tag, 'id') ?? '');
  }
  return ids;
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
  if (!entries.some((e) => e.name === '[Content_Types].xml')) {
    throw new ConvertError('BAD_INPUT', `not an OOXML ${format} package (no [Content_Types].xml)`);
  }
  const removed: string[] = [];
  const replaced = new Map<string, string>();
  const rels: [string, XmlPart][] = [];
  const refsByPart = new Map<string, Set<string>>();
  for (const e of entries) {
    if (/(^|\/)vbaProject\.bin$|(^|\/)vbaData\.xml$/i.test(e.name)) {
      throw new ConvertError('BAD_INPUT', `macro-enabled documents are refused (${e.name})`);
    }
  }
  const linkIdsByPart = new Map<string, Set<string>>();
  // Relationship parts first (small): which ids are hyperlinks, per part they describe.
  for (const e of entries) {
    if (!/\.rels$/i.test(e.name)) continue;
    const xml = readXmlPart(e.name, entryData(e));
    if (!xml) continue;
    rels.push([e.name, xml]);
    const source = sourcePartOf(e.name);
    if (source !== undefined) linkIdsByPart.set(source, hyperlinkIds(e.name, xml));
  }
  // Then every other part, one at a time (its tokens are dropped once it is judged).
  for (const e of entries) {
    if (/\.rels$/i.test(e.name)) continue;
    const xml = readXmlPart(e.name, entryData(e));
    if (!xml) continue;
    if (e.name === '[Content_Types].xml' && /macroEnabled/i.test(xml.text)) throw new ConvertError('BAD_INPUT', 'macro-enabled documents are refused');
    const r = sanitizeContent(e.name, xml, linkIdsByPart.get(e.name.toLowerCase()) ?? new Set(), removed);
    refsByPart.set(e.name.toLowerCase(), r.nonLinkRefs);
    if (r.text !== undefined) replaced.set(e.name, r.text);
  }
  for (const [name, xml] of rels) {
    const source = sourcePartOf(name);
    const next = sanitizeRels(name, xml, source === undefined ? undefined : refsByPart.get(source), removed);
    if (next !== undefined) replaced.set(name, next);
  }
  if (!replaced.size) return { bytes: input, removed };
  const out: ZipEntry[] = entries.map((e) => {
    const t = replaced.get(e.name);
    return t === undefined ? e : makeEntry(e.name, t);
  });
  return { bytes: writeZip(out), removed };
}

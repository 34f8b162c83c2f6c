/**
 * A small, strict XML tokenizer. Office parts are machine-written XML; we keep every byte of
 * markup we do not touch verbatim and only rewrite the text runs that carry tags.
 */

export interface OpenToken {
  k: 'open';
  name: string;
  text: string;
  self: boolean;
}
export interface CloseToken {
  k: 'close';
  name: string;
  text: string;
}
export interface TextToken {
  k: 'text';
  text: string;
}
export interface OtherToken {
  k: 'other';
  text: string;
}
export type XmlToken = OpenToken | CloseToken | TextToken | OtherToken;

export class XmlSyntaxError extends Error {
  readonly offset: number;
  readonly id: string;
  constructor(id: string, message: string, offset: number) {
    super(message);
    this.id = id;
    this.offset = offset;
  }
}

/** More elements than the caller allows (a part built to exhaust memory). */
export class XmlLimitError extends Error {}

function isNameEnd(c: number): boolean {
  // whitespace, '/', '>'
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 47 || c === 62;
}

/** Splits XML into tokens; more than `maxElements` start tags throws XmlLimitError. */
export function tokenize(xml: string, maxElements = Infinity): XmlToken[] {
  // Count the start tags first (no allocation), so a part over the limit is refused before millions of
  // tokens are built.
  if (Number.isFinite(maxElements) && countStartTags(xml, maxElements) > maxElements)
    throw new XmlLimitError(`more than ${maxElements} elements`);
  const out: XmlToken[] = [];
  let elements = 0;
  const n = xml.length;
  let i = 0;
  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (lt < 0) {
      out.push({ k: 'text', text: xml.slice(i) });
      break;
    }
    if (lt > i) out.push({ k: 'text', text: xml.slice(i, lt) });
    const c1 = xml.charCodeAt(lt + 1);
    if (c1 === 63 /* ? */) {
      const end = xml.indexOf('?>', lt + 2);
      if (end < 0) throw new XmlSyntaxError('xml_malformed', 'unterminated processing instruction', lt);
      out.push({ k: 'other', text: xml.slice(lt, end + 2) });
      i = end + 2;
      continue;
    }
    if (c1 === 33 /* ! */) {
      if (xml.startsWith('<!--', lt)) {
        const end = xml.indexOf('-->', lt + 4);
        if (end < 0) throw new XmlSyntaxError('xml_malformed', 'unterminated comment', lt);
        out.push({ k: 'other', text: xml.slice(lt, end + 3) });
        i = end + 3;
        continue;
      }
      if (xml.startsWith('<![CDATA[', lt)) {
        const end = xml.indexOf(']]>', lt + 9);
        if (end < 0) throw new XmlSyntaxError('xml_malformed', 'unterminated CDATA section', lt);
        out.push({ k: 'other', text: xml.slice(lt, end + 3) });
        i = end + 3;
        continue;
      }
      // DOCTYPE (and ENTITY declarations with it) enable entity expansion attacks: never accepted.
      if (/^<!doctype/i.test(xml.slice(lt, lt + 9)))
        throw new XmlSyntaxError('doctype_forbidden', 'XML with a DOCTYPE declaration is refused', lt);
      throw new XmlSyntaxError('xml_malformed', 'unexpected markup declaration', lt);
    }
    if (c1 === 47 /* / */) {
      const end = xml.indexOf('>', lt + 2);
      if (end < 0) throw new XmlSyntaxError('xml_malformed', 'unterminated closing tag', lt);
      const name = xml.slice(lt + 2, end).trim();
      if (name === '' || /\s/.test(name)) throw new XmlSyntaxError('xml_malformed', 'malformed closing tag', lt);
      out.push({ k: 'close', name, text: xml.slice(lt, end + 1) });
      i = end + 1;
      continue;
    }
    // Start tag: attribute values may legally contain '>', so scan quote-aware.
    let j = lt + 1;
    while (j < n && !isNameEnd(xml.charCodeAt(j))) j++;
    const name = xml.slice(lt + 1, j);
    if (name === '' || name.includes('<')) throw new XmlSyntaxError('xml_malformed', 'malformed start tag', lt);
    let quote = 0;
    for (; j < n; j++) {
      const c = xml.charCodeAt(j);
      if (quote !== 0) {
        if (c === quote) quote = 0;
        else if (c === 60) throw new XmlSyntaxError('xml_malformed', "'<' inside an attribute value", j);
      } else if (c === 34 || c === 39) quote = c;
      else if (c === 62) break;
      else if (c === 60) throw new XmlSyntaxError('xml_malformed', `unterminated start tag <${name}>`, lt);
    }
    if (j >= n) throw new XmlSyntaxError('xml_malformed', `unterminated start tag <${name}>`, lt);
    const self = xml.charCodeAt(j - 1) === 47;
    if (++elements > maxElements) throw new XmlLimitError(`more than ${maxElements} elements`);
    out.push({ k: 'open', name, text: xml.slice(lt, j + 1), self });
    i = j + 1;
  }
  return out;
}

/** Start tags (`<` not followed by `/`, `?` or `!`) in `xml`, counting no further than limit + 1. */
function countStartTags(xml: string, limit: number): number {
  let n = 0;
  for (let i = xml.indexOf('<'); i >= 0 && n <= limit; i = xml.indexOf('<', i + 1)) {
    const c = xml.charCodeAt(i + 1);
    if (c !== 47 && c !== 63 && c !== 33) n++;
  }
  return n;
}

/** Throws XmlSyntaxError unless the tokens nest properly (fragments may have several roots). */
export function checkBalanced(tokens: XmlToken[]): void {
  const stack: string[] = [];
  for (const t of tokens) {
    if (t.k === 'open') {
      if (!t.self) stack.push(t.name);
    } else if (t.k === 'close') {
      const top = stack.pop();
      if (top !== t.name) throw new XmlSyntaxError('xml_malformed', `</${t.name}> closes <${top ?? 'nothing'}>`, 0);
    } else if (t.k === 'text' && /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(t.text)) {
      throw new XmlSyntaxError('xml_malformed', "unescaped '&' in text", 0);
    }
  }
  if (stack.length > 0) throw new XmlSyntaxError('xml_malformed', `unclosed <${stack[stack.length - 1] ?? ''}>`, 0);
}

/** Well-formedness check for user-supplied XML fragments ({@raw}). */
export function isWellFormedFragment(xml: string): string | null {
  try {
    checkBalanced(tokenize(xml));
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : 'malformed XML';
  }
}

const ENT: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

export function decodeXml(s: string): string {
  if (s.indexOf('&') < 0) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (m, e: string) => {
    if (e.charCodeAt(0) === 35) {
      const code = e.charCodeAt(1) === 120 ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENT[e] ?? m;
  });
}

// XML 1.0 forbids most C0 controls even when escaped; a stray one makes Word refuse the file.

const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

const ESC_RE = /[&<>"\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export function escapeXml(s: string): string {
  if (!ESC_RE.test(s)) return s;
  return s.replace(INVALID_XML_CHARS, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function getAttr(tagText: string, attr: string): string | undefined {
  const re = new RegExp(`\\s${attr.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`);
  const m = re.exec(tagText);
  if (!m) return undefined;
  return decodeXml(m[1] ?? m[2] ?? '');
}

/** Sets (or adds) an attribute on a start tag's text. */
export function setAttr(tagText: string, attr: string, value: string): string {
  const re = new RegExp(`(\\s${attr.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*=\\s*)(?:"[^"]*"|'[^']*')`);
  const esc = escapeXml(value);
  if (re.test(tagText)) return tagText.replace(re, `$1"${esc}"`);
  const self = tagText.endsWith('/>');
  return `${tagText.slice(0, self ? -2 : -1)} ${attr}="${esc}"${self ? '/>' : '>'}`;
}

import { TemplateError } from './errors.ts';
import { tokenize, XmlSyntaxError } from './xml.ts';

/**
 * Namespaces, not prefixes. The engine reads Office XML with the prefixes Office itself writes
 * (`w:`, `a:`, `p:`, `r:`, SpreadsheetML as the default namespace). Other writers bind the same
 * namespaces to other prefixes: the .NET Open XML SDK writes `<x:workbook xmlns:x="…/spreadsheetml/2006/main">`,
 * some exporters a default WordprocessingML namespace or `ns0:`. `canonicalPrefixes` rewrites a part so
 * that every element and attribute of these namespaces carries the usual prefix; the document means
 * the same (only prefixes and namespace declarations change), and every other part of the engine can
 * keep matching `<sheet\b` or `<w:t>`.
 */

// Only the namespaces whose prefixes the engine's matching depends on: a part is rewritten only when one of
// them has another prefix (Word 2007's `ve:` for markup compatibility, say, leaves the part as it is).
export const CANONICAL_PREFIX: ReadonlyMap<string, string> = new Map([
  ['http://schemas.openxmlformats.org/spreadsheetml/2006/main', ''],
  ['http://schemas.openxmlformats.org/wordprocessingml/2006/main', 'w'],
  ['http://schemas.openxmlformats.org/presentationml/2006/main', 'p'],
  ['http://schemas.openxmlformats.org/drawingml/2006/main', 'a'],
  ['http://schemas.openxmlformats.org/officeDocument/2006/relationships', 'r'],
  ['http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing', 'wp'],
  ['http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing', 'xdr'],
  ['http://schemas.openxmlformats.org/package/2006/relationships', ''],
  ['http://schemas.openxmlformats.org/package/2006/content-types', ''],
  ['http://schemas.openxmlformats.org/officeDocument/2006/custom-properties', ''],
  ['http://schemas.openxmlformats.org/officeDocument/2006/extended-properties', ''],
  ['http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes', 'vt'],
]);

// A namespace declaration, matched where `xmlns` was found (sticky): scanning with indexOf first keeps a
// multi-megabyte sheet from being tried at every whitespace character.
const DECL_AT = /xmlns(?::([^\s=/>]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')/y;

/** Whether some namespace of `CANONICAL_PREFIX` is declared in `xml` under another prefix. */
export function needsCanonicalPrefixes(xml: string): boolean {
  for (let i = xml.indexOf('xmlns'); i >= 0; i = xml.indexOf('xmlns', i + 5)) {
    const before = xml.charCodeAt(i - 1);
    if (before !== 32 && before !== 9 && before !== 10 && before !== 13) continue;
    DECL_AT.lastIndex = i;
    const m = DECL_AT.exec(xml);
    if (m === null) continue;
    const want = CANONICAL_PREFIX.get(m[2] ?? m[3] ?? '');
    if (want !== undefined && want !== (m[1] ?? '')) return true;
  }
  return false;
}

type Scope = Map<string, string>;

const ATTR = /(\s+)([^\s=/>]+)(\s*=\s*)("[^"]*"|'[^']*')/g;

/**
 * `xml` with the namespaces of `CANONICAL_PREFIX` written with their usual prefixes (declared where
 * they are first needed; the original declarations stay, so names in other namespaces and
 * `mc:Ignorable` lists keep their meaning). Unchanged when nothing needs it or the part is not
 * well-formed (the engine reports that where it reads the part). Throws `unsupported_format` naming the
 * part when a name cannot be given its usual prefix (the prefix is bound to another namespace there):
 * the engine would not see such content, so it is refused rather than copied untemplated.
 */
export function canonicalPrefixes(xml: string, part: string): string {
  if (!needsCanonicalPrefixes(xml)) return xml;
  let tokens;
  try {
    tokens = tokenize(xml);
  } catch (e) {
    if (e instanceof XmlSyntaxError) return xml;
    throw e;
  }
  const inStack: Scope[] = [new Map([['xml', 'http://www.w3.org/XML/1998/namespace']])];
  const outStack: Scope[] = [new Map([['xml', 'http://www.w3.org/XML/1998/namespace']])];
  const names: string[] = [];
  const out: string[] = [];
  const refuse = (qname: string, uri: string): never => {
    throw TemplateError.single(
      'unsupported_format',
      `${part}: the element or attribute <${qname}> (namespace ${uri}) cannot be read: its usual prefix "${CANONICAL_PREFIX.get(uri) ?? ''}" is bound to another namespace there`,
      { part },
    );
  };
  for (const t of tokens) {
    if (t.k === 'close') {
      out.push(`</${names.pop() ?? t.name}>`);
      inStack.pop();
      outStack.pop();
      continue;
    }
    if (t.k !== 'open') {
      out.push(t.text);
      continue;
    }
    const parentIn = inStack[inStack.length - 1] ?? new Map<string, string>();
    const parentOut = outStack[outStack.length - 1] ?? new Map<string, string>();
    const body = t.text.slice(1 + t.name.length, t.self ? -2 : -1);
    const attrs: Array<{ ws: string; name: string; eq: string; value: string }> = [];
    let decls: Array<[string, string]> | null = null;
    ATTR.lastIndex = 0;
    for (let m = ATTR.exec(body); m !== null; m = ATTR.exec(body)) {
      const a = { ws: m[1] ?? ' ', name: m[2] ?? '', eq: m[3] ?? '=', value: m[4] ?? '""' };
      attrs.push(a);
      if (a.name === 'xmlns' || a.name.startsWith('xmlns:'))
        (decls ??= []).push([a.name === 'xmlns' ? '' : a.name.slice(6), decodeAttr(a.value.slice(1, -1))]);
    }
    let inScope = parentIn;
    let outScope = parentOut;
    if (decls !== null) {
      inScope = new Map(parentIn);
      outScope = new Map(parentOut);
      for (const [p, uri] of decls) {
        inScope.set(p, uri);
        outScope.set(p, uri);
      }
    }
    const added: string[] = [];
    const place = (qname: string, isAttr: boolean): string => {
      const colon = qname.indexOf(':');
      const prefix = colon < 0 ? '' : qname.slice(0, colon);
      if (isAttr && colon < 0) return qname;
      if (prefix === 'xml' || prefix === 'xmlns') return qname;
      const local = colon < 0 ? qname : qname.slice(colon + 1);
      const uri = inScope.get(prefix) ?? '';
      const want = CANONICAL_PREFIX.get(uri);
      if (want === undefined || want === prefix) {
        // No namespace for an unprefixed element whose output scope gained a default one.
        if (!isAttr && colon < 0 && uri === '' && (outScope.get('') ?? '') !== '') {
          if (outScope === parentOut) outScope = new Map(parentOut);
          outScope.set('', '');
          added.push(' xmlns=""');
        }
        return qname;
      }
      // Attributes have no default namespace: one in a namespace whose usual prefix is '' keeps its own.
      if (isAttr && want === '') return qname;
      if (outScope.get(want) !== uri) {
        // Declaring the usual prefix here must not capture names of descendants: only when it is unbound.
        const free = want === '' ? (inScope.get('') ?? '') === '' : !inScope.has(want);
        if (!free) return refuse(qname, uri);
        if (outScope === parentOut) outScope = new Map(parentOut);
        outScope.set(want, uri);
        added.push(want === '' ? ` xmlns="${encodeAttr(uri)}"` : ` xmlns:${want}="${encodeAttr(uri)}"`);
      }
      return want === '' ? local : `${want}:${local}`;
    };
    const name = place(t.name, false);
    let rebuilt = `<${name}`;
    for (const a of attrs) rebuilt += `${a.ws}${place(a.name, true)}${a.eq}${a.value}`;
    rebuilt += `${added.join('')}${t.self ? '/>' : '>'}`;
    out.push(rebuilt);
    if (!t.self) {
      names.push(name);
      inStack.push(inScope);
      outStack.push(outScope);
    }
  }
  return out.join('');
}

function decodeAttr(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

function encodeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

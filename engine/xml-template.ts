/**
 * XML templates: a plain XML text (an e-invoice, docs/einvoice.md) with the Office templates' tags, rendered
 * to XML text. The same stages as a part of an Office template, minus the Office structure: the tags are
 * found by the lexer's scanner (`scanTags`: the same delimiters and delimiter switches), compiled by
 * compile.ts's `build` (loop pairing, expressions parsed once, filters) and rendered by render.ts's
 * `renderNodes` (scopes, conditions, missing values, loop budget). What differs:
 *
 * - a loop `{#x}…{/x}` repeats exactly the raw text between its tags (there are no paragraphs or rows);
 * - a tag is in an element's text, an attribute value or a CDATA section (anywhere else inside markup,
 *   e.g. between two attributes, is a `tag_position` error); a value is escaped for where it is: text
 *   (`& < > "`), attribute (also `'`, and tab/newline as character references so they survive attribute
 *   normalisation), CDATA (`]]>` split across two sections);
 * - tags inside comments and processing instructions are not tags: left as written;
 * - `{@x}` in an element's text inserts the value as XML, checked well-formed (as `{@raw}` in Office);
 *   images, includes, HTML, slides and `{-element x}` loops are Office features: `xml_template_tag`;
 * - the output must be well-formed XML (one root element, nested and escaped; no DOCTYPE): else an
 *   `xml_malformed` error located by line and column in the output.
 *
 * Errors are the engine's TemplateError, located by line and column in the template (`ErrorLocation`
 * `line`/`column`, `part` the template's name); missing values are `missing_value` warnings (errors under
 * `strict`), as in Office templates.
 */
import { build, type CompileSpec, emitItems, type Node } from './compile.ts';
import { ErrorBag, type ErrorLocation, TemplateError, type TemplateErrorEntry } from './errors.ts';
import type { Expr } from './expression.ts';
import { filterContextOf, toText } from './filters.ts';
import { classifyTag, type Item, scanTags, type TagInfo } from './lexer.ts';
import { limitError, resolveLimits, type TemplateLimits } from './limits.ts';
import { evalTag, missing, type RenderContext, renderNodes } from './render.ts';
import { escapeXml, tokenize, XmlSyntaxError } from './xml.ts';

export interface XmlTemplateOptions {
  /** BCP 47 locale for number/date/currency filters (default en-US). */
  locale?: string;
  /** IANA time zone for date filters (default UTC). */
  timezone?: string;
  /** A tag whose value is missing is an error instead of rendering empty. */
  strict?: boolean;
  delimiters?: { start: string; end: string };
  limits?: Partial<TemplateLimits>;
  /** How locations name the template (default `template.xml`). */
  name?: string;
}

/** The rendered XML, and the tags that rendered empty for want of data (`missing_value`, located). */
export interface XmlRenderReport {
  output: string;
  warnings: TemplateErrorEntry[];
}

/** Where a tag is: its value is escaped for that place. */
type Place = 'text' | 'attribute' | 'cdata' | 'markup';

interface ValueHook {
  expr: Expr;
  tag: TagInfo;
  place: 'attribute' | 'cdata';
}

interface Compiled {
  nodes: Node[];
  errors: TemplateErrorEntry[];
}

const cache = new Map<string, Compiled>();
const CACHE_ENTRIES = 32;

/** Renders an XML template (UTF-8 bytes or text) with data. Every problem is one TemplateError listing them all. */
export function renderXmlTemplate(template: Uint8Array | string, data: unknown, options: XmlTemplateOptions = {}): XmlRenderReport {
  const name = options.name ?? 'template.xml';
  const limits = resolveLimits(options.limits);
  const delimiters = options.delimiters ?? { start: '{', end: '}' };
  if (typeof delimiters.start !== 'string' || typeof delimiters.end !== 'string' || delimiters.start === '' || delimiters.end === '')
    throw TemplateError.single('invalid_option', 'delimiters need non-empty start and end strings');
  const text = textOf(template, name, limits);
  const key = `${delimiters.start}\u0000${delimiters.end}\u0000${name}\u0000${text}`;
  let compiled = cache.get(key);
  if (compiled === undefined) {
    compiled = compileXmlTemplate(text, name, delimiters);
    if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, compiled);
  }
  if (compiled.errors.length > 0) throw new TemplateError(compiled.errors.slice());

  const ctx: RenderContext = {
    filter: filterContextOf(options.locale, options.timezone),
    errors: new ErrorBag(),
    strict: options.strict === true,
    linebreaks: false,
    hook: renderValue,
    budget: { nodes: 0, iterations: 0, maxIterations: limits.maxLoopIterations },
    state: undefined,
    partName: name,
  };
  const out: string[] = [];
  try {
    renderNodes(compiled.nodes, [data], out, ctx);
  } catch (e) {
    if (e instanceof RangeError)
      throw TemplateError.single('render_limit', `the template and data are too deeply nested to render (${e.message})`);
    throw e;
  }
  ctx.errors.throwIfAny();
  const output = out.join('');
  if (output.length > limits.maxOutputBytes)
    throw limitError('maxOutputBytes', `the rendered XML is ${output.length} characters`, limits.maxOutputBytes);
  const problem = wellFormedProblem(output);
  if (problem !== null) {
    const at = lineAndColumn(output, problem.offset);
    throw TemplateError.single(
      'xml_malformed',
      `the rendered XML is not well-formed at line ${at.line}, column ${at.column} of the output: ${problem.message}`,
      { part: `${name} (rendered)`, offset: problem.offset, ...at },
    );
  }
  return { output, warnings: [...(ctx.missing?.values() ?? [])] };
}

function textOf(template: Uint8Array | string, name: string, limits: TemplateLimits): string {
  const size = typeof template === 'string' ? template.length : template.byteLength;
  if (size > limits.maxPartBytes) throw limitError('maxPartBytes', `the XML template ${name} is ${size} bytes`, limits.maxPartBytes);
  let text: string;
  if (typeof template === 'string') text = template;
  else {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(template);
    } catch {
      throw TemplateError.single('xml_malformed', `the XML template ${name} is not UTF-8 text`, { part: name });
    }
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function compileXmlTemplate(text: string, name: string, delimiters: { start: string; end: string }): Compiled {
  const errors = new ErrorBag();
  const lines = lineStarts(text);
  const at = (offset: number): ErrorLocation => ({ part: name, offset, ...position(lines, offset) });
  if (/<!doctype/i.test(text)) {
    errors.add('doctype_forbidden', 'XML with a DOCTYPE declaration is refused', at(text.search(/<!doctype/i)));
    return { nodes: [], errors: errors.entries };
  }
  // Comments and processing instructions are not template text: blanked (offsets kept) before the tags are found.
  let masked = text;
  for (const m of text.matchAll(/<!--|<\?/g)) {
    const s = m.index;
    if (masked.charCodeAt(s) === 32) continue; // inside an earlier comment
    const close = m[0] === '<!--' ? '-->' : '?>';
    const e = text.indexOf(close, s + m[0].length);
    if (e < 0) {
      errors.add('xml_malformed', m[0] === '<!--' ? 'comment never closed' : 'processing instruction never closed', at(s));
      break;
    }
    masked = masked.slice(0, s) + ' '.repeat(e + close.length - s) + masked.slice(e + close.length);
  }
  const found = scanTags(masked, delimiters.start, delimiters.end, errors, at);
  const places = placesOf(masked, found);

  const items: Item[] = [];
  const valuePlaces = new Map<TagInfo, Place | 'raw'>();
  let cur = 0;
  found.forEach((f, i) => {
    if (f.s > cur) items.push({ k: 'raw', text: text.slice(cur, f.s) });
    cur = f.e;
    if (f.drop === true) return;
    const place = places[i] ?? 'text';
    const cls = classifyTag(f.source);
    const tag: TagInfo = { ...cls, source: f.source, location: at(f.s) };
    const shown = f.source.trim();
    if (place === 'markup') {
      errors.add(
        'tag_position',
        `tag "${shown}" is inside an element's markup: a tag goes in an element's text or an attribute value`,
        tag.location,
      );
      return;
    }
    if (tag.expandTo !== undefined || !['field', 'open', 'inverted', 'close', 'raw'].includes(tag.kind)) {
      errors.add(
        'xml_template_tag',
        `tag "${shown}" is an Office template feature: an XML template has fields, loops, conditions and {@xml}`,
        tag.location,
      );
      return;
    }
    if (tag.kind === 'raw') {
      if (place !== 'text') {
        errors.add(
          'xml_template_tag',
          `tag "${shown}" inserts XML: it goes in an element's text, not in an attribute or CDATA`,
          tag.location,
        );
        return;
      }
      // An XML value: compiled as a field, rendered as raw XML (emit below).
      tag.kind = 'field';
      valuePlaces.set(tag, 'raw');
    } else if (place !== 'text') valuePlaces.set(tag, place);
    items.push({ k: 'tag', tag });
  });
  if (cur < text.length) items.push({ k: 'raw', text: text.slice(cur) });

  // No paragraphs, rows or cells: names no element has, so every loop repeats exactly the text between its tags.
  const spec: CompileSpec = {
    paragraph: '\u0000',
    row: '\u0000',
    cell: '',
    rawExpand: '',
    paragraphLoop: false,
    lineBreak: () => null,
    emit(slice, bag) {
      const nodes: Node[] = [];
      emitItems(slice, spec, bag, nodes);
      return nodes.map((n) => {
        if (typeof n === 'string' || n.k !== 'field') return n;
        const place = valuePlaces.get(n.tag);
        if (place === 'raw') return { k: 'raw', expr: n.expr, tag: n.tag };
        if (place === 'attribute' || place === 'cdata') return { k: 'hook', name: 'xml-value', data: { expr: n.expr, tag: n.tag, place } };
        return n;
      });
    },
  };
  const nodes = build(items, spec, errors);
  return { nodes, errors: errors.entries };
}

/** An attribute or CDATA value (render.ts renders text fields, loops and raw XML itself). */
function renderValue(node: Exclude<Node, string>, scopes: readonly unknown[], out: string[], ctx: RenderContext): void {
  if (node.k !== 'hook' || node.name !== 'xml-value') return;
  const { expr, tag, place } = node.data as ValueHook;
  const v = evalTag(expr, tag, scopes, ctx);
  if (v === undefined) missing(tag, ctx);
  const s = toText(v);
  out.push(place === 'attribute' ? escapeAttribute(s) : escapeCdata(s));
}

/** An attribute value in either quote, with its whitespace characters kept through attribute normalisation. */
export function escapeAttribute(s: string): string {
  return escapeXml(s).replace(/['\t\n\r]/g, (c) => ATTRIBUTE_REFS[c]!);
}
const ATTRIBUTE_REFS: Record<string, string> = { "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' };

/** Inside a CDATA section: nothing is escaped; `]]>` ends the section and opens another. */
function escapeCdata(s: string): string {
  return s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '').replaceAll(']]>', ']]]]><![CDATA[>');
}

/** Where each tag of `found` is in the XML (comments and processing instructions already blanked). */
function placesOf(masked: string, found: { s: number; e: number }[]): Place[] {
  const places: Place[] = [];
  let state: Place | 'dq' | 'sq' = 'text';
  let pos = 0;
  for (const f of found) {
    // The XML between the previous tag and this one moves the state; tags themselves do not.
    for (let i = pos; i < f.s; i++) {
      const c = masked.charCodeAt(i);
      switch (state) {
        case 'text':
          if (c === 60 /* < */) {
            if (masked.startsWith('<![CDATA[', i)) {
              state = 'cdata';
              i += 8;
            } else state = 'markup';
          }
          break;
        case 'markup':
          if (c === 34) state = 'dq';
          else if (c === 39) state = 'sq';
          else if (c === 62 /* > */) state = 'text';
          break;
        case 'dq':
          if (c === 34) state = 'markup';
          break;
        case 'sq':
          if (c === 39) state = 'markup';
          break;
        case 'cdata':
          if (c === 93 && masked.startsWith(']]>', i)) {
            state = 'text';
            i += 2;
          }
          break;
      }
    }
    places.push(state === 'dq' || state === 'sq' ? 'attribute' : state);
    pos = Math.max(pos, f.e);
  }
  return places;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function position(starts: number[], offset: number): { line: number; column: number } {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - (starts[lo] ?? 0) + 1 };
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  return position(lineStarts(text.slice(0, offset + 1)), offset);
}

const NAME = /^[A-Za-z_:\u00C0-\uFFFF][\w.\-:\u00B7-\uFFFF]*$/;
const ATTRIBUTE = /\s*([^\s=/>]+)\s*=\s*("[^"]*"|'[^']*')/y;
const PREDEFINED = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;

/**
 * The first reason `xml` is not a well-formed XML document, and where (offset), or null. The engine's strict
 * tokenizer (no DOCTYPE) plus: the declaration first, one root element, elements nested and named, attributes
 * quoted and unique, `&` only in the five predefined or character references, no text outside the root.
 */
export function wellFormedProblem(xml: string): { message: string; offset: number } | null {
  let tokens;
  try {
    tokens = tokenize(xml);
  } catch (e) {
    if (e instanceof XmlSyntaxError) return { message: e.message, offset: e.offset };
    throw e;
  }
  const stack: { name: string; offset: number }[] = [];
  let roots = 0;
  let offset = 0;
  for (const t of tokens) {
    const here = offset;
    offset += t.text.length;
    if (t.k === 'text') {
      if (stack.length === 0) {
        if (t.text.trim() !== '')
          return { message: `text outside the root element: ${JSON.stringify(t.text.trim().slice(0, 40))}`, offset: here };
        continue;
      }
      if (t.text.includes('&') && PREDEFINED.test(t.text))
        return {
          message: `an '&' that is not an entity reference in the text of <${stack.at(-1)!.name}>`,
          offset: here + t.text.search(PREDEFINED),
        };
      if (t.text.includes(']]>')) return { message: `']]>' in the text of <${stack.at(-1)!.name}>`, offset: here + t.text.indexOf(']]>') };
      continue;
    }
    if (t.k === 'other') {
      if (t.text.startsWith('<?xml') && /^<\?xml[\s?]/.test(t.text) && here !== 0)
        return { message: 'the XML declaration <?xml ...?> must come first', offset: here };
      if (t.text.startsWith('<![CDATA[') && stack.length === 0)
        return { message: 'a CDATA section outside the root element', offset: here };
      if (t.text.startsWith('<!--') && t.text.slice(4, -3).includes('--')) return { message: "'--' inside a comment", offset: here };
      continue;
    }
    if (t.k === 'close') {
      const open = stack.pop();
      if (open === undefined) return { message: `</${t.name}> closes no element`, offset: here };
      if (open.name !== t.name) return { message: `</${t.name}> closes <${open.name}>`, offset: here };
      continue;
    }
    if (!NAME.test(t.name)) return { message: `malformed element name <${t.name}>`, offset: here };
    if (stack.length === 0 && ++roots > 1) return { message: `a second root element <${t.name}>`, offset: here };
    const attrs = t.text.slice(t.name.length + 1, t.self ? -2 : -1);
    if (attrs.trim() === '') {
      if (!t.self) stack.push({ name: t.name, offset: here });
      continue;
    }
    const seen = new Set<string>();
    ATTRIBUTE.lastIndex = 0;
    let a = 0;
    for (let m = ATTRIBUTE.exec(attrs); m !== null; m = ATTRIBUTE.exec(attrs)) {
      const [, attr = '', value = ''] = m;
      if (!NAME.test(attr)) return { message: `malformed attribute name ${attr} in <${t.name}>`, offset: here };
      if (seen.has(attr)) return { message: `attribute ${attr} twice in <${t.name}>`, offset: here };
      seen.add(attr);
      if (value.includes('&') && PREDEFINED.test(value))
        return { message: `an '&' that is not an entity reference in attribute ${attr} of <${t.name}>`, offset: here };
      a = ATTRIBUTE.lastIndex;
    }
    if (attrs.slice(a).trim() !== '')
      return { message: `malformed attributes in <${t.name}>: ${JSON.stringify(attrs.slice(a).trim().slice(0, 40))}`, offset: here };
    if (!t.self) stack.push({ name: t.name, offset: here });
  }
  if (stack.length > 0) {
    const open = stack.at(-1)!;
    return { message: `<${open.name}> is never closed`, offset: open.offset };
  }
  if (roots === 0) return { message: 'no root element', offset: 0 };
  return null;
}

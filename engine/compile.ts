import type { ErrorBag } from './errors.ts';
import { ExpressionError, parseExpression } from './expression.ts';
import type { Expr } from './expression.ts';
import type { Item, TagInfo } from './lexer.ts';

/**
 * Stages "parse" + "compile": pairs loop tags, decides what XML element each loop or raw tag
 * repeats/replaces (docxtemplater's rules: a loop across table cells repeats the row; with
 * paragraphLoop a loop whose tags sit alone in their paragraphs repeats the paragraphs in between;
 * otherwise exactly the XML between the tags), and produces a tree of static strings and nodes.
 */

export interface FieldNode {
  k: 'field';
  expr: Expr;
  tag: TagInfo;
  lineBreak: string | null;
}
export interface LoopNode {
  k: 'loop';
  expr: Expr;
  inverted: boolean;
  body: Node[];
  tag: TagInfo;
  /** docx paragraph loops keep a page break that sat in the dropped closing/opening paragraph. */
  pageBreakEnd: boolean;
  pageBreakBegin: boolean;
  /** docx: the opening tag's paragraph ends a next-page section, so every item ends with a page break. */
  pageBreakEach?: boolean;
  /** Element the loop repeats ('' when it repeats only the XML between its tags). */
  unit: string;
  /**
   * XML that replaces an empty loop: a section break (w:sectPr) in the loop's last paragraph
   * must survive even when the loop renders nothing, or the page layout after it changes.
   */
  emptyValue: string;
  /** Format hooks: rendered when the loop renders nothing / before each iteration. */
  onEmpty?: HookNode;
  onIteration?: HookNode;
}
export interface RawNode {
  k: 'raw';
  expr: Expr;
  tag: TagInfo;
}
export interface ImageNode {
  k: 'image';
  expr: Expr;
  tag: TagInfo;
  /** pptx: the shape's box (EMU) the picture replaces; absent for inline (docx) images. */
  frame?: { x: number; y: number; cx: number; cy: number };
  /** docx `{%%img}`: the paragraph is replaced by a centred one holding the image. */
  center?: { paraProps: string; sectPr: string };
}
export interface IncludeNode {
  k: 'include';
  name: string;
  tag: TagInfo;
}
/** Format-specific dynamic markup (xlsx row numbers, cell types...), rendered by the format's hook. */
export interface HookNode {
  k: 'hook';
  name: string;
  data: unknown;
  body?: Node[];
}

export type Node = string | FieldNode | LoopNode | RawNode | ImageNode | IncludeNode | HookNode;

export interface CompileSpec {
  paragraph: string;
  row: string;
  cell: string;
  /** Element a `{@raw}` tag replaces (w:p, p:sp); '' when raw XML is not supported. */
  rawExpand: string;
  /** Element a `{%image}` tag replaces (p:sp in pptx); '' for inline images. */
  imageExpand?: string;
  /** Element a centred `{%%image}` replaces (w:p in docx); inline like `{%image}` where undefined. */
  centerImageExpand?: string;
  /** Element a `{>include}` tag replaces (w:p in docx). */
  includeExpand?: string;
  /** Element a `{~~html}` tag replaces (w:p in docx); HTML tags are refused where undefined. */
  htmlExpand?: string;
  paragraphLoop: boolean;
  /** XML that replaces "\n" in a field value for this tag, or null to keep the newline. */
  lineBreak: (tag: TagInfo) => string | null;
  /** Lets a format replace items with hook nodes before the generic emit (xlsx cells). */
  emit?: (items: Item[], errors: ErrorBag) => Node[];
  /** Lets a format attach hooks to a loop, given the items it repeats. */
  decorateLoop?: (loop: LoopNode, inner: Item[]) => void;
}

function compileExpr(tag: TagInfo, errors: ErrorBag): Expr {
  try {
    return parseExpression(tag.value);
  } catch (e) {
    if (e instanceof ExpressionError) {
      errors.add(e.id, `${e.message} in tag "${tag.source.trim()}"`, { ...tag.location, offset: (tag.location.offset ?? 0) + e.offset });
    } else {
      errors.add('expression_syntax', `cannot parse tag "${tag.source.trim()}"`, tag.location);
    }
    return { t: 'lit', v: undefined };
  }
}

function findLeft(arr: Item[], name: string, from: number): number | null {
  let depth = 0;
  for (let k = from - 1; k >= 0; k--) {
    const it = arr[k];
    if (it === undefined) continue;
    if (it.k === 'close' && it.name === name) depth++;
    else if (it.k === 'open' && !it.self && it.name === name) {
      if (depth === 0) return k;
      depth--;
    }
  }
  return null;
}

function findRight(arr: Item[], name: string, from: number): number | null {
  let depth = 0;
  for (let k = from + 1; k < arr.length; k++) {
    const it = arr[k];
    if (it === undefined) continue;
    if (it.k === 'open' && !it.self && it.name === name) depth++;
    else if (it.k === 'close' && it.name === name) {
      if (depth === 0) return k;
      depth--;
    }
  }
  return null;
}

/** The elements left open or closed between two positions (balanced ones cancel out). */
function unbalanced(arr: Item[], from: number, to: number): string[] {
  const res: string[] = [];
  for (let k = from + 1; k < to; k++) {
    const it = arr[k];
    if (it === undefined) continue;
    if (it.k === 'open' && !it.self) res.push(`<${it.name}`);
    else if (it.k === 'close') {
      if (res[res.length - 1] === `<${it.name}`) res.pop();
      else res.push(`</${it.name}`);
    }
  }
  return res;
}

const isContent = (it: Item): boolean => it.k === 'text' || it.k === 'tag';

/** Splits into chunks at start/end of `name` elements, like docxtemplater's chunkBy. */
function chunkBy(arr: Item[], name: string, topLevelOnly: boolean): Item[][] {
  const chunks: Item[][] = [[]];
  let level = 0;
  for (const it of arr) {
    const cur = chunks[chunks.length - 1] ?? [];
    if (it.k === 'open' && !it.self && it.name === name) {
      level++;
      if (!topLevelOnly || level === 1) {
        chunks.push([it]);
        continue;
      }
    } else if (it.k === 'close' && it.name === name) {
      level--;
      if (!topLevelOnly || level === 0) {
        cur.push(it);
        chunks.push([]);
        continue;
      }
    }
    cur.push(it);
  }
  return chunks.filter((c) => c.length > 0);
}

const hasPageBreak = (chunk: Item[]): boolean => chunk.some((it) => it.k === 'open' && it.name === 'w:br' && /w:type="page"/.test(it.text));
const hasImage = (chunk: Item[]): boolean => chunk.some((it) => it.k === 'open' && it.name === 'w:drawing');

interface Range {
  left: number;
  right: number;
  open: number;
  close: number;
  unit: string;
  kind: 'loop' | 'raw' | 'image' | 'include' | 'htmlBlock';
}

export function build(arr: Item[], spec: CompileSpec, errors: ErrorBag): Node[] {
  const ranges: Range[] = [];
  const stack: number[] = [];
  for (let i = 0; i < arr.length; i++) {
    const it = arr[i];
    if (it === undefined || it.k !== 'tag') continue;
    const tag = it.tag;
    if (tag.kind === 'open' || tag.kind === 'inverted') {
      stack.push(i);
    } else if (tag.kind === 'close') {
      const o = stack.pop();
      if (o === undefined) {
        errors.add('unopened_loop', `closing tag "${tag.source.trim()}" has no matching opening tag`, tag.location);
        continue;
      }
      const openItem = arr[o];
      const openTag = openItem !== undefined && openItem.k === 'tag' ? openItem.tag : undefined;
      if (openTag !== undefined && tag.value !== '' && tag.value !== openTag.value) {
        errors.add(
          'loop_mismatch',
          `closing tag "${tag.source.trim()}" does not match opening tag "${openTag.source.trim()}"`,
          tag.location,
        );
      }
      if (stack.length === 0 && openTag !== undefined) {
        const r = expandLoop(arr, o, i, openTag, spec, errors);
        if (r !== null) ranges.push(r);
      }
    } else if (tag.kind === 'htmlBlock' && spec.htmlExpand === undefined) {
      errors.add('html_unsupported', `HTML tag "${tag.source.trim()}" works in Word documents only`, tag.location);
    } else if (
      (tag.kind === 'raw' ||
        tag.kind === 'htmlBlock' ||
        (tag.kind === 'image' && imageUnit(tag, spec) !== '') ||
        (tag.kind === 'include' && (spec.includeExpand ?? '') !== '')) &&
      stack.length === 0
    ) {
      const unit =
        tag.kind === 'raw'
          ? spec.rawExpand
          : tag.kind === 'htmlBlock'
            ? (spec.htmlExpand ?? '')
            : tag.kind === 'image'
              ? imageUnit(tag, spec)
              : (spec.includeExpand ?? '');
      if (unit === '') {
        errors.add('raw_unsupported', `raw XML tag "${tag.source.trim()}" is not supported in this part`, tag.location);
        continue;
      }
      const left = findLeft(arr, unit, i);
      const right = findRight(arr, unit, i);
      if (left === null || right === null) {
        errors.add(`${tag.kind}_position`, `tag "${tag.source.trim()}" must be inside a ${unit} element`, tag.location);
        continue;
      }
      ranges.push({ left, right, open: i, close: i, unit, kind: tag.kind });
    }
  }
  for (const o of stack) {
    const it = arr[o];
    if (it !== undefined && it.k === 'tag') errors.add('unclosed_loop', `loop "${it.tag.source.trim()}" is never closed`, it.tag.location);
  }
  ranges.sort((a, b) => a.left - b.left);

  const out: Node[] = [];
  let pos = 0;
  for (const r of ranges) {
    if (r.left < pos) {
      const it = arr[r.open];
      if (it !== undefined && it.k === 'tag') {
        errors.add('loop_overlap', `tag "${it.tag.source.trim()}" overlaps another loop's ${r.unit || 'content'}`, it.tag.location);
      }
      continue;
    }
    emitStatic(arr, pos, r.left, spec, errors, out);
    const openItem = arr[r.open];
    if (openItem === undefined || openItem.k !== 'tag') continue;
    if (r.kind === 'raw') {
      out.push({ k: 'raw', expr: compileExpr(openItem.tag, errors), tag: openItem.tag });
    } else if (r.kind === 'htmlBlock') {
      const { paraProps, sectPr } = paragraphProps(arr.slice(r.left + 1, r.right));
      const data: HtmlHookData = {
        expr: compileExpr(openItem.tag, errors),
        tag: openItem.tag,
        block: true,
        paraProps,
        sectPr,
        runProps: openItem.tag.runProps ?? '',
      };
      out.push({ k: 'hook', name: 'html', data });
    } else if (r.kind === 'include') {
      out.push(...tagNode(openItem.tag, spec, errors));
    } else if (r.kind === 'image') {
      const node: ImageNode = { k: 'image', expr: compileExpr(openItem.tag, errors), tag: openItem.tag };
      if (r.unit !== '' && r.unit === spec.centerImageExpand) node.center = paragraphProps(arr.slice(r.left + 1, r.right));
      else {
        const frame = shapeFrame(arr.slice(r.left, r.right + 1));
        if (frame !== undefined) node.frame = frame;
      }
      out.push(node);
    } else {
      let inner = [...arr.slice(r.left, r.open), ...arr.slice(r.open + 1, r.close), ...arr.slice(r.close + 1, r.right + 1)];
      let pageBreakBegin = false;
      let pageBreakEnd = false;
      let sectPr = spec.paragraph === 'w:p' ? lastSectPr(inner) : '';
      const paragraphed = r.unit === spec.paragraph && openItem.tag.expandTo === undefined;
      let sectAfter = '';
      let pageBreakEach = false;
      if (paragraphed) {
        let sectBefore: string;
        ({ inner, pageBreakBegin, pageBreakEnd, sectBefore, sectAfter } = trimParagraphs(inner, spec.paragraph));
        // A section break carried by a dropped tag paragraph ends its section there: kept once,
        // before the repeated content (opening tag) or after it (closing tag), however many items.
        if (sectBefore !== '') out.push(`<w:p><w:pPr>${sectBefore}</w:pPr></w:p>`);
        if (sectAfter !== '') sectPr = '';
        // docxtemplater: a next-page section ended by the opening tag's paragraph makes each item a page.
        pageBreakEach = /<w:type\b[^>]*w:val="nextPage"/.test(sectBefore);
      }
      let emptyValue = pageBreakEnd ? '<w:p><w:r><w:br w:type="page"/></w:r></w:p>' : '';
      if (sectPr !== '') {
        emptyValue = paragraphed ? `<w:p><w:pPr>${sectPr}</w:pPr></w:p>` : `</w:t></w:r></w:p><w:p><w:pPr>${sectPr}</w:pPr><w:r><w:t>`;
      }
      const loop: LoopNode = {
        k: 'loop',
        expr: compileExpr(openItem.tag, errors),
        inverted: openItem.tag.kind === 'inverted',
        body: build(inner, spec, errors),
        tag: openItem.tag,
        pageBreakBegin,
        pageBreakEnd,
        unit: r.unit,
        emptyValue,
      };
      if (pageBreakEach) loop.pageBreakEach = true;
      spec.decorateLoop?.(loop, inner);
      out.push(loop);
      if (sectAfter !== '') out.push(`<w:p><w:pPr>${sectAfter}</w:pPr></w:p>`);
    }
    pos = r.right + 1;
  }
  emitStatic(arr, pos, arr.length, spec, errors, out);
  return mergeStatic(out);
}

/**
 * With paragraphLoop, the paragraphs holding only `{#x}` and `{/x}` are dropped so the output does
 * not gain empty paragraphs, unless they also hold an image; a page break in them is re-added.
 */
function trimParagraphs(
  inner: Item[],
  paragraph: string,
): { inner: Item[]; pageBreakBegin: boolean; pageBreakEnd: boolean; sectBefore: string; sectAfter: string } {
  const chunks = chunkBy(inner, paragraph, true);
  const first = chunks[0] ?? [];
  const last = chunks[chunks.length - 1] ?? [];
  const dropFirst = !first.some(isContent) && !hasImage(first);
  const dropLast = chunks.length > 1 && !last.some(isContent) && !hasImage(last);
  const start = dropFirst ? first.length : 0;
  const end = inner.length - (dropLast ? last.length : 0);
  const sliced = inner.slice(start, Math.max(start, end));
  // docxtemplater only re-adds breaks when the repeated content starts with a paragraph.
  const startsWithParagraph = sliced.find((it) => it.k !== 'raw' && it.k !== 'text');
  const inside = startsWithParagraph !== undefined && !(startsWithParagraph.k === 'open' && startsWithParagraph.name.endsWith(':t'));
  return {
    inner: sliced,
    pageBreakBegin: inside && hasPageBreak(first),
    pageBreakEnd: inside && hasPageBreak(last),
    sectBefore: dropFirst ? sectPrOf(first) : '',
    sectAfter: dropLast ? sectPrOf(last) : '',
  };
}

/** The w:sectPr element inside a chunk (a paragraph's properties), as XML, or ''. */
function sectPrOf(chunk: Item[]): string {
  let out = '';
  let depth = 0;
  for (const it of chunk) {
    if (it.k === 'tag') continue;
    if (depth === 0 && !(it.k === 'open' && it.name === 'w:sectPr')) continue;
    out += it.text;
    if (it.k === 'open' && !it.self) depth++;
    else if (it.k === 'close') depth--;
    if (depth === 0) return out;
  }
  return '';
}

function shapeFrame(items: Item[]): ImageNode['frame'] {
  let x: number | undefined;
  let y: number | undefined;
  let cx: number | undefined;
  let cy: number | undefined;
  for (const it of items) {
    if (it.k !== 'open') continue;
    if (it.name === 'a:off' && x === undefined) {
      x = Number(/\sx="(-?\d+)"/.exec(it.text)?.[1]);
      y = Number(/\sy="(-?\d+)"/.exec(it.text)?.[1]);
    } else if (it.name === 'a:ext' && cx === undefined) {
      cx = Number(/\scx="(\d+)"/.exec(it.text)?.[1]);
      cy = Number(/\scy="(\d+)"/.exec(it.text)?.[1]);
    }
  }
  if (x === undefined || y === undefined || cx === undefined || cy === undefined || [x, y, cx, cy].some((n) => !Number.isFinite(n)))
    return undefined;
  return { x, y, cx, cy };
}

/** `{~html}` / `{~~html}`: the value's HTML becomes runs, or paragraphs and tables. */
export interface HtmlHookData {
  expr: Expr;
  tag: TagInfo;
  block: boolean;
  paraProps: string;
  sectPr: string;
  runProps: string;
}

/** The paragraph's own w:pPr (without its section break, returned apart) from the paragraph's inner items. */
function imageUnit(tag: TagInfo, spec: CompileSpec): string {
  return tag.center === true && spec.centerImageExpand !== undefined ? spec.centerImageExpand : (spec.imageExpand ?? '');
}

function paragraphProps(inner: Item[]): { paraProps: string; sectPr: string } {
  let depth = 0;
  let pPr = '';
  let inPPr = false;
  for (const it of inner) {
    if (it.k === 'tag') continue;
    if (!inPPr) {
      if (depth === 0 && it.k === 'open' && it.name === 'w:pPr') {
        if (it.self) return { paraProps: '', sectPr: '' };
        inPPr = true;
        pPr = it.text;
        continue;
      }
      if (it.k === 'open' && !it.self) depth++;
      else if (it.k === 'close') depth--;
      continue;
    }
    pPr += it.text;
    if (it.k === 'close' && it.name === 'w:pPr') break;
  }
  const m = /<w:sectPr\b[\s\S]*?(?:<\/w:sectPr>|\/>)/.exec(pPr);
  return m ? { paraProps: pPr.replace(m[0], ''), sectPr: m[0] } : { paraProps: pPr, sectPr: '' };
}

/** The w:sectPr of the last paragraph of a loop's content, if any. */
function lastSectPr(inner: Item[]): string {
  const parts: string[] = [];
  let inSect = false;
  for (let i = inner.length - 1; i >= 0; i--) {
    const it = inner[i];
    if (it === undefined || it.k === 'tag') continue;
    if (it.k === 'close' && it.name === 'w:sectPr') inSect = true;
    if (it.k === 'open' && it.name === 'w:sectPr') {
      parts.unshift(it.text);
      inSect = false;
    } else if (inSect) parts.unshift(it.text);
    if (it.k === 'open' && it.name === 'w:p') return parts.join('');
  }
  return '';
}

function expandLoop(arr: Item[], o: number, c: number, tag: TagInfo, spec: CompileSpec, errors: ErrorBag): Range | null {
  const base: Range = { left: o, right: c, open: o, close: c, unit: '', kind: 'loop' };
  if (tag.expandTo !== undefined) {
    const left = findLeft(arr, tag.expandTo, o);
    const right = findRight(arr, tag.expandTo, c);
    if (left === null || right === null) {
      errors.add('loop_position', `loop "${tag.source.trim()}" is not inside a ${tag.expandTo} element`, tag.location);
      return null;
    }
    return { ...base, left, right, unit: tag.expandTo };
  }
  const els = unbalanced(arr, o, c);
  // Tags in different cells repeat the row(s). A cell may sit in a content control (w:sdt), so the
  // tags' own levels differ; what matters is that the rows around them enclose balanced content.
  if (spec.cell !== '' && (els.includes(`<${spec.cell}`) || els.includes(`</${spec.cell}`))) {
    const left = findLeft(arr, spec.row, o);
    const right = findRight(arr, spec.row, c);
    if (left !== null && right !== null && unbalanced(arr, left, right).length === 0) return { ...base, left, right, unit: spec.row };
  }
  const closing = els.filter((e) => e.startsWith('</')).length;
  if (closing !== els.length - closing) {
    errors.add(
      'loop_position',
      `loop "${tag.source.trim()}" opens and closes at different XML levels, which would produce an invalid document`,
      tag.location,
    );
    return null;
  }
  if (spec.paragraphLoop && els.includes(`<${spec.paragraph}`)) {
    const left = findLeft(arr, spec.paragraph, o);
    const right = findRight(arr, spec.paragraph, c);
    if (left !== null && right !== null) {
      const chunks = chunkBy(arr.slice(left, right), spec.paragraph, false);
      const first = chunks[0] ?? [];
      const last = chunks[chunks.length - 1] ?? [];
      if (first.filter(isContent).length === 1 && last.filter(isContent).length === 1) {
        return { ...base, left, right, unit: spec.paragraph };
      }
    }
  }
  return base;
}

function emitStatic(arr: Item[], from: number, to: number, spec: CompileSpec, errors: ErrorBag, out: Node[]): void {
  if (from >= to) return;
  const slice = arr.slice(from, to);
  if (spec.emit !== undefined) {
    for (const n of spec.emit(slice, errors)) out.push(n);
    return;
  }
  emitItems(slice, spec, errors, out);
}

/** Generic emission: markup as text, tags as field/image/include nodes. */
export function emitItems(items: Item[], spec: CompileSpec, errors: ErrorBag, out: Node[]): void {
  for (const it of items) {
    if (it.k === 'open' && it.link !== undefined) {
      out.push({ k: 'hook', name: 'link', data: { text: it.text, link: it.link } });
      continue;
    }
    if (it.k !== 'tag') {
      out.push(it.text);
      continue;
    }
    out.push(...tagNode(it.tag, spec, errors));
  }
}

export function tagNode(tag: TagInfo, spec: CompileSpec, errors: ErrorBag): Node[] {
  switch (tag.kind) {
    case 'html': {
      if (spec.htmlExpand === undefined) {
        errors.add('html_unsupported', `HTML tag "${tag.source.trim()}" works in Word documents only`, tag.location);
        return [];
      }
      const data: HtmlHookData = {
        expr: compileExpr(tag, errors),
        tag,
        block: false,
        paraProps: '',
        sectPr: '',
        runProps: tag.runProps ?? '',
      };
      return [{ k: 'hook', name: 'html', data }];
    }
    case 'field':
      return [{ k: 'field', expr: compileExpr(tag, errors), tag, lineBreak: spec.lineBreak(tag) }];
    case 'image':
      return [{ k: 'image', expr: compileExpr(tag, errors), tag }];
    case 'include':
      if (!/^[\w .\-/]+$/u.test(tag.value))
        errors.add('include_name', `include tag "${tag.source.trim()}" needs a template name`, tag.location);
      return [{ k: 'include', name: tag.value, tag }];
    default:
      // Paired tags are consumed by build(); anything left here was reported as unmatched.
      return [];
  }
}

export function mergeStatic(nodes: Node[]): Node[] {
  const out: Node[] = [];
  let buf = '';
  for (const n of nodes) {
    if (typeof n === 'string') buf += n;
    else {
      if (buf !== '') out.push(buf);
      buf = '';
      out.push(n);
    }
  }
  if (buf !== '') out.push(buf);
  return out;
}

export function walkNodes(nodes: Node[], fn: (n: Exclude<Node, string>) => void): void {
  for (const n of nodes) {
    if (typeof n === 'string') continue;
    fn(n);
    if (n.k === 'loop') walkNodes(n.body, fn);
    if (n.k === 'hook' && n.body !== undefined) walkNodes(n.body, fn);
  }
}

import type { Node } from './compile.ts';
import type { ErrorBag, ErrorLocation, TemplateErrorEntry } from './errors.ts';
import { evaluate, ExpressionError, truthy } from './expression.ts';
import type { Expr, Scopes } from './expression.ts';
import { FilterError, toText } from './filters.ts';
import type { FilterContext } from './filters.ts';
import type { TagInfo } from './lexer.ts';
import { escapeXml, isWellFormedFragment } from './xml.ts';
import { LIMIT_EXCEEDED, LIMIT_SETTINGS } from './limits.ts';

/** Stage "render": walks the compiled tree with the data, appending XML strings to `out`. */

export interface RenderContext {
  filter: FilterContext;
  errors: ErrorBag;
  strict: boolean;
  linebreaks: boolean;
  /** Format hooks: images, includes and format-specific nodes. */
  hook?: (node: Exclude<Node, string>, scopes: Scopes, out: string[], ctx: RenderContext) => void;
  /** Guards against templates whose loops multiply into unbounded output. */
  budget: { nodes: number; iterations: number; maxIterations: number };
  /** Per-part state of the format hooks (xlsx row numbering). */
  state: unknown;
  /** Part being rendered (relationships of images and includes are added to it). */
  partName: string;
  /** Tags that rendered empty for want of a value (`missing`), by tag. */
  missing?: Map<string, TemplateErrorEntry>;
}

export const MAX_RENDER_NODES = 5_000_000;

export function evalTag(expr: Expr, tag: TagInfo, scopes: Scopes, ctx: RenderContext): unknown {
  try {
    return evaluate(expr, scopes, ctx.filter);
  } catch (e) {
    report(e, tag.source, tag.location, ctx);
    return undefined;
  }
}

export function report(e: unknown, source: string, location: ErrorLocation, ctx: RenderContext): void {
  if (e instanceof FilterError) ctx.errors.add('filter_failed', `tag "${source.trim()}": ${e.message}`, location);
  else if (e instanceof ExpressionError) ctx.errors.add(e.id, `tag "${source.trim()}": ${e.message}`, location);
  else if (e instanceof RangeError || e instanceof TypeError)
    ctx.errors.add('evaluation_failed', `tag "${source.trim()}": ${e.message}`, location);
  else throw e;
}

const MAX_WARNINGS = 1000;

/**
 * A tag that rendered empty because the data has no value for it: an error in strict mode, else a
 * warning. Each tag is reported once, wherever it is (a tag in a loop is one tag, however many items).
 */
export function missing(tag: TagInfo, ctx: RenderContext, what = 'tag'): void {
  const seen = (ctx.missing ??= new Map());
  if (seen.size >= MAX_WARNINGS) return;
  const l = tag.location;
  const key = `${l.part}|${l.paragraph ?? ''}|${l.sheet ?? ''}|${l.cell ?? ''}|${l.offset ?? ''}|${tag.source}`;
  if (seen.has(key)) return;
  const source = tag.source.trim();
  const entry: TemplateErrorEntry = { id: 'missing_value', message: `no value for ${what} "${source}"`, location: l, tag: source };
  seen.set(key, entry);
  if (ctx.strict) ctx.errors.add(entry.id, entry.message, l);
}

export function renderNodes(nodes: Node[], scopes: Scopes, out: string[], ctx: RenderContext): void {
  if ((ctx.budget.nodes += nodes.length) > MAX_RENDER_NODES) {
    if (ctx.budget.nodes - nodes.length <= MAX_RENDER_NODES)
      ctx.errors.add('render_limit', 'the document is too large to render (loops produce too much content)');
    return;
  }
  for (const n of nodes) {
    if (typeof n === 'string') {
      out.push(n);
      continue;
    }
    switch (n.k) {
      case 'field': {
        const v = evalTag(n.expr, n.tag, scopes, ctx);
        if (v === undefined) missing(n.tag, ctx);
        const s = escapeXml(toText(v));
        if (n.lineBreak !== null && ctx.linebreaks && s.indexOf('\n') >= 0) out.push(s.split('\n').join(n.lineBreak));
        else out.push(s);
        break;
      }
      case 'loop':
        renderLoop(n, scopes, out, ctx);
        break;
      case 'raw': {
        const v = evalTag(n.expr, n.tag, scopes, ctx);
        if (v === undefined) missing(n.tag, ctx);
        const s = toText(v);
        if (s === '') break;
        const problem = isWellFormedFragment(s);
        if (problem !== null) {
          ctx.errors.add('raw_xml_invalid', `tag "${n.tag.source.trim()}": the value is not well-formed XML (${problem})`, n.tag.location);
          break;
        }
        out.push(s);
        break;
      }
      default:
        if (ctx.hook !== undefined) ctx.hook(n, scopes, out, ctx);
    }
  }
}

const PAGE_BREAK_RUN = '<w:r><w:br w:type="page"/></w:r>';
const PAGE_BREAK_P = `<w:p>${PAGE_BREAK_RUN}</w:p>`;

function renderLoop(n: Extract<Node, { k: 'loop' }>, scopes: Scopes, out: string[], ctx: RenderContext): void {
  const v = evalTag(n.expr, n.tag, scopes, ctx);
  if (v === undefined) missing(n.tag, ctx);
  let items: readonly unknown[];
  let pushScope: boolean;
  if (n.inverted) {
    items = truthy(v) ? [] : [undefined];
    pushScope = false;
  } else {
    items = !truthy(v) ? [] : Array.isArray(v) ? v : [v];
    // A truthy non-object section keeps the current scope (docxtemplater semantics).
    pushScope = Array.isArray(v) || typeof v === 'object';
  }
  if ((ctx.budget.iterations += items.length) > ctx.budget.maxIterations) {
    // Reported once: the loops that follow are skipped too.
    if (ctx.budget.iterations - items.length <= ctx.budget.maxIterations) {
      ctx.errors.add(
        LIMIT_EXCEEDED,
        `loop "${n.tag.source.trim()}" takes the loops of this document past ${ctx.budget.maxIterations} iterations; the limit is ${ctx.budget.maxIterations} (${LIMIT_SETTINGS.maxLoopIterations})`,
        n.tag.location,
      );
    }
    return;
  }
  if (items.length === 0) {
    if (n.emptyValue !== '') out.push(n.emptyValue);
    if (n.onEmpty !== undefined) ctx.hook?.(n.onEmpty, scopes, out, ctx);
    return;
  }
  const list = Array.isArray(v) && !n.inverted;
  for (let i = 0; i < items.length; i++) {
    // Over a list, `{$index}` is the item's 0-based position (docxtemplater's angular parser).
    const inner = !pushScope ? scopes : list ? [...scopes, { $index: i }, items[i]] : [...scopes, items[i]];
    if (n.onIteration !== undefined) ctx.hook?.(n.onIteration, inner, out, ctx);
    if (n.pageBreakBegin) out.push(PAGE_BREAK_P);
    renderNodes(n.body, inner, out, ctx);
    if (n.pageBreakEach === true || (n.pageBreakEnd && i === items.length - 1)) {
      // Into the item's last paragraph (whitespace after it does not count), else a paragraph of its own.
      const last = out[out.length - 1];
      const end = last?.trimEnd() ?? '';
      if (last !== undefined && end.endsWith('</w:p>'))
        out[out.length - 1] = `${end.slice(0, -6)}${PAGE_BREAK_RUN}</w:p>${last.slice(end.length)}`;
      else out.push(PAGE_BREAK_P);
    }
  }
}

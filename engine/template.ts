import { createHash } from 'node:crypto';
import { build, walkNodes } from './compile.ts';
import type { CompileSpec, Node } from './compile.ts';
import { diagramLex, diagramParts, diagramSpec } from './diagrams.ts';
import { docxLex, docxRepair, docxSpec, docxTemplatedParts } from './docx.ts';
import { propsLex, propsParts, propsSpec, protectCustomValues } from './docprops.ts';
import { ErrorBag, TemplateError } from './errors.ts';
import type { TemplateErrorEntry } from './errors.ts';
import { lexTags } from './lexer.ts';
import { markLinks, templatedLinks } from './links.ts';
import type { LinkTemplate } from './links.ts';
import type { LexOptions, TagInfo } from './lexer.ts';
import { openPackage } from './package.ts';
import type { Format, OpcPackage } from './package.ts';
import { pptxLex, pptxRepair, pptxSpec, pptxTemplatedParts } from './pptx.ts';
import { ExpressionError, parseExpression } from './expression.ts';
import type { Expr, Scopes } from './expression.ts';
import type { RenderContext } from './render.ts';
import { addDateStyles, finishSheet, finishWorkbook, xlsxHook, xlsxLex, xlsxSpec, xlsxWorkbook } from './xlsx.ts';
import type { SheetState } from './xlsx.ts';
import { RowMap, unshareFormulas } from './xlsx-refs.ts';
import { decodeXml, tokenize, XmlLimitError, XmlSyntaxError } from './xml.ts';
import { DEFAULT_TEMPLATE_LIMITS, limitError } from './limits.ts';
import type { TemplateLimits } from './limits.ts';
import { makeEntry } from './zip.ts';
import type { ZipEntry } from './zip.ts';

/** Compiled form of a template package, cached by content hash so repeated renders skip parsing. */

export interface CompiledPart {
  name: string;
  nodes: Node[];
  /** Repairs applied to the rendered XML (e.g. Word's empty-table rule). */
  repair?: (xml: string) => string;
  /** Fresh per-render state for the format's hooks, and the step that uses it afterwards. */
  newState?: () => unknown;
  finish?: (xml: string, state: unknown) => string;
  /** pptx `{:items}`: the slide is rendered once per item. */
  repeat?: { expr: Expr; tag: TagInfo };
}

export interface CompiledTemplate {
  format: Format;
  pkg: OpcPackage;
  /** Entries in archive order; templated ones are replaced at render time. */
  order: ZipEntry[];
  parts: Map<string, CompiledPart>;
  errors: TemplateErrorEntry[];
  tags: TagInfo[];
  /** Approximate retained bytes, for the cache bound. */
  cost: number;
  /** Renders format-specific hook nodes. */
  hook?: (node: Exclude<Node, string>, scopes: Scopes, out: string[], ctx: RenderContext) => void;
  /** Parts whose output is fixed at compile time (pre-compressed), and parts dropped from the output. */
  replaced: Map<string, ZipEntry>;
  /** Text of the replaced parts, for render-time edits on top of them. */
  replacedText: Map<string, string>;
  removed: Set<string>;
  /** Package-level edits after all parts rendered, from the parts' final states. */
  finalize?: (states: Map<string, unknown>, rendered: ReadonlyMap<string, string>) => Map<string, string>;
}

export interface CompileOptions {
  delimiters: { start: string; end: string };
  paragraphLoop: boolean;
  /** Default: DEFAULT_TEMPLATE_LIMITS. */
  limits?: TemplateLimits;
  /** The SHA-256 of the template's bytes (base64), when the caller has it (RenderOptions.templateHash). */
  hash?: string;
}

function lexAndBuild(
  xml: string | undefined,
  name: string,
  lex: LexOptions,
  spec: CompileSpec,
  errors: ErrorBag,
  tags: TagInfo[],
  maxElements: number,
  links?: ReadonlyMap<string, LinkTemplate>,
): Node[] | undefined {
  if (xml === undefined) return undefined;
  let tokens;
  try {
    tokens = tokenize(xml, maxElements);
  } catch (e) {
    if (e instanceof XmlLimitError)
      throw limitError('maxXmlElements', `part ${name} has more than ${maxElements} XML elements`, maxElements, { part: name });
    if (e instanceof XmlSyntaxError) {
      errors.add(e.id, `${name}: ${e.message}`, { part: name, offset: e.offset });
      return undefined;
    }
    throw e;
  }
  const items = lexTags(tokens, lex, errors);
  let hasTag = links !== undefined && markLinks(items, links);
  for (const it of items) {
    if (it.k === 'tag') {
      hasTag = true;
      tags.push(it.tag);
    }
  }
  if (!hasTag) return undefined;
  return build(items, spec, errors);
}

/** Every XML part is scanned once for DOCTYPE, including parts we otherwise copy untouched. */
function refuseDoctypes(pkg: OpcPackage, errors: ErrorBag): void {
  for (const name of pkg.entries.keys()) {
    if (!/\.(xml|rels|vml)$/i.test(name)) continue;
    const xml = pkg.text(name);
    if (xml !== undefined && /<!doctype/i.test(xml))
      errors.add('doctype_forbidden', `${name}: XML with a DOCTYPE declaration is refused`, { part: name });
  }
}

export function compileTemplate(bytes: Uint8Array, opts: CompileOptions): CompiledTemplate {
  // The cache keeps slices of the package; copy so a caller reusing its buffer cannot corrupt them.
  const limits = opts.limits ?? DEFAULT_TEMPLATE_LIMITS;
  const pkg = openPackage(Uint8Array.prototype.slice.call(bytes), limits);
  const errors = new ErrorBag();
  refuseDoctypes(pkg, errors);
  const parts = new Map<string, CompiledPart>();
  const tags: TagInfo[] = [];
  const { start, end } = opts.delimiters;
  const replaced = new Map<string, ZipEntry>();
  const replacedText = new Map<string, string>();
  const removed = new Set<string>();
  const replace = (name: string, xml: string): void => {
    replaced.set(name, makeEntry(name, Buffer.from(xml, 'utf8')));
    replacedText.set(name, xml);
  };
  let hook: CompiledTemplate['hook'];
  let finalize: CompiledTemplate['finalize'];
  const add = (name: string, lex: LexOptions, spec: CompileSpec, extra: Partial<CompiledPart> = {}, xml = pkg.text(name)): void => {
    const links = pkg.format === 'xlsx' ? undefined : templatedLinks(pkg, name, start, end, errors);
    const nodes = lexAndBuild(xml, name, lex, spec, errors, tags, limits.maxXmlElements, links);
    if (nodes === undefined) return;
    const part: CompiledPart = { ...extra, name, nodes };
    for (const t of tags) {
      if (t.kind !== 'slide' || t.location.part !== name) continue;
      if (pkg.format !== 'pptx' || !/^ppt\/slides\//.test(name))
        errors.add('slide_tag_position', `slide repeat tag "${t.source.trim()}" only works on a PowerPoint slide`, t.location);
      else if (part.repeat !== undefined)
        errors.add('slide_tag_duplicate', `a slide can repeat only once; "${t.source.trim()}" is a second repeat tag`, t.location);
      else {
        try {
          part.repeat = { expr: parseExpression(t.value), tag: t };
        } catch (e) {
          if (!(e instanceof ExpressionError)) throw e;
          errors.add(e.id, `${e.message} in tag "${t.source.trim()}"`, t.location);
        }
      }
    }
    parts.set(name, part);
  };
  if (pkg.format === 'docx') {
    const spec = docxSpec(opts.paragraphLoop);
    for (const name of docxTemplatedParts(pkg)) add(name, docxLex(name, start, end), spec, { repair: docxRepair });
  } else if (pkg.format === 'pptx') {
    const spec = pptxSpec(opts.paragraphLoop);
    for (const name of pptxTemplatedParts(pkg)) add(name, pptxLex(name, start, end), spec, { repair: pptxRepair });
  } else {
    const wb = xlsxWorkbook(pkg, start, end);
    const typedStyles = new Set<number>();
    for (const [name, xml] of wb.prepared) {
      const text = decodeXml(xml.replace(/<[^>]+>/g, ''));
      const hasLoops = wb.delimiters.some((d) => new RegExp(`${escapeRe(d.start)}\\s*[#^]`).test(text));
      add(
        name,
        xlsxLex(name, start, end, wb.sheets.find((sh) => sh.part === name)?.name),
        xlsxSpec(hasLoops, typedStyles),
        {
          newState: (): SheetState => ({ rows: new RowMap(), hasLoops }),
          finish: (out, st) => finishSheet(out, st as SheetState),
        },
        hasLoops ? unshareFormulas(xml) : xml,
      );
    }
    addDateStyles(pkg, wb.styles, typedStyles);
    if (wb.styles.replacement !== undefined) replace('xl/styles.xml', wb.styles.replacement);
    if (parts.size > 0) dropCalcChain(pkg, replace, removed);
    hook = xlsxHook(wb.styles);
    finalize = (states, rendered) => finishWorkbook(pkg, wb, states as Map<string, SheetState>, rendered);
  }
  if (pkg.format !== 'xlsx') {
    const spec = diagramSpec(opts.paragraphLoop);
    for (const name of diagramParts(pkg)) add(name, diagramLex(name, start, end), spec);
  }
  for (const name of propsParts(pkg)) {
    const values = name === 'docProps/custom.xml' ? protectCustomValues(pkg.text(name) ?? '') : undefined;
    if (values === undefined) add(name, propsLex(name, start, end), propsSpec());
    else add(name, propsLex(name, start, end), propsSpec(), { finish: values.restore }, values.xml);
  }

  // The package's bytes, and the inflated XML that stays cached in pkg.text for render-time edits (rels,
  // content types): every XML part's inflated size, as UTF-16. (Eight times the package's size, as this
  // was, kept a template carrying a 2 MB image out of the cache: it was compiled again for every document.)
  let cost = bytes.length;
  for (const e of pkg.entries.values()) if (/\.(xml|rels|vml)$/i.test(e.name)) cost += e.size * 2;
  for (const p of parts.values()) {
    walkNodes(p.nodes, () => {
      cost += 64;
    });
    for (const n of p.nodes) if (typeof n === 'string') cost += n.length * 2;
  }
  const compiled: CompiledTemplate = {
    format: pkg.format,
    pkg,
    order: [...pkg.entries.values()],
    parts,
    errors: errors.entries,
    tags,
    cost,
    replaced,
    replacedText,
    removed,
  };
  if (hook !== undefined) compiled.hook = hook;
  if (finalize !== undefined) compiled.finalize = finalize;
  return compiled;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The calculation chain lists formula cells by address; once rows move it is wrong, and Excel rebuilds it. */
function dropCalcChain(pkg: OpcPackage, replace: (name: string, xml: string) => void, removed: Set<string>): void {
  const name = 'xl/calcChain.xml';
  if (!pkg.entries.has(name)) return;
  removed.add(name);
  const ct = pkg.text('[Content_Types].xml');
  if (ct !== undefined) replace('[Content_Types].xml', ct.replace(/<Override\b[^>]*PartName="\/xl\/calcChain\.xml"[^>]*\/>/, ''));
  const relsName = 'xl/_rels/workbook.xml.rels';
  const rels = pkg.text(relsName);
  if (rels !== undefined) replace(relsName, rels.replace(/<Relationship\b[^>]*Target="[^"]*calcChain\.xml"[^>]*\/>/, ''));
}

// ---- cache ----

const CACHE_LIMIT_BYTES = 64 * 1024 * 1024;
const cache = new Map<string, CompiledTemplate>();
let cacheBytes = 0;

export function getCompiled(bytes: Uint8Array, opts: CompileOptions): CompiledTemplate {
  // The limits are in the key: a template compiled under laxer limits must not pass stricter ones.
  const l = opts.limits ?? DEFAULT_TEMPLATE_LIMITS;
  const key = `${opts.hash ?? createHash('sha256').update(bytes).digest('base64')}|${opts.paragraphLoop ? 1 : 0}|${opts.delimiters.start}|${opts.delimiters.end}|${l.maxParts},${l.maxPartBytes},${l.maxTotalBytes},${l.maxRatio},${l.maxXmlElements}`;
  const hit = cache.get(key);
  if (hit !== undefined) {
    // Refresh recency: Map iteration order is insertion order, so re-insert.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  let compiled: CompiledTemplate;
  try {
    compiled = compileTemplate(bytes, opts);
  } catch (e) {
    if (e instanceof TemplateError) throw e;
    if (e instanceof RangeError) throw TemplateError.single('template_too_complex', `the template could not be compiled: ${e.message}`);
    throw e;
  }
  if (compiled.cost <= CACHE_LIMIT_BYTES / 4) {
    cache.set(key, compiled);
    cacheBytes += compiled.cost;
    for (const [k, v] of cache) {
      if (cacheBytes <= CACHE_LIMIT_BYTES) break;
      cache.delete(k);
      cacheBytes -= v.cost;
    }
  }
  return compiled;
}

export function clearTemplateCache(): void {
  cache.clear();
  cacheBytes = 0;
}

export function templateCacheStats(): { entries: number; bytes: number } {
  return { entries: cache.size, bytes: cacheBytes };
}

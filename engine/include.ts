import type { IncludeNode } from './compile.ts';
import type { Scopes } from './expression.ts';
import type { OpcPackage } from './package.ts';
import { relsOf } from './package.ts';
import { renderNodes } from './render.ts';
import type { RenderContext } from './render.ts';
import type { RenderSession } from './session.ts';
import { getCompiled } from './template.ts';
import type { CompiledTemplate, CompileOptions } from './template.ts';
import { inflateEntry } from './zip.ts';
import { TemplateError } from './errors.ts';

/**
 * `{>name}` replaces its paragraph with the rendered body of the related template `name`, with
 * the data in scope at the tag. What the body refers to travels with it: images and other related
 * parts get new relationships in the host part, missing styles are copied, and list numbering
 * gets fresh ids so included lists neither merge with nor restart the host's.
 */

export interface IncludeEnv {
  related: Record<string, Uint8Array>;
  compile: CompileOptions;
  session: RenderSession;
  host: OpcPackage;
  /** Names being included, innermost last (cycle and depth guard). */
  stack: string[];
  styles: Map<string, string>;
  numbering: { abstracts: string[]; nums: string[]; nextNum: number; nextAbstract: number } | null;
}

const MAX_DEPTH = 5;

/** The related template an include names, compiled and of the host's format, or undefined with the reason
 *  recorded in ctx.errors: no such related item, a cycle or too deep, not bytes, compile errors, another
 *  format. Shared by the docx, pptx (include-slides.ts) and xlsx (include-sheets.ts) includes. */
export function compiledInclude(
  node: IncludeNode,
  ctx: RenderContext,
  env: { related: Record<string, Uint8Array>; stack: string[]; compile: CompileOptions },
  format: CompiledTemplate['format'],
  what: string,
): CompiledTemplate | undefined {
  const name = node.name;
  const loc = node.tag.location;
  if (!Object.hasOwn(env.related, name)) {
    ctx.errors.add('include_missing', `include "${name}" has no matching related template`, loc);
    return undefined;
  }
  if (env.stack.includes(name) || env.stack.length >= MAX_DEPTH) {
    ctx.errors.add('include_cycle', `include "${name}" is nested too deeply or includes itself`, loc);
    return undefined;
  }
  const bytes = env.related[name];
  if (!(bytes instanceof Uint8Array)) {
    ctx.errors.add('include_invalid', `related template "${name}" is not bytes`, loc);
    return undefined;
  }
  let compiled: CompiledTemplate;
  try {
    compiled = getCompiled(bytes, env.compile);
  } catch (e) {
    if (e instanceof TemplateError) {
      for (const entry of e.errors) ctx.errors.add(entry.id, `included template "${name}": ${entry.message}`, entry.location ?? loc);
      return undefined;
    }
    throw e;
  }
  if (compiled.format !== format) {
    ctx.errors.add('include_format', `included template "${name}" must be ${what}`, loc);
    return undefined;
  }
  for (const entry of compiled.errors) ctx.errors.add(entry.id, `included template "${name}": ${entry.message}`, entry.location ?? loc);
  return compiled.errors.length > 0 ? undefined : compiled;
}

export function renderInclude(node: IncludeNode, scopes: Scopes, out: string[], ctx: RenderContext, env: IncludeEnv): void {
  const name = node.name;
  const compiled = compiledInclude(node, ctx, env, 'docx', 'a Word document');
  if (!compiled) return;

  const mainName = compiled.pkg.main;
  const part = compiled.parts.get(mainName);
  let xml: string;
  if (part === undefined) {
    xml = compiled.pkg.text(mainName) ?? '';
  } else {
    const sub: string[] = [];
    const savedPart = ctx.partName;
    env.stack.push(name);
    renderNodes(part.nodes, scopes, sub, ctx);
    env.stack.pop();
    ctx.partName = savedPart;
    xml = sub.join('');
    if (part.repair !== undefined) xml = part.repair(xml);
  }
  let body = bodyOf(xml);
  body = carryRelationships(body, compiled.pkg, mainName, ctx.partName, env, name);
  body = body.replace(/(<wp:docPr\b[^>]*\sid=")\d+(")/g, (_m, a: string, b: string) => `${a}${env.session.docPrId++}${b}`);
  carryStyles(body, compiled.pkg, env);
  body = carryNumbering(body, compiled.pkg, env);
  out.push(body);
}

/** Body content without the final section properties (the host keeps its page setup). */
function bodyOf(xml: string): string {
  const start = xml.indexOf('<w:body>');
  const end = xml.lastIndexOf('</w:body>');
  if (start < 0 || end < 0) return '';
  let body = xml.slice(start + 8, end);
  // The body's own w:sectPr (`<w:sectPr>…</w:sectPr>` or `<w:sectPr/>`) is its last child; one in the
  // middle of the host's body would make it invalid.
  let sect = body.lastIndexOf('<w:sectPr');
  // (a w:sectPr inside w:sectPrChange, a tracked change, is not the body's own)
  while (sect > 0 && body.lastIndexOf('<w:sectPrChange', sect) > body.lastIndexOf('</w:sectPrChange>', sect))
    sect = body.lastIndexOf('<w:sectPr', sect - 1);
  const rest = sect < 0 ? '' : body.slice(sect);
  if (sect >= 0 && /^<w:sectPr\b(?:[^>]*\/>|[\s\S]*<\/w:sectPr>)\s*$/.test(rest) && !rest.includes('<w:p')) body = body.slice(0, sect);
  return body;
}

function carryRelationships(body: string, pkg: OpcPackage, fromPart: string, hostPart: string, env: IncludeEnv, name: string): string {
  const rels = relsOf(pkg, fromPart);
  const map = new Map<string, string>();
  return body.replace(/(\sr:(?:embed|id|link|pict|href)=")([^"]+)(")/g, (m, a: string, id: string, b: string) => {
    let newId = map.get(id);
    if (newId === undefined) {
      const rel = rels.find((r) => r.id === id);
      if (rel === undefined) return m;
      if (rel.external) {
        newId = env.session.addRel(hostPart, rel.type, rel.target, true);
      } else {
        const entry = pkg.entries.get(rel.target);
        if (entry === undefined) return m;
        const base = rel.target.slice(rel.target.lastIndexOf('/') + 1);
        const ext = base.slice(base.lastIndexOf('.') + 1).toLowerCase();
        const ct = pkg.defaults.get(ext);
        if (ct !== undefined) env.session.needContentType(ext, ct);
        const target = env.session.addFile(`word/media/inc_${base}`, inflateEntry(entry), `inc:${name}:${rel.target}`);
        newId = env.session.addRel(hostPart, rel.type, target);
      }
      map.set(id, newId);
    }
    return `${a}${newId}${b}`;
  });
}

function styleDefs(xml: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (xml === undefined) return out;
  for (const m of xml.matchAll(/<w:style\b[^>]*?(?:\/>|>[\s\S]*?<\/w:style>)/g)) {
    const id = /\sw:styleId="([^"]*)"/.exec(m[0])?.[1];
    if (id !== undefined) out.set(id, m[0]);
  }
  return out;
}

function carryStyles(body: string, pkg: OpcPackage, env: IncludeEnv): void {
  const hostStyles = styleDefs(env.host.text('word/styles.xml'));
  if (hostStyles.size === 0) return;
  const incStyles = styleDefs(pkg.text('word/styles.xml'));
  const queue = [...body.matchAll(/<w:(?:pStyle|rStyle|tblStyle)\b[^>]*\sw:val="([^"]*)"/g)].map((m) => m[1] ?? '');
  while (queue.length > 0) {
    const id = queue.pop() ?? '';
    if (hostStyles.has(id) || env.styles.has(id)) continue;
    const def = incStyles.get(id);
    if (def === undefined) continue;
    env.styles.set(id, def);
    for (const m of def.matchAll(/<w:(?:basedOn|link|next)\b[^>]*\sw:val="([^"]*)"/g)) queue.push(m[1] ?? '');
  }
}

function carryNumbering(body: string, pkg: OpcPackage, env: IncludeEnv): string {
  if (!body.includes('<w:numId')) return body;
  const inc = pkg.text('word/numbering.xml');
  if (inc === undefined || env.numbering === null) return body;
  const numbering = env.numbering;
  const map = new Map<string, number>();
  return body.replace(/(<w:numId\b[^>]*\sw:val=")(\d+)(")/g, (m, a: string, id: string, b: string) => {
    if (id === '0') return m;
    let newId = map.get(id);
    if (newId === undefined) {
      const num = new RegExp(`<w:num\\b[^>]*\\sw:numId="${id}"[^>]*>[\\s\\S]*?</w:num>`).exec(inc)?.[0];
      const absId = num === undefined ? undefined : /<w:abstractNumId\b[^>]*\sw:val="(\d+)"/.exec(num)?.[1];
      const abs =
        absId === undefined
          ? undefined
          : new RegExp(`<w:abstractNum\\b[^>]*\\sw:abstractNumId="${absId}"[^>]*>[\\s\\S]*?</w:abstractNum>`).exec(inc)?.[0];
      if (num === undefined || abs === undefined) return m;
      const newAbs = numbering.nextAbstract++;
      newId = numbering.nextNum++;
      numbering.abstracts.push(abs.replace(/(\sw:abstractNumId=")\d+(")/, `$1${newAbs}$2`).replace(/<w:nsid\b[^>]*\/>/, ''));
      numbering.nums.push(`<w:num w:numId="${newId}"><w:abstractNumId w:val="${newAbs}"/></w:num>`);
      map.set(id, newId);
    }
    return `${a}${newId}${b}`;
  });
}

/** Host styles.xml and numbering.xml with what the includes brought along. */
export function includeOutputs(env: IncludeEnv, extra: Map<string, string>): void {
  if (env.styles.size > 0) {
    const xml = extra.get('word/styles.xml') ?? env.host.text('word/styles.xml');
    if (xml !== undefined) extra.set('word/styles.xml', xml.replace('</w:styles>', `${[...env.styles.values()].join('')}</w:styles>`));
  }
  const n = env.numbering;
  if (n !== null && n.nums.length > 0) {
    const xml = extra.get('word/numbering.xml') ?? env.host.text('word/numbering.xml');
    if (xml !== undefined) {
      // abstractNum elements must precede num elements.
      const firstNum = xml.search(/<w:num\b/);
      const withAbs =
        firstNum >= 0
          ? xml.slice(0, firstNum) + n.abstracts.join('') + xml.slice(firstNum)
          : xml.replace('</w:numbering>', `${n.abstracts.join('')}</w:numbering>`);
      extra.set('word/numbering.xml', withAbs.replace('</w:numbering>', `${n.nums.join('')}</w:numbering>`));
    }
  }
}

export function numberingState(host: OpcPackage): IncludeEnv['numbering'] {
  const xml = host.text('word/numbering.xml');
  if (xml === undefined) return null;
  let maxNum = 0;
  let maxAbs = 0;
  for (const m of xml.matchAll(/\sw:numId="(\d+)"/g)) maxNum = Math.max(maxNum, Number(m[1]));
  for (const m of xml.matchAll(/\sw:abstractNumId="(\d+)"/g)) maxAbs = Math.max(maxAbs, Number(m[1]));
  return { abstracts: [], nums: [], nextNum: maxNum + 1, nextAbstract: maxAbs + 1 };
}

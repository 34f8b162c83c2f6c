import { compiledInclude } from './include.ts';
import { carryRels, dropRefs } from './carry.ts';
import type { Rel } from './carry.ts';
import type { IncludeNode } from './compile.ts';
import type { Scopes } from './expression.ts';
import { truthy } from './expression.ts';
import type { OpcPackage } from './package.ts';
import { relsOf, relsPathOf } from './package.ts';
import type { SlideOut } from './pptx.ts';
import { evalTag, renderNodes } from './render.ts';
import type { RenderContext } from './render.ts';
import type { RenderSession } from './session.ts';
import type { CompileOptions } from './template.ts';
import { getAttr } from './xml.ts';

/**
 * `{>name}` on a slide: the slide is replaced by the slides of the related presentation `name`,
 * rendered with the data in scope at the tag (per item when the slide repeats with `{:items}`).
 * Included slides take the host's layouts (matched by layout name, then type, else the first
 * one: PowerPoint's "use destination theme"); their pictures, media, charts and links come along
 * with their relationships and content types; notes and comments are left behind.
 */

interface Layout {
  part: string;
  name: string;
  type: string;
}

function layoutInfo(pkg: OpcPackage, part: string): Layout {
  const xml = pkg.text(part) ?? '';
  const root = /<p:sldLayout\b[^>]*>/.exec(xml)?.[0] ?? '';
  const cSld = /<p:cSld\b[^>]*>/.exec(xml)?.[0] ?? '';
  return { part, name: (getAttr(cSld, 'name') ?? '').toLowerCase(), type: getAttr(root, 'type') ?? '' };
}

/** Slide parts of a presentation, in presentation order. */
export function slideOrder(pkg: OpcPackage): string[] {
  const pres = pkg.text(pkg.main) ?? '';
  const rels = relsOf(pkg, pkg.main);
  const out: string[] = [];
  for (const m of pres.matchAll(/<p:sldId\b[^>]*>/g)) {
    const id = getAttr(m[0], 'r:id');
    const target = rels.find((r) => r.id === id)?.target;
    if (target !== undefined && pkg.entries.has(target)) out.push(target);
  }
  return out;
}

export class SlideIncludes {
  private capture: Array<{ node: IncludeNode; scopes: Scopes }> | undefined;
  private readonly stack: string[] = [];
  private inclusions = 0;
  private hostLayouts: Layout[] | undefined;
  private readonly related: Record<string, Uint8Array>;
  private readonly compile: CompileOptions;
  private readonly session: RenderSession;
  private readonly host: OpcPackage;
  /** Highest slideN.xml number used so far (shared with slide repeats). */
  readonly counter: { n: number };

  constructor(related: Record<string, Uint8Array>, compile: CompileOptions, session: RenderSession, host: OpcPackage) {
    this.related = related;
    this.compile = compile;
    this.session = session;
    this.host = host;
    let max = 0;
    for (const name of host.entries.keys()) {
      const m = /^ppt\/slides\/slide(\d+)\.xml$/.exec(name);
      if (m) max = Math.max(max, Number(m[1]));
    }
    this.counter = { n: max };
  }

  /** Called for an include tag; false when the tag is not on a slide being rendered. */
  onInclude(node: IncludeNode, scopes: Scopes): boolean {
    if (this.capture === undefined) return false;
    this.capture.push({ node, scopes });
    return true;
  }

  /** Renders one slide; a slide holding include tags becomes the included slides. */
  render(renderXml: () => string, ctx: RenderContext): SlideOut[] {
    const saved = this.capture;
    this.capture = [];
    let xml: string;
    let incs: Array<{ node: IncludeNode; scopes: Scopes }>;
    try {
      xml = renderXml();
    } finally {
      incs = this.capture;
      this.capture = saved;
    }
    if (incs.length === 0) return [{ xml }];
    return incs.flatMap((i) => this.includeDeck(i.node, i.scopes, ctx));
  }

  private layouts(): Layout[] {
    if (this.hostLayouts !== undefined) return this.hostLayouts;
    const out: Layout[] = [];
    for (const master of relsOf(this.host, this.host.main).filter((r) => r.type.endsWith('/slideMaster'))) {
      for (const rel of relsOf(this.host, master.target)) {
        if (rel.type.endsWith('/slideLayout') && this.host.entries.has(rel.target)) out.push(layoutInfo(this.host, rel.target));
      }
    }
    this.hostLayouts = out;
    return out;
  }

  private hostLayout(src: OpcPackage, srcLayout: string): string | undefined {
    const layouts = this.layouts();
    const want = layoutInfo(src, srcLayout);
    return (
      (want.name !== '' ? layouts.find((l) => l.name === want.name) : undefined) ??
      (want.type !== '' ? layouts.find((l) => l.type === want.type) : undefined) ??
      layouts[0]
    )?.part;
  }

  private nextSlideName(): string {
    let name = `ppt/slides/slide${++this.counter.n}.xml`;
    while (this.session.taken(name)) name = `ppt/slides/slide${++this.counter.n}.xml`;
    return name;
  }

  private includeDeck(node: IncludeNode, scopes: Scopes, ctx: RenderContext): SlideOut[] {
    const name = node.name;
    const compiled = compiledInclude(
      node,
      ctx,
      { related: this.related, stack: this.stack, compile: this.compile },
      'pptx',
      'a PowerPoint presentation (slides are included into slides)',
    );
    if (!compiled) return [];

    const src = compiled.pkg;
    // Plan first: every copy gets its name before any renders, so links between slides resolve.
    const plan: Array<{ part: string; scopes: Scopes; name: string }> = [];
    for (const part of slideOrder(src)) {
      const cp = compiled.parts.get(part);
      let copies: Scopes[] = [scopes];
      if (cp?.repeat !== undefined) {
        const v = evalTag(cp.repeat.expr, cp.repeat.tag, scopes, ctx);
        const items: unknown[] = !truthy(v) ? [] : Array.isArray(v) ? v : [v];
        const push = Array.isArray(v) || typeof v === 'object';
        copies = items.map((item) => (push ? [...scopes, item] : scopes));
      }
      for (const s of copies) plan.push({ part, scopes: s, name: this.nextSlideName() });
    }
    const firstCopy = new Map<string, string>();
    for (const p of plan) if (!firstCopy.has(p.part)) firstCopy.set(p.part, p.name);
    const decide = (rel: Rel): { drop: true } | { target: string } | undefined => {
      if (rel.external) return undefined;
      if (rel.type.endsWith('/slideLayout')) {
        const target = this.hostLayout(src, rel.target);
        return target === undefined ? { drop: true } : { target };
      }
      if (rel.type.endsWith('/slide')) {
        const target = firstCopy.get(rel.target);
        return target === undefined ? { drop: true } : { target };
      }
      if (/\/(notesSlide|comments|commentAuthors)$/.test(rel.type) || rel.type.endsWith('/relationships/comments')) return { drop: true };
      return undefined;
    };

    const out: SlideOut[] = [];
    const inclusion = ++this.inclusions;
    this.stack.push(name);
    try {
      for (const p of plan) {
        const dropped = carryRels(src, p.part, p.name, this.session, {
          key: `slides:${name}:${inclusion}`,
          shareKey: `slides:${name}`,
          decide,
        });
        const cp = compiled.parts.get(p.part);
        const savedPart = ctx.partName;
        const savedState = ctx.state;
        ctx.partName = p.name;
        ctx.state = undefined;
        let result: SlideOut[];
        try {
          result = this.render(() => {
            if (cp === undefined) return src.text(p.part) ?? '';
            const sub: string[] = [];
            renderNodes(cp.nodes, p.scopes, sub, ctx);
            const xml = sub.join('');
            return cp.repair === undefined ? xml : cp.repair(xml);
          }, ctx);
        } finally {
          ctx.partName = savedPart;
          ctx.state = savedState;
        }
        const only = result[0];
        if (result.length === 1 && only !== undefined && only.name === undefined) {
          out.push({ name: p.name, xml: dropped.length > 0 ? dropRefs(only.xml, dropped) : only.xml });
        } else {
          // The slide held an include itself: it became the slides of that one.
          this.session.texts.delete(relsPathOf(p.name));
          out.push(...result);
        }
      }
    } finally {
      this.stack.pop();
    }
    return out;
  }
}

import type { CompileSpec } from './compile.ts';
import type { LexOptions } from './lexer.ts';
import type { OpcPackage } from './package.ts';
import { relsOf, relsPathOf } from './package.ts';
import { relativeTarget } from './session.ts';

/** One output slide: a copy of the template slide, or a new part (`name`) from an include (include-slides.ts). */
export interface SlideOut {
  xml: string;
  name?: string;
}

/** PresentationML specifics. */

export function pptxTemplatedParts(pkg: OpcPackage): string[] {
  const parts: string[] = [];
  for (const [name, type] of pkg.overrides) {
    if (/presentationml\.(slide|notesSlide)\+xml$/.test(type) && pkg.entries.has(name)) parts.push(name);
  }
  for (const name of pkg.entries.keys()) {
    if (/^ppt\/slides\/slide\d+\.xml$/.test(name) && !parts.includes(name)) parts.push(name);
  }
  return parts;
}

export function pptxLex(part: string, start: string, end: string): LexOptions {
  return {
    part,
    textTags: new Set(['a:t', 'm:t']),
    paragraphTag: 'a:p',
    runTag: 'a:r',
    runPropsTag: 'a:rPr',
    start,
    end,
    droppedInTag: new Set(['a:p', 'a:br']),
  };
}

export function pptxSpec(paragraphLoop: boolean): CompileSpec {
  return {
    paragraph: 'a:p',
    row: 'a:tr',
    cell: 'a:tc',
    rawExpand: 'p:sp',
    imageExpand: 'p:sp',
    paragraphLoop,
    // a:br is a sibling of runs, so the run is closed and reopened with the same formatting.
    lineBreak: (tag) => {
      const rPr = tag.runProps ?? '';
      const brProps = rPr === '' ? '' : rPr;
      return `</a:t></a:r><a:br>${brProps}</a:br><a:r>${rPr}<a:t>`;
    },
  };
}

/**
 * A text body must keep a paragraph: one whose paragraphs a loop all removed (a text box, a table cell)
 * gets an empty one. Repeated table rows carry copies of the same a16:rowId, which PowerPoint treats as
 * corrupt: copies get new ids.
 */
export function pptxRepair(xml: string): string {
  if (xml.indexOf('txBody') >= 0) xml = keepParagraphs(xml);
  if (xml.indexOf('<a:tbl>') >= 0) xml = growTableFrames(xml);
  if (xml.indexOf('a16:rowId') < 0) return xml;
  const seen = new Set<string>();
  let max = 0;
  for (const m of xml.matchAll(/<a16:rowId\b[^>]*\sval="(\d+)"/g)) max = Math.max(max, Number(m[1]));
  return xml.replace(/(<a16:rowId\b[^>]*\sval=")(\d+)(")/g, (m, a: string, v: string, b: string) => {
    if (!seen.has(v)) {
      seen.add(v);
      return m;
    }
    return `${a}${++max}${b}`;
  });
}

const SLIDE_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide';
const SLIDE_CT = 'application/vnd.openxmlformats-officedocument.presentationml.slide+xml';

/**
 * `{:items}` on a slide repeats the slide once per item (removes it when there is none): copies
 * get their own part, relationships (minus the notes page, which belongs to one slide), an entry
 * in the presentation's slide list right after the original, and a content type. Slides that came
 * from an include (`name` set) are new parts whose relationships the render session wrote; a slide
 * whose first output is one of them is replaced (its own part and relationships go).
 */
export function expandSlides(
  pkg: OpcPackage,
  copies: Map<string, SlideOut[]>,
  rendered: Map<string, string>,
  extra: Map<string, string>,
  newFiles: Map<string, string>,
  removed: Set<string>,
  counter: { n: number },
): void {
  if (copies.size === 0) return;
  const presName = pkg.main;
  const presRelsName = relsPathOf(presName);
  let pres = extra.get(presName) ?? pkg.text(presName) ?? '';
  let presRels = extra.get(presRelsName) ?? pkg.text(presRelsName) ?? '';
  let ct = extra.get('[Content_Types].xml') ?? pkg.text('[Content_Types].xml') ?? '';
  // (pptx packages have no compile-time replacements, so the original text is the base.)
  const rels = relsOf(pkg, presName);
  let maxSldId = 255;
  for (const m of pres.matchAll(/<p:sldId\b[^>]*\sid="(\d+)"/g)) maxSldId = Math.max(maxSldId, Number(m[1]));
  let relN = 1;
  const newRelId = (): string => {
    while (presRels.includes(`Id="rIdSl${relN}"`)) relN++;
    return `rIdSl${relN++}`;
  };
  const taken = (name: string): boolean => pkg.entries.has(name) || newFiles.has(name) || extra.has(name);
  for (const [part, outs] of copies) {
    const rel = rels.find((r) => r.target === part && r.type === SLIDE_REL);
    if (rel === undefined) continue;
    const sldIdRe = new RegExp(`<p:sldId\\b[^>]*\\sr:id="${rel.id}"[^>]*/>`);
    const sldId = sldIdRe.exec(pres)?.[0];
    if (sldId === undefined) continue;
    const keep = outs[0] !== undefined && outs[0].name === undefined;
    if (keep) rendered.set(part, outs[0]?.xml ?? '');
    const slideRels = extra.get(relsPathOf(part)) ?? pkg.text(relsPathOf(part));
    let added = '';
    for (let k = keep ? 1 : 0; k < outs.length; k++) {
      const o = outs[k];
      if (o === undefined) continue;
      let name = o.name;
      if (name === undefined) {
        do name = `ppt/slides/slide${++counter.n}.xml`;
        while (taken(name));
        if (slideRels !== undefined) newFiles.set(relsPathOf(name), slideRels.replace(/<Relationship\b[^>]*\/notesSlide"[^>]*\/>/g, ''));
      }
      newFiles.set(name, o.xml);
      const id = newRelId();
      presRels = presRels.replace(
        '</Relationships>',
        `<Relationship Id="${id}" Type="${SLIDE_REL}" Target="${relativeTarget(presName, name)}"/></Relationships>`,
      );
      added += `<p:sldId id="${++maxSldId}" r:id="${id}"/>`;
      ct = ct.replace('</Types>', `<Override PartName="/${name}" ContentType="${SLIDE_CT}"/></Types>`);
    }
    if (keep) {
      pres = pres.replace(sldId, sldId + added);
    } else {
      pres = pres.replace(sldId, added);
      presRels = presRels.replace(new RegExp(`<Relationship\\b[^>]*\\sId="${rel.id}"[^>]*/>`), '');
      ct = ct.replace(new RegExp(`<Override\\b[^>]*PartName="/${part}"[^>]*/>`), '');
      removed.add(part);
      removed.add(relsPathOf(part));
      rendered.delete(part);
      // Its notes page belongs to it alone (copies never take it): it goes too.
      for (const r of relsOf(pkg, part)) {
        if (!r.type.endsWith('/notesSlide') || r.external) continue;
        removed.add(r.target);
        removed.add(relsPathOf(r.target));
        rendered.delete(r.target);
        ct = ct.replace(new RegExp(`<Override\\b[^>]*PartName="/${r.target}"[^>]*/>`), '');
      }
    }
  }
  extra.set(presName, pres);
  extra.set(presRelsName, presRels);
  extra.set('[Content_Types].xml', ct);
}

/**
 * A table frame is as high as its rows: repeated rows grow it (PowerPoint draws the rows anyway, but the
 * frame's box is what it selects, wraps and lays out by; LibreOffice sizes the table by it).
 */
function growTableFrames(xml: string): string {
  return xml.replace(/<p:graphicFrame>[\s\S]*?<\/p:graphicFrame>/g, (frame) => {
    if (frame.indexOf('<a:tbl>') < 0) return frame;
    let rows = 0;
    for (const m of frame.matchAll(/<a:tr\b[^>]*\sh="(\d+)"/g)) rows += Number(m[1]);
    return frame.replace(/(<p:xfrm\b[^>]*>[\s\S]*?<a:ext\b[^>]*\scy=")(\d+)(")/, (m, a: string, cy: string, b: string) =>
      rows > Number(cy) ? `${a}${rows}${b}` : m,
    );
  });
}

/** `<p:txBody>`/`<a:txBody>` (any prefix) with no `a:p` child gets `<a:p/>` before it closes. */
function keepParagraphs(xml: string): string {
  return xml.replace(
    /(<([\w.-]+:)?txBody\b[^>]*>)([\s\S]*?)(<\/\2txBody>)/g,
    (m, open: string, _p: string | undefined, body: string, close: string) =>
      /<a:p[\s>/]/.test(body) ? m : `${open}${body}<a:p/>${close}`,
  );
}

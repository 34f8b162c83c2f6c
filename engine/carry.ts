import type { OpcPackage } from './package.ts';
import { relsOf, relsPathOf } from './package.ts';
import type { RenderSession } from './session.ts';
import { relativeTarget } from './session.ts';
import { escapeXml } from './xml.ts';
import { inflateEntry } from './zip.ts';

/**
 * Carries parts of an included package (slides' pictures and charts, sheets' drawings and tables)
 * into the host package: each part is copied under a free name with its content type, and what
 * its own relationships point at is carried along (recursively, each part once per included
 * template), so the copy is complete.
 */

export interface Rel {
  id: string;
  type: string;
  target: string;
  external: boolean;
}

/** What to do with one relationship: drop it, point it at a host part, or carry its target. */
export type RelDecision = { drop: true } | { target: string } | undefined;

export interface CarryOptions {
  /** Key of one inclusion: drawings, charts, embedded workbooks are copied once per inclusion. */
  key: string;
  /** Key of the included template: pictures and media are copied once per template. */
  shareKey: string;
  /** Decides a relationship before the default (carry the target, keep external addresses). */
  decide?: (rel: Rel, fromPart: string) => RelDecision;
  /** Lets the caller edit an XML part as it is carried (e.g. renumber table ids). */
  transform?: (srcPart: string, contentType: string, xml: string) => string;
}

// Parts that belong to the whole package (or to the slide/sheet structure the caller rebuilds).
const NEVER_CARRIED =
  /\/(slide|slideLayout|slideMaster|notesSlide|notesMaster|handoutMaster|presentation|theme|commentAuthors|worksheet|chartsheet|pivotTable|pivotCacheDefinition|calcChain|sharedStrings|styles)$/;

function contentType(pkg: OpcPackage, part: string): { override?: string; ext: string; fallback?: string } {
  const ext = part.slice(part.lastIndexOf('.') + 1).toLowerCase();
  const o = pkg.overrides.get(part);
  return o === undefined ? { ext, fallback: pkg.defaults.get(ext) } : { override: o, ext };
}

/** Relationships XML for `part` (its new name), from `rels` already pointing at host names. */
export function relsXml(part: string, rels: Array<{ id: string; type: string; target: string; external: boolean }>): string {
  const body = rels
    .map(
      (r) =>
        `<Relationship Id="${escapeXml(r.id)}" Type="${escapeXml(r.type)}" Target="${escapeXml(r.external ? r.target : relativeTarget(part, r.target))}"${r.external ? ' TargetMode="External"' : ''}/>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${body}</Relationships>`;
}

/**
 * The relationships of `srcPart` for its copy `newPart`, with their original ids (so the part's
 * XML needs no rewriting), each target carried or decided by `opts.decide`. Returns the ids that
 * were dropped, so the caller can remove what refers to them.
 */
export function carryRels(src: OpcPackage, srcPart: string, newPart: string, session: RenderSession, opts: CarryOptions): string[] {
  const kept: Rel[] = [];
  const dropped: string[] = [];
  for (const rel of relsOf(src, srcPart)) {
    const d = opts.decide?.(rel, srcPart);
    if (d !== undefined && 'drop' in d) {
      dropped.push(rel.id);
      continue;
    }
    if (d !== undefined) {
      kept.push({ ...rel, target: d.target, external: false });
      continue;
    }
    if (rel.external) {
      kept.push(rel);
      continue;
    }
    if (NEVER_CARRIED.test(rel.type) || !src.entries.has(rel.target)) {
      dropped.push(rel.id);
      continue;
    }
    kept.push({ ...rel, target: carryPart(src, rel.target, session, opts, SHARED_MEDIA.test(rel.type)) });
  }
  if (kept.length > 0) session.texts.set(relsPathOf(newPart), relsXml(newPart, kept));
  return dropped;
}

// Pictures and media are stored once per included template; everything else (drawings, charts and
// their embedded workbooks) once per inclusion, so copies never share what an application edits.
const SHARED_MEDIA = /\/(image|media|audio|video|hdphoto)$/;

/** Copies `part` (and what it relates to) into the host; returns its name there. */
export function carryPart(src: OpcPackage, part: string, session: RenderSession, opts: CarryOptions, shared = false): string {
  const entry = src.entries.get(part);
  if (entry === undefined) return part;
  const isXml = /\.(xml|vml)$/i.test(part);
  const key = shared ? `carry:${opts.shareKey}:${part}` : `carry:${opts.key}:${part}`;
  const known = session.carried.get(key);
  if (known !== undefined) return known;
  const ct = contentType(src, part);
  let name: string;
  if (isXml) {
    let xml = src.text(part) ?? '';
    if (opts.transform !== undefined) xml = opts.transform(part, ct.override ?? ct.fallback ?? '', xml);
    name = session.addPart(part, xml, ct.override ?? '');
  } else {
    name = session.addFile(part, inflateEntry(entry), key);
    if (ct.override !== undefined) session.addOverride(name, ct.override);
  }
  session.carried.set(key, name);
  if (ct.override === undefined && ct.fallback !== undefined) session.needContentType(ct.ext, ct.fallback);
  const dropped = carryRels(src, part, name, session, opts);
  if (dropped.length > 0 && isXml) {
    // A reference to a relationship that was not carried would make the part invalid.
    const xml = session.texts.get(name) ?? '';
    session.texts.set(name, dropRefs(xml, dropped));
  }
  return name;
}

/** Removes the hyperlink elements (and bare r:id attributes) that name dropped relationships. */
export function dropRefs(xml: string, ids: string[]): string {
  let out = xml;
  for (const id of ids) {
    const q = id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`<a:hlink(Click|Hover)\\b[^>]*\\sr:id="${q}"[^>]*?(?:/>|>[\\s\\S]*?</a:hlink\\1>)`, 'g'), '');
    out = out.replace(new RegExp(`\\sr:(?:id|embed|link)="${q}"`, 'g'), '');
  }
  return out;
}

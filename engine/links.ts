import type { ErrorBag } from './errors.ts';
import { ExpressionError, parseExpression } from './expression.ts';
import type { Scopes } from './expression.ts';
import { toText } from './filters.ts';
import { classifyTag } from './lexer.ts';
import type { Item, LinkTemplate, TagInfo } from './lexer.ts';
import type { OpcPackage } from './package.ts';
import { relsOf } from './package.ts';
import { evalTag, missing } from './render.ts';
import type { RenderContext } from './render.ts';

/**
 * Hyperlinks whose address is a tag. Word and PowerPoint keep a link's address in the part's
 * relationships (`Target="%7Burl%7D"`, braces percent-encoded by Word), so templated addresses are
 * found there; each link element pointing at one (`w:hyperlink`, `a:hlinkClick`, `a:hlinkHover`)
 * becomes a hook that evaluates the address in the current scope (inside loops too) and points the
 * element at a fresh relationship. A tag that is the whole address is used as is; a tag inside a
 * fixed address (`https://x.test/?q={term}`) is percent-encoded.
 */

export const HYPERLINK_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink';

export type { LinkTemplate } from './lexer.ts';

export interface LinkHookData {
  /** The link element's start tag as written. */
  text: string;
  link: LinkTemplate;
}

const LINK_ELEMENTS = new Set(['w:hyperlink', 'a:hlinkClick', 'a:hlinkHover']);
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto', 'tel', 'ftp']);

function percentDecoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/%7b/gi, '{').replace(/%7d/gi, '}');
  }
}

/** Templated hyperlink relationships of a part, by relationship id. */
export function templatedLinks(pkg: OpcPackage, part: string, start: string, end: string, errors: ErrorBag): Map<string, LinkTemplate> {
  const out = new Map<string, LinkTemplate>();
  for (const rel of relsOf(pkg, part)) {
    if (rel.type !== HYPERLINK_REL || !rel.external) continue;
    const target = percentDecoded(rel.target);
    if (target.indexOf(start) < 0) continue;
    const pieces: LinkTemplate['pieces'] = [];
    let pos = 0;
    let ok = true;
    for (;;) {
      const s = target.indexOf(start, pos);
      if (s < 0) break;
      const e = target.indexOf(end, s + start.length);
      // An address that is not whole field tags is not a templated link: an editor auto-linked text
      // around a tag (`mailto:{@raw`, `{@raw}`). It stays as it is; the text's own tags render as usual.
      if (e < 0) {
        ok = false;
        break;
      }
      if (s > pos) pieces.push(target.slice(pos, s));
      const source = target.slice(s + start.length, e);
      const tag: TagInfo = { ...classifyTag(source), source, location: { part } };
      if (tag.kind !== 'field') {
        ok = false;
        break;
      }
      try {
        pieces.push({ expr: parseExpression(tag.value), tag });
      } catch (err) {
        if (!(err instanceof ExpressionError)) throw err;
        errors.add(err.id, `${err.message} in hyperlink address tag "${source.trim()}"`, { part });
        ok = false;
        break;
      }
      pos = e + end.length;
    }
    if (!ok) continue;
    if (pos < target.length) pieces.push(target.slice(pos));
    out.set(rel.id, { relId: rel.id, pieces });
  }
  return out;
}

/** Marks the link elements that point at templated addresses; true when there was one. */
export function markLinks(items: Item[], links: ReadonlyMap<string, LinkTemplate>): boolean {
  if (links.size === 0) return false;
  let any = false;
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (it === undefined || it.k !== 'open' || !LINK_ELEMENTS.has(it.name)) continue;
    const id = /\sr:id="([^"]*)"/.exec(it.text)?.[1];
    const link = id === undefined ? undefined : links.get(id);
    if (link === undefined) continue;
    items[i] = { ...it, link };
    any = true;
  }
  return any;
}

/**
 * An address as a browser reads it (the WHATWG URL parser): leading and trailing C0 control characters and
 * spaces removed, ASCII tab, LF and CR removed anywhere, so `java\tscript:` is `javascript:`. The other C0
 * controls and DEL are removed too: XML cannot carry them, and a reader that drops them would otherwise
 * see a scheme the check did not. Links are checked and written in this form.
 */
export function normalizeLinkAddress(url: string): string {
  return url.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '').replace(/[\u0000-\u001f\u007f]/g, '');
}

/** The scheme of an address unless it is one written as a link (http, https, mailto, tel, ftp, or none),
 *  judged on the address as a browser reads it (normalizeLinkAddress). */
export function unsafeScheme(url: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(normalizeLinkAddress(url))?.[1]?.toLowerCase();
  return scheme !== undefined && !SAFE_SCHEMES.has(scheme) ? scheme : undefined;
}

/** The address of a link in the current scope, or an error entry. */
export function linkAddress(link: LinkTemplate, scopes: Scopes, ctx: RenderContext): string | undefined {
  const whole = link.pieces.length === 1;
  let url = '';
  for (const p of link.pieces) {
    if (typeof p === 'string') {
      url += p;
      continue;
    }
    const v = evalTag(p.expr, p.tag, scopes, ctx);
    if (v === undefined) missing(p.tag, ctx, 'hyperlink address tag');
    url += whole ? toText(v).trim() : encodeURIComponent(toText(v));
  }
  url = normalizeLinkAddress(url);
  const scheme = unsafeScheme(url);
  if (scheme !== undefined) {
    const tag = link.pieces.find((p) => typeof p !== 'string');
    ctx.errors.add(
      'link_invalid',
      `hyperlink address "${url.slice(0, 60)}" uses the scheme "${scheme}:"; only http, https, mailto, tel and ftp links are written`,
      typeof tag === 'object' ? tag.tag.location : undefined,
    );
    return undefined;
  }
  return url;
}

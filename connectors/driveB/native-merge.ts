// Native merge (document.options.driveBGenerate.nativeMergeEnabled): the native template is copied and its
// tags are replaced in place by the Docs / Sheets / Slides batchUpdate requests, so everything Google-only
// in the file (comments, smart chips, linked charts) survives. Those requests replace text; they cannot
// repeat or drop content. So only plain field tags (`{name}`, `{customer.address.city}`, `{items[0].sku}`)
// and, in Slides with nativeImageMergeEnabled, image tags (`{%logo}`, the shape holding the tag becomes
// the image) are merged natively; any other tag (loops, conditions, expressions, filters, raw XML,
// includes) is refused before anything is written, naming the tag, so the caller can use the default
// route (export, merge with the engine, upload) instead.
import type { NativeFormat } from './drive.ts';

export interface NativeMergePlan {
  /** Text replacements: tag text as written -> value. */
  fields: { tag: string; value: string }[];
  /** Slides image tags: tag text -> the data value (URL, data URL, base64 or {data, ...}). */
  images: { tag: string; value: unknown }[];
  refused: { tag: string; why: string }[];
}

const PATH = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[\d+\])*$/;

function lookup(data: unknown, path: string): unknown {
  let cur: unknown = data;
  for (const m of path.matchAll(/([A-Za-z_$][\w$]*)|\[(\d+)\]/g)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    const key = m[1] ?? Number(m[2]);
    if (!Object.hasOwn(cur as object, key)) return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

function kindOf(inner: string): string | undefined {
  const c = inner[0];
  if (c === '#') return 'a loop or condition';
  if (c === '^') return 'an inverted section';
  if (c === '/') return 'the end of a loop or condition';
  if (c === '@') return 'raw XML';
  if (c === '>') return 'an include';
  if (c === ':') return 'a slide loop';
  if (c === '~') return 'HTML';
  if (c === '=') return 'a delimiter change';
  if (c === '-') return 'a loop on an element';
  return undefined;
}

/** Every tag of the template's text, what it becomes, and what cannot be merged natively. */
export function planNativeMerge(format: NativeFormat, texts: string[], data: unknown, opts: { images: boolean }): NativeMergePlan {
  const plan: NativeMergePlan = { fields: [], images: [], refused: [] };
  const seen = new Set<string>();
  for (const t of texts) {
    for (const m of t.matchAll(/\{([^{}]*)\}/g)) {
      const tag = m[0];
      if (seen.has(tag)) continue;
      seen.add(tag);
      const inner = (m[1] ?? '').trim();
      const kind = kindOf(inner);
      if (kind) {
        plan.refused.push({ tag, why: `${kind} cannot be merged natively` });
        continue;
      }
      if (inner.startsWith('%')) {
        const path = inner.replace(/^%%?/, '').trim();
        if (!opts.images) plan.refused.push({ tag, why: 'an image tag needs document.options.driveBGenerate.nativeImageMergeEnabled' });
        else if (format !== 'gslide') plan.refused.push({ tag, why: 'image tags are merged natively in Google Slides only' });
        else if (!PATH.test(path)) plan.refused.push({ tag, why: 'an image tag must name a data field' });
        else plan.images.push({ tag, value: lookup(data, path) });
        continue;
      }
      if (!PATH.test(inner)) {
        plan.refused.push({ tag, why: 'expressions and filters cannot be merged natively' });
        continue;
      }
      plan.fields.push({ tag, value: text(lookup(data, inner)) });
    }
  }
  return plan;
}

/** The batchUpdate requests of a plan, images given as URLs Google can fetch. */
export function nativeRequests(format: NativeFormat, plan: NativeMergePlan, imageUrls: Map<string, string>): Record<string, unknown>[] {
  const requests: Record<string, unknown>[] = [];
  for (const { tag, url } of plan.images.map((i) => ({ tag: i.tag, url: imageUrls.get(i.tag) }))) {
    if (url)
      requests.push({
        replaceAllShapesWithImage: { containsText: { text: tag, matchCase: true }, imageUrl: url, imageReplaceMethod: 'CENTER_INSIDE' },
      });
    else requests.push({ replaceAllText: { containsText: { text: tag, matchCase: true }, replaceText: '' } });
  }
  for (const { tag, value } of plan.fields) {
    requests.push(
      format === 'gsheet'
        ? { findReplace: { find: tag, replacement: value, allSheets: true, matchCase: true } }
        : { replaceAllText: { containsText: { text: tag, matchCase: true }, replaceText: value } },
    );
  }
  return requests;
}

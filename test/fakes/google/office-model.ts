// The fake's "native" document model: a native Google file holds the Office package it was converted from
// (docx for a Doc, xlsx for a Sheet, pptx for a Slides deck), exports it back unchanged, and answers the
// Docs / Sheets / Slides read and batchUpdate calls by reading and rewriting the package's text nodes.
// Small on purpose: paragraphs of word/document.xml, cells of the worksheets (inline and shared strings,
// numbers), text shapes of the slides. A tag must sit in one text node (one run), as in the tests' files.
import { inflateEntry, type OutEntry, readZip, writeZip } from '../../../engine/zip.ts';

const dec = (b: Buffer) => b.toString('utf8');
const unesc = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function parts(pkg: Uint8Array): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, entry] of readZip(pkg)) if (name.endsWith('.xml') || name.endsWith('.rels')) out.set(name, dec(inflateEntry(entry)));
  return out;
}

/** Rewrites the parts `edit` changes; other entries are copied. */
function rewrite(pkg: Uint8Array, edit: (name: string, xml: string) => string): Uint8Array {
  const entries: OutEntry[] = [];
  for (const [name, entry] of readZip(pkg)) {
    if (name.endsWith('.xml')) entries.push({ name, data: Buffer.from(edit(name, dec(inflateEntry(entry))), 'utf8') });
    else entries.push({ name, entry });
  }
  return writeZip(entries);
}

/** Replaces `find` in the text of every `<tag>` element of the matching parts; returns the count. */
function replaceInTextNodes(
  pkg: Uint8Array,
  partRe: RegExp,
  tagRe: RegExp,
  find: string,
  replacement: string,
  matchCase: boolean,
): { pkg: Uint8Array; count: number } {
  let count = 0;
  const needle = new RegExp(find.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), matchCase ? 'g' : 'gi');
  const out = rewrite(pkg, (name, xml) => {
    if (!partRe.test(name)) return xml;
    return xml.replace(tagRe, (_m, open: string, text: string, close: string) => {
      const plain = unesc(text);
      const replaced = plain.replace(needle, () => {
        count++;
        return replacement;
      });
      return `${open}${esc(replaced)}${close}`;
    });
  });
  return { pkg: out, count };
}

// ---- Docs

export function docParagraphs(pkg: Uint8Array): string[] {
  const xml = parts(pkg).get('word/document.xml') ?? '';
  return [...xml.matchAll(/<w:p\b[^>]*>([\s\S]*?)<\/w:p>/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/<w:t\b[^>]*>([^<]*)<\/w:t>/g)].map((t) => unesc(t[1] ?? '')).join(''),
  );
}

/** The Docs API's Document resource for the model (body.content paragraphs with text runs). */
export function docResource(id: string, title: string, pkg: Uint8Array) {
  let index = 1;
  const content = docParagraphs(pkg).map((text) => {
    const startIndex = index;
    index += text.length + 1;
    return { startIndex, endIndex: index, paragraph: { elements: [{ startIndex, endIndex: index, textRun: { content: `${text}\n` } }] } };
  });
  return { documentId: id, title, body: { content } };
}

export function docReplaceAllText(pkg: Uint8Array, find: string, replacement: string, matchCase: boolean) {
  return replaceInTextNodes(
    pkg,
    /^word\/(document|header\d*|footer\d*)\.xml$/,
    /(<w:t\b[^>]*>)([^<]*)(<\/w:t>)/g,
    find,
    replacement,
    matchCase,
  );
}

// ---- Sheets

interface SheetRef {
  title: string;
  part: string;
  sheetId: number;
}

function sheetRefs(p: Map<string, string>): SheetRef[] {
  const wb = p.get('xl/workbook.xml') ?? '';
  const rels = p.get('xl/_rels/workbook.xml.rels') ?? '';
  return [...wb.matchAll(/<sheet\b([^>]*)\/>/g)].map((m, i) => {
    const attrs = m[1] ?? '';
    const title = unesc(/\bname="([^"]*)"/.exec(attrs)?.[1] ?? `Sheet${i + 1}`);
    const rid = /\br:id="([^"]*)"/.exec(attrs)?.[1] ?? '';
    const target = new RegExp(`<Relationship\\b[^>]*Id="${rid}"[^>]*Target="([^"]*)"`).exec(rels)?.[1] ?? `worksheets/sheet${i + 1}.xml`;
    return { title, part: `xl/${target.replace(/^\/?xl\//, '')}`, sheetId: Number(/\bsheetId="(\d+)"/.exec(attrs)?.[1] ?? i + 1) };
  });
}

function colIndex(ref: string): number {
  const letters = /^[A-Z]+/.exec(ref)?.[0] ?? 'A';
  let n = 0;
  for (const ch of letters) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** Rows of one sheet as the Sheets API's values (formatted strings), trailing empties trimmed. */
function sheetValues(p: Map<string, string>, ref: SheetRef, typed = false): (string | number)[][] {
  const shared = [...(p.get('xl/sharedStrings.xml') ?? '').matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/<t\b[^>]*>([^<]*)<\/t>/g)].map((t) => unesc(t[1] ?? '')).join(''),
  );
  const xml = p.get(ref.part) ?? '';
  const rows: (string | number)[][] = [];
  for (const rm of xml.matchAll(/<row\b([^>]*)>([\s\S]*?)<\/row>/g)) {
    const r = Number(/\br="(\d+)"/.exec(rm[1] ?? '')?.[1] ?? rows.length + 1) - 1;
    const row: (string | number)[] = [];
    for (const cm of (rm[2] ?? '').matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      const attrs = cm[1] ?? '';
      const body = cm[2] ?? '';
      const c = colIndex(/\br="([A-Z]+)\d+"/.exec(attrs)?.[1] ?? 'A');
      const t = /\bt="([^"]*)"/.exec(attrs)?.[1];
      let v: string | number;
      if (t === 'inlineStr') v = [...body.matchAll(/<t\b[^>]*>([^<]*)<\/t>/g)].map((x) => unesc(x[1] ?? '')).join('');
      else if (t === 's') v = shared[Number(/<v>([^<]*)<\/v>/.exec(body)?.[1] ?? -1)] ?? '';
      else {
        v = unesc(/<v>([^<]*)<\/v>/.exec(body)?.[1] ?? '');
        if (typed && t === undefined && v !== '' && Number.isFinite(Number(v))) v = Number(v);
      }
      while (row.length < c) row.push('');
      row[c] = v;
    }
    while (rows.length < r) rows.push([]);
    rows[r] = row;
  }
  return rows;
}

export function spreadsheetResource(id: string, title: string, pkg: Uint8Array) {
  const p = parts(pkg);
  return {
    spreadsheetId: id,
    properties: { title },
    sheets: sheetRefs(p).map((s, index) => ({ properties: { sheetId: s.sheetId, title: s.title, index, sheetType: 'GRID' } })),
  };
}

/** values.get: the range is a sheet title (optionally quoted, optionally with !A1:Z9, which is ignored). */
export function spreadsheetValues(
  pkg: Uint8Array,
  range: string,
  typed = false,
): { range: string; values: (string | number)[][] } | undefined {
  const p = parts(pkg);
  const title = range
    .split('!')[0]!
    .replace(/^'(.*)'$/, '$1')
    .replace(/''/g, "'");
  const ref = sheetRefs(p).find((s) => s.title === title);
  if (!ref) return undefined;
  return { range: `'${ref.title}'!A1`, values: sheetValues(p, ref, typed) };
}

export function spreadsheetText(pkg: Uint8Array): string[] {
  const p = parts(pkg);
  return sheetRefs(p).flatMap((s) => sheetValues(p, s).flat().map(String));
}

export function sheetFindReplace(pkg: Uint8Array, find: string, replacement: string, matchCase: boolean) {
  // Inline strings and shared strings (both are <t> text nodes of their parts).
  return replaceInTextNodes(
    pkg,
    /^xl\/(worksheets\/sheet\d+|sharedStrings)\.xml$/,
    /(<t\b[^>]*>)([^<]*)(<\/t>)/g,
    find,
    replacement,
    matchCase,
  );
}

// ---- Slides

interface SlideShape {
  objectId: string;
  text: string;
}

function slideParts(p: Map<string, string>): string[] {
  return [...p.keys()]
    .filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
    .sort((a, b) => Number(/(\d+)\.xml$/.exec(a)![1]) - Number(/(\d+)\.xml$/.exec(b)![1]));
}

function shapesOf(xml: string, slide: number): SlideShape[] {
  return [...xml.matchAll(/<p:sp>([\s\S]*?)<\/p:sp>/g)].map((m, i) => ({
    objectId: `s${slide}_shape${i + 1}`,
    text: [...(m[1] ?? '').matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((t) => unesc(t[1] ?? '')).join(''),
  }));
}

export function presentationResource(
  id: string,
  title: string,
  pkg: Uint8Array,
  images: { pageObjectId: string; objectId: string; sourceUrl: string }[],
) {
  const p = parts(pkg);
  return {
    presentationId: id,
    title,
    slides: slideParts(p).map((part, i) => {
      const pageObjectId = `slide${i + 1}`;
      return {
        objectId: pageObjectId,
        pageElements: [
          ...shapesOf(p.get(part) ?? '', i + 1).map((s) => ({
            objectId: s.objectId,
            shape: { shapeType: 'TEXT_BOX', text: { textElements: [{ textRun: { content: `${s.text}\n` } }] } },
          })),
          ...images
            .filter((im) => im.pageObjectId === pageObjectId)
            .map((im) => ({ objectId: im.objectId, image: { sourceUrl: im.sourceUrl, contentUrl: im.sourceUrl } })),
        ],
      };
    }),
  };
}

export function slidesReplaceAllText(pkg: Uint8Array, find: string, replacement: string, matchCase: boolean) {
  return replaceInTextNodes(pkg, /^ppt\/slides\/slide\d+\.xml$/, /(<a:t>)([^<]*)(<\/a:t>)/g, find, replacement, matchCase);
}

/** replaceAllShapesWithImage: every shape whose text contains `find` is removed (the caller records the
 *  image that takes its place); returns where they were. */
export function slidesRemoveShapesContaining(
  pkg: Uint8Array,
  find: string,
  matchCase: boolean,
): { pkg: Uint8Array; removed: { pageObjectId: string; objectId: string }[] } {
  const removed: { pageObjectId: string; objectId: string }[] = [];
  const norm = (s: string) => (matchCase ? s : s.toLowerCase());
  const out = rewrite(pkg, (name, xml) => {
    const m = /^ppt\/slides\/slide(\d+)\.xml$/.exec(name);
    if (!m) return xml;
    let i = 0;
    return xml.replace(/<p:sp>([\s\S]*?)<\/p:sp>/g, (whole, inner: string) => {
      i++;
      const text = [...inner.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((t) => unesc(t[1] ?? '')).join('');
      if (!norm(text).includes(norm(find))) return whole;
      removed.push({ pageObjectId: `slide${m[1]}`, objectId: `s${m[1]}_shape${i}` });
      return '';
    });
  });
  return { pkg: out, removed };
}

export function slidesText(pkg: Uint8Array): string[] {
  const p = parts(pkg);
  return slideParts(p).flatMap((part, i) => shapesOf(p.get(part) ?? '', i + 1).map((s) => s.text));
}

export function slideCount(pkg: Uint8Array): number {
  return slideParts(parts(pkg)).length;
}

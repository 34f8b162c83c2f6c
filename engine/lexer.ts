import type { ErrorBag, ErrorLocation } from './errors.ts';
import { decodeXml, escapeXml } from './xml.ts';
import type { XmlToken } from './xml.ts';
import type { Expr } from './expression.ts';

/**
 * Stage "lex": finds delimiters in the document's visible text. Word splits text into runs at
 * arbitrary points (spell-check marks, revision ids, formatting), so a tag is found on the
 * concatenated text of all text elements of a part and then re-homed into the text element where
 * it starts; the pieces in the following elements are removed.
 */

/** A hyperlink whose address holds tags (engine/links.ts): its relationship and the address in pieces. */
export interface LinkTemplate {
  relId: string;
  pieces: Array<string | { expr: Expr; tag: TagInfo }>;
}

export type TagKind = 'field' | 'open' | 'inverted' | 'close' | 'raw' | 'image' | 'include' | 'slide' | 'html' | 'htmlBlock';

export interface TagInfo {
  kind: TagKind;
  /** Text between the delimiters, as written. */
  source: string;
  /** Text after the prefix character, trimmed: the expression or the include name. */
  value: string;
  /** For `{-w:p items}` loops: the element the loop repeats. */
  expandTo?: string;
  /** `{%%img}`: a centred image on its own paragraph (docx). */
  center?: boolean;
  location: ErrorLocation;
  /** Raw start tag of the run properties of the run holding the tag (pptx line breaks need it). */
  runProps?: string;
}

export type Item =
  /** `link`: a hyperlink element whose address is templated (links.ts). */
  | { k: 'open'; name: string; text: string; self: boolean; link?: LinkTemplate }
  | { k: 'close'; name: string; text: string }
  /** Markup or text outside text elements, copied as is. */
  | { k: 'raw'; text: string }
  /** Escaped text inside a text element (counts as visible content). */
  | { k: 'text'; text: string }
  | { k: 'tag'; tag: TagInfo };

export interface LexOptions {
  part: string;
  textTags: ReadonlySet<string>;
  paragraphTag: string;
  runTag: string;
  runPropsTag: string;
  start: string;
  end: string;
  /**
   * Elements removed when they sit inside a tag that spans several text elements: the tag's
   * pieces merge into one run, so paragraph/line breaks between the pieces must go.
   */
  droppedInTag?: ReadonlySet<string>;
  /** Spreadsheets: the cell element, whose `r` attribute locates tags, and the sheet's name. */
  cellTag?: string;
  sheet?: string;
}

/** `{=<% %>=}`: new start and end delimiters, separated by whitespace, neither containing '='. */
const DELIMITER_CHANGE = /^=\s*([^\s=]+)\s+([^\s=]+)\s*=$/;

export function classifyTag(source: string): Pick<TagInfo, 'kind' | 'value' | 'expandTo' | 'center'> {
  const s = source.trim();
  const c = s.charAt(0);
  switch (c) {
    case '#':
      return { kind: 'open', value: s.slice(1).trim() };
    case '^':
      return { kind: 'inverted', value: s.slice(1).trim() };
    case '/':
      return { kind: 'close', value: s.slice(1).trim() };
    case '@':
      return { kind: 'raw', value: s.slice(1).trim() };
    case '%':
      return s.charAt(1) === '%' ? { kind: 'image', value: s.slice(2).trim(), center: true } : { kind: 'image', value: s.slice(1).trim() };
    case '>':
      return { kind: 'include', value: s.slice(1).trim() };
    case ':':
      return { kind: 'slide', value: s.slice(1).trim() };
    case '~':
      return s.charAt(1) === '~' ? { kind: 'htmlBlock', value: s.slice(2).trim() } : { kind: 'html', value: s.slice(1).trim() };
    case '-': {
      const m = /^-(\S+)\s+([\s\S]+)$/.exec(s);
      if (m) return { kind: 'open', value: (m[2] ?? '').trim(), expandTo: m[1] ?? '' };
      return { kind: 'field', value: s };
    }
    default:
      return { kind: 'field', value: s };
  }
}

interface TextRef {
  index: number;
  decoded: string;
  start: number;
  paragraph: number;
  runProps: string | undefined;
  cell: string | undefined;
}

export function lexTags(tokens: XmlToken[], opts: LexOptions, errors: ErrorBag): Item[] {
  // Pass 1: collect the visible text of every text element with its position in the full text.
  const texts: TextRef[] = [];
  const stack: string[] = [];
  let full = '';
  let paragraph = 0;
  let runProps: string | undefined;
  let cell: string | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === undefined) continue;
    if (t.k === 'open') {
      if (t.name === opts.paragraphTag) paragraph++;
      if (t.name === opts.cellTag) cell = /\sr="([^"]*)"/.exec(t.text)?.[1];
      if (t.name === opts.runTag) runProps = undefined;
      if (t.name === opts.runPropsTag && stack[stack.length - 1] === opts.runTag) runProps = captureElement(tokens, i);
      if (!t.self) stack.push(t.name);
    } else if (t.k === 'close') {
      stack.pop();
    } else if (t.k === 'text' && opts.textTags.has(stack[stack.length - 1] ?? '')) {
      const decoded = decodeXml(t.text);
      texts.push({ index: i, decoded, start: full.length, paragraph, runProps, cell });
      full += decoded;
    }
  }

  // Pass 2: delimiter positions on the full text.
  const found = scanTags(full, opts.start, opts.end, errors, (offset) => locate(texts, offset, opts));

  // Pass 3: rebuild the item list, replacing text elements' content around tags.
  const items: Item[] = [];
  let fi = 0;
  const textAt = new Map<number, TextRef>();
  for (const r of texts) textAt.set(r.index, r);
  let nextText = 0;
  let fj = 0;
  const dropped = opts.droppedInTag;
  // A paragraph start dropped inside a tag takes its properties along: the merged paragraph keeps the
  // first one's (two w:pPr in one paragraph is invalid).
  const paraProps = `${opts.paragraphTag}Pr`;
  let skipProps = 0;
  let afterDroppedParagraph = false;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t === undefined) continue;
    if (skipProps > 0) {
      if (t.k === 'open' && !t.self) skipProps++;
      else if (t.k === 'close') skipProps--;
      continue;
    }
    if (afterDroppedParagraph && (t.k === 'open' || t.k === 'close')) {
      afterDroppedParagraph = false;
      if (t.k === 'open' && t.name === paraProps) {
        if (!t.self) skipProps = 1;
        continue;
      }
    }
    const ref = t.k === 'text' ? textAt.get(i) : undefined;
    if (ref === undefined) {
      if (dropped !== undefined && found.length > 0 && (t.k === 'open' || t.k === 'close') && dropped.has(t.name)) {
        // Position of this markup in full-text coordinates: the start of the next text element.
        while (nextText < texts.length && (texts[nextText]?.index ?? 0) < i) nextText++;
        const p = texts[nextText]?.start ?? full.length;
        while (fj < found.length && (found[fj]?.e ?? 0) <= p) fj++;
        const f = found[fj];
        if (f !== undefined && f.s < p && p < f.e) {
          if (t.k === 'open' && t.name === opts.paragraphTag) afterDroppedParagraph = true;
          continue;
        }
      }
      if (t.k === 'open') items.push({ k: 'open', name: t.name, text: t.text, self: t.self });
      else if (t.k === 'close') items.push({ k: 'close', name: t.name, text: t.text });
      else items.push({ k: 'raw', text: t.text });
      continue;
    }
    const a = ref.start;
    const b = ref.start + ref.decoded.length;
    while (fi < found.length && (found[fi]?.e ?? 0) <= a) fi++;
    const first = found[fi];
    if (first === undefined || first.s >= b) {
      if (t.text !== '') items.push({ k: 'text', text: t.text });
      continue;
    }
    // Rewrite this text: keep pieces outside tags, place each tag where it starts.
    let cur = a;
    for (let j = fi; j < found.length; j++) {
      const f = found[j];
      if (f === undefined || f.s >= b) break;
      if (f.s > cur) items.push({ k: 'text', text: escapeXml(full.slice(cur, f.s)) });
      if (f.s >= a && f.drop !== true) {
        const cls = classifyTag(f.source);
        const tag: TagInfo = { ...cls, source: f.source, location: where(opts, ref, f.s) };
        if (ref.runProps !== undefined) tag.runProps = ref.runProps;
        items.push({ k: 'tag', tag });
      }
      cur = Math.max(cur, Math.min(f.e, b));
    }
    if (cur < b) items.push({ k: 'text', text: escapeXml(full.slice(cur, b)) });
  }
  markSpacePreserve(items, opts.textTags);
  return items;
}

/** A tag found in a text: from `s` (its start delimiter) to `e` (after its end delimiter); `drop`: a
 *  delimiter switch, which renders nothing. */
export interface FoundTag {
  s: number;
  e: number;
  source: string;
  drop?: boolean;
}

/**
 * The tags of a text (a part's visible text, or an XML template's text): delimiter positions, with
 * `{=<% %>=}` switching the delimiters for the rest of the text (docxtemplater's syntax; the switching
 * tag itself renders nothing). Problems (a closing delimiter without an opening one, a tag never closed)
 * go to `errors`, located by `at(offset)`.
 */
export function scanTags(full: string, start: string, end: string, errors: ErrorBag, at: (offset: number) => ErrorLocation): FoundTag[] {
  const found: FoundTag[] = [];
  let pos = 0;
  if (full.indexOf(start) >= 0 || full.indexOf(end) >= 0) {
    for (;;) {
      const s = full.indexOf(start, pos);
      // With identical delimiters (`%name%`) every delimiter after an opening one closes it.
      const e = start === end ? -1 : full.indexOf(end, pos);
      if (s < 0 && e < 0) break;
      if (e >= 0 && (s < 0 || e < s)) {
        errors.add('unopened_tag', `closing delimiter "${end}" without an opening one`, at(e));
        pos = e + end.length;
        continue;
      }
      // `{={{ }}=}`: the new delimiters may contain the current end one; the switch ends at `=` + end.
      const sw = switchAt(full, s + start.length, end);
      if (sw !== null) {
        found.push({ s, e: sw.e, source: sw.source, drop: true });
        pos = sw.e;
        start = sw.start;
        end = sw.end;
        continue;
      }
      const close = full.indexOf(end, s + start.length);
      const nextOpen = start === end ? -1 : full.indexOf(start, s + start.length);
      if (close < 0) {
        errors.add('unclosed_tag', `tag starting with "${full.slice(s, s + 20)}" is never closed`, at(s));
        break;
      }
      if (nextOpen >= 0 && nextOpen < close) {
        errors.add('unclosed_tag', `tag starting with "${full.slice(s, nextOpen)}" is not closed before the next tag`, at(s));
        pos = nextOpen;
        continue;
      }
      const source = full.slice(s + start.length, close);
      const change = DELIMITER_CHANGE.exec(source);
      if (change !== null) {
        found.push({ s, e: close + end.length, source, drop: true });
        pos = close + end.length;
        start = change[1] ?? start;
        end = change[2] ?? end;
        continue;
      }
      found.push({ s, e: close + end.length, source });
      pos = close + end.length;
    }
  }
  return found;
}

/** A delimiter switch starting at `from` (just after a start delimiter), ended by `=` and the end delimiter. */
function switchAt(full: string, from: number, end: string): { e: number; source: string; start: string; end: string } | null {
  if (!/^\s*=/.test(full.slice(from, from + 16))) return null;
  const m = new RegExp(`^\\s*=\\s*([^\\s=]+)\\s+([^\\s=]+)\\s*=${end.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).exec(
    full.slice(from, from + 256),
  );
  if (m === null || m[1] === undefined || m[2] === undefined) return null;
  return { e: from + m[0].length, source: m[0].slice(0, m[0].length - end.length), start: m[1], end: m[2] };
}

/** A text element holding a tag may receive leading/trailing spaces: tell Word to keep them. */
function markSpacePreserve(items: Item[], textTags: ReadonlySet<string>): void {
  let lastOpen = -1;
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (it === undefined) continue;
    if (it.k === 'open' && textTags.has(it.name)) lastOpen = i;
    else if (it.k === 'tag' && lastOpen >= 0) {
      const open = items[lastOpen];
      if (
        open !== undefined &&
        open.k === 'open' &&
        !open.self &&
        (open.name === 'w:t' || open.name === 't') &&
        !/xml:space=/.test(open.text)
      ) {
        items[lastOpen] = { ...open, text: `${open.text.slice(0, -1)} xml:space="preserve">` };
      }
    }
  }
}

function captureElement(tokens: XmlToken[], i: number): string {
  const t = tokens[i];
  if (t === undefined || t.k !== 'open') return '';
  if (t.self) return t.text;
  let depth = 0;
  let s = '';
  for (let j = i; j < tokens.length; j++) {
    const u = tokens[j];
    if (u === undefined) break;
    s += u.text;
    if (u.k === 'open' && !u.self) depth++;
    else if (u.k === 'close') {
      depth--;
      if (depth === 0) break;
    }
  }
  return s;
}

function locate(texts: TextRef[], offset: number, opts: LexOptions): ErrorLocation {
  let at: TextRef | undefined;
  for (const r of texts) {
    if (r.start > offset) break;
    at = r;
  }
  return where(opts, at, offset);
}

/** Word/PowerPoint: part and paragraph; spreadsheets: part, sheet and cell (paragraphs mean nothing there). */
function where(opts: LexOptions, ref: TextRef | undefined, offset: number): ErrorLocation {
  if (opts.cellTag === undefined) return { part: opts.part, paragraph: ref?.paragraph ?? 0, offset };
  const loc: ErrorLocation = { part: opts.part };
  if (opts.sheet !== undefined) loc.sheet = opts.sheet;
  if (ref?.cell !== undefined) loc.cell = ref.cell;
  loc.offset = offset;
  return loc;
}

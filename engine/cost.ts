/**
 * What LibreOffice would have to lay out for a package, estimated from its XML and image headers in one
 * pass, without laying anything out: the pages (lines of text, table rows, page and section breaks;
 * slides; sheet rows and cells), the longest paragraph, the longest table, the cells of a workbook and the
 * pixels of its images. LibreOffice's time grows with these much faster than with the file's size (a
 * 0.8 MB docx of 260 000 one-word paragraphs, one 60 MB paragraph, a 0.15 MB PNG of a billion pixels, an
 * HTML table of 300 000 rows each hold an instance for minutes), so the merge refuses a document past
 * the limits (engine/limits.ts) before any conversion starts, and the converter does so for documents it
 * did not merge.
 *
 * Parts are recognised by their root element, not their name (a main document renamed in its
 * relationships is still read as one); elements by their local name, whatever their prefix.
 */
import { constants, inflateRawSync } from 'node:zlib';
import { TemplateError, type TemplateErrorEntry } from './errors.ts';
import { dimensions, sniff } from './images.ts';
import { limitError, resolveLimits, type TemplateLimits } from './limits.ts';
import { entryBytes, type OutEntry, readZip, type ZipEntry } from './zip.ts';

/** Layout in points, calibrated on LibreOffice's page counts: a character is about 0.537 of its font
 *  size wide, a single line 1.163 times its font size high (so on A4 with 1-inch margins and the default
 *  12 pt, ~70 characters a line and ~50 lines a page). Page size, margins, font sizes, line spacing,
 *  spacing before/after, character spacing, table row heights and image heights are read from the
 *  document (a 1-inch page with 72 pt type lays out a page per character). */
const CHAR_EM = 0.537;
const LINE_EM = 1.163;
const DEFAULT_FONT_PT = 12;
/** A4 with 1-inch margins, in points: the page of a part without a section (headers, footnotes). */
const DEFAULT_PAGE: PageBox = { width: 451.3, height: 697.9 };
/** A printed sheet page holds ~50 rows of ~10 columns. */
const SHEET_ROWS_PER_PAGE = 50;
const SHEET_CELLS_PER_PAGE = 500;

export interface ConversionCost {
  /** Estimated pages: Word flow pages + slides + printed sheet pages. */
  pages: number;
  paragraphs: number;
  /** Explicit page breaks and section breaks. */
  breaks: number;
  slides: number;
  longestParagraph: { chars: number; part: string; paragraph: number } | null;
  longestTable: { rows: number; part: string } | null;
  /** Cells of all worksheets. */
  cells: number;
  /** Pixels of all images (each image part once). */
  imagePixels: number;
  largestImage: { part: string; width: number; height: number } | null;
}

type Mode = 'flow' | 'slide' | 'sheet' | 'other';

/** The text area of a page, in points. */
interface PageBox {
  width: number;
  height: number;
}

/** What a paragraph style (or the document defaults) sets of what layout costs. */
interface ParaProps {
  sizePt?: number;
  /** w:spacing w:line and w:lineRule. */
  line?: number;
  lineRule?: string;
  beforePt?: number;
  afterPt?: number;
  charSpacingPt?: number;
}

interface Styles {
  defaults: ParaProps;
  /** The paragraph style used when a paragraph names none. */
  normal: ParaProps;
  byId: Map<string, ParaProps>;
}

const NO_STYLES: Styles = { defaults: {}, normal: {}, byId: new Map() };

/** Root elements of parts whose paragraphs flow into pages (Word). */
const FLOW_ROOTS = new Set(['document', 'hdr', 'ftr', 'footnotes', 'endnotes', 'comments']);

interface Frame {
  kind: 'p' | 'tbl' | 'tr' | 'tc';
  /** Pages inside, as a fraction of the section's page (p: of nested content; tbl: of its rows; tc: of its paragraphs). */
  lines: number;
  /** p: characters of its own text; tbl: rows; tr: the tallest cell's height (pages). */
  n: number;
  /** p: its number in the part (1-based). */
  at?: number;
  /** p: the width of its text in points, each character as wide as its run's font and spacing make it. */
  width?: number;
  /** p: its largest font (points), its style and direct spacing; the sum of its images' heights (points). */
  sizePt?: number;
  style?: ParaProps;
  direct?: ParaProps;
  imagesPt?: number;
  /** p: a section ends with this paragraph (its sectPr). */
  endsSection?: boolean;
  /** tr: its height rule's minimum (points). */
  minPt?: number;
}

/** Parts up to this size are inflated whole rather than by their head. */
const SMALL_PART = 64 * 1024;

/** A part as the estimate reads it: its first bytes, inflated once, and all of them on demand. */
interface Part {
  name: string;
  size: number;
  /** The first 1 KB (or the whole part, when it is in hand). */
  head: Uint8Array;
  entry: ZipEntry | undefined;
  data: () => Buffer;
}

function partsOf(pkg: Uint8Array | readonly OutEntry[], limits: TemplateLimits): Part[] {
  if (!(pkg instanceof Uint8Array)) {
    return pkg.map((e) => {
      if ('entry' in e) return entryPart(e.entry);
      const data = Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength);
      return { name: e.name, size: data.length, head: data, entry: undefined, data: () => data };
    });
  }
  return [...readZip(pkg, limits).values()].map(entryPart);
}

function entryPart(entry: ZipEntry): Part {
  // A small part is inflated whole, once (entryBytes: a template's part is then read for every merge
  // without inflating it again); of a large one, only the head, and the rest when it is XML.
  let whole: Buffer | undefined;
  try {
    if (entry.size <= SMALL_PART) whole = entryBytes(entry);
  } catch {
    // A corrupt part: read by its head as any other (its data throws when it is XML).
  }
  return {
    name: entry.name,
    size: entry.size,
    head: whole ?? (entry.size === 0 ? new Uint8Array(0) : headOf(entry, 1024)),
    entry,
    data: () => whole ?? entryBytes(entry),
  };
}

/** What LibreOffice would lay out for a package: its bytes, or a render's parts before they are zipped
 *  (engine/index.ts renderParts), which are read without inflating anything. */
export function conversionCost(pkg: Uint8Array | readonly OutEntry[], limits?: Partial<TemplateLimits>): ConversionCost {
  const cost = emptyCost();
  let flowPages = 0;
  const parts = partsOf(pkg, resolveLimits(limits));
  // Paragraph styles first (a part whose root is w:styles, whatever its name): the document's paragraphs use them.
  let styles = NO_STYLES;
  for (const part of parts) {
    if (part.size === 0 || !looksLikeXml(part.head.subarray(0, 64)) || rootName(part.head.subarray(0, 1024)) !== 'styles') continue;
    const known = part.entry && stylesOfEntry.get(part.entry);
    styles = known ?? readStyles(part.data().toString('latin1'));
    if (part.entry && !known) stylesOfEntry.set(part.entry, styles);
  }
  for (const part of parts) {
    if (part.size === 0) continue;
    if (looksLikeXml(part.head.subarray(0, 64))) {
      flowPages += part.entry ? addPart(cost, scanEntry(part, styles)) : scanPart(part.name, part.data(), cost, styles);
      continue;
    }
    let size = part.entry ? imageSizes.get(part.entry) : undefined;
    if (size === undefined) {
      size = imageSize(part);
      if (part.entry) imageSizes.set(part.entry, size);
    }
    if (size) {
      cost.imagePixels += size.width * size.height;
      if (!cost.largestImage || size.width * size.height > cost.largestImage.width * cost.largestImage.height)
        cost.largestImage = { part: part.name, ...size };
    }
  }
  // A sum of fractions: its rounding error must not make a page.
  cost.pages += cost.breaks + Math.ceil(flowPages - 1e-6 * Math.max(1, flowPages)) + cost.slides;
  return cost;
}

/** Throws the TemplateError (entries `limit_exceeded`, each naming its setting) of every limit the
 *  package's cost exceeds; returns the cost otherwise. */
export function checkConversionCost(pkg: Uint8Array | readonly OutEntry[], limits?: Partial<TemplateLimits>): ConversionCost {
  const l = resolveLimits(limits);
  const cost = conversionCost(pkg, l);
  const over: TemplateErrorEntry[] = [];
  const add = (e: TemplateError) => over.push(...e.errors);
  const p = cost.longestParagraph;
  if (p && p.chars > l.maxParagraphChars) {
    add(
      limitError('maxParagraphChars', `paragraph ${p.paragraph} of ${p.part} has ${p.chars} characters`, l.maxParagraphChars, {
        part: p.part,
        paragraph: p.paragraph,
      }),
    );
  }
  const t = cost.longestTable;
  if (t && t.rows > l.maxTableRows)
    add(limitError('maxTableRows', `a table of ${t.part} has ${t.rows} rows`, l.maxTableRows, { part: t.part }));
  const img = cost.largestImage;
  if (img && cost.imagePixels > l.maxImagePixels) {
    add(
      limitError(
        'maxImagePixels',
        `the images come to ${cost.imagePixels} pixels (the largest, ${img.part}, is ${img.width} x ${img.height})`,
        l.maxImagePixels,
        { part: img.part },
      ),
    );
  }
  if (cost.cells > l.maxCells) add(limitError('maxCells', `the workbook has ${cost.cells} cells`, l.maxCells));
  if (cost.pages > l.maxPages) {
    const what = [
      cost.paragraphs ? `${cost.paragraphs} paragraphs` : '',
      cost.breaks ? `${cost.breaks} page breaks` : '',
      cost.slides ? `${cost.slides} slides` : '',
      cost.cells ? `${cost.cells} cells` : '',
    ]
      .filter(Boolean)
      .join(', ');
    add(limitError('maxPages', `the document comes to about ${cost.pages} pages${what ? ` (${what})` : ''}`, l.maxPages));
  }
  if (over.length > 0) throw new TemplateError(over);
  return cost;
}

// A template's own parts are the same entries in every merge of it (the engine's template cache): what one
// adds to the cost is read once per entry (and styles part), and added to each merge's cost as scanPart would.
const stylesOfEntry = new WeakMap<ZipEntry, Styles>();
const imageSizes = new WeakMap<ZipEntry, { width: number; height: number } | null>();
const scanned = new WeakMap<ZipEntry, WeakMap<Styles, { cost: ConversionCost; flowPages: number }>>();

const emptyCost = (): ConversionCost => ({
  pages: 0,
  paragraphs: 0,
  breaks: 0,
  slides: 0,
  longestParagraph: null,
  longestTable: null,
  cells: 0,
  imagePixels: 0,
  largestImage: null,
});

/** What a template's part adds to a cost (scanPart's, on a cost of its own), read once per entry and styles. */
function scanEntry(part: Part, styles: Styles): { cost: ConversionCost; flowPages: number } {
  const entry = part.entry!;
  let byStyles = scanned.get(entry);
  if (!byStyles) scanned.set(entry, (byStyles = new WeakMap()));
  let found = byStyles.get(styles);
  if (!found) {
    const own = emptyCost();
    found = { flowPages: scanPart(part.name, part.data(), own, styles), cost: own };
    byStyles.set(styles, found);
  }
  return found;
}

/** Adds a part's own cost into `cost` as scanPart adds it while it reads (the first of equally long
 *  paragraphs or tables stays); returns its flow pages. */
function addPart(cost: ConversionCost, part: { cost: ConversionCost; flowPages: number }): number {
  const c = part.cost;
  cost.pages += c.pages;
  cost.paragraphs += c.paragraphs;
  cost.breaks += c.breaks;
  cost.slides += c.slides;
  cost.cells += c.cells;
  if (c.longestParagraph && (!cost.longestParagraph || c.longestParagraph.chars > cost.longestParagraph.chars))
    cost.longestParagraph = c.longestParagraph;
  if (c.longestTable && (!cost.longestTable || c.longestTable.rows > cost.longestTable.rows)) cost.longestTable = c.longestTable;
  return part.flowPages;
}

/** Scans one XML part; returns the pages (fractional) it adds to the Word flow. */
function scanPart(part: string, xml: Buffer, cost: ConversionCost, styles: Styles): number {
  let mode: Mode | undefined;
  const stack: Frame[] = [];
  let pages = 0;
  let paragraph = 0;
  let inText = 0;
  /** Characters of a text element outside any paragraph (a shared string, an inline cell string). */
  let looseChars = 0;
  /** Per section (its sectPr), whether it starts on a new page (w:type other than continuous). */
  const sections: boolean[] = [];
  let inSectPr = 0;
  let inPPr = 0;
  let inRPr = 0;
  /** The run being read: its font size and character spacing (points), when it sets them. */
  let run: { sizePt?: number; charSpacingPt?: number } | undefined;
  let rows = 0;
  let cells = 0;
  // The page of each section, in document order (a section's properties close it, so they are read first).
  const boxes = sectionBoxes(xml);
  let section = 0;
  const box = () => boxes[Math.min(section, boxes.length - 1)] ?? DEFAULT_PAGE;
  const addPages = (n: number) => {
    const top = stack[stack.length - 1];
    if (top) top.lines += n;
    else pages += n;
  };
  const text = (from: number, to: number) => {
    let n = 0;
    for (let k = from; k < to; k++) if ((xml[k]! & 0xc0) !== 0x80) n++;
    const p = innermost(stack, 'p');
    if (p) {
      p.n += n;
      if (mode === 'flow') {
        const size = run?.sizePt ?? p.style?.sizePt ?? styles.defaults.sizePt ?? DEFAULT_FONT_PT;
        const spacing = run?.charSpacingPt ?? p.direct?.charSpacingPt ?? p.style?.charSpacingPt ?? styles.defaults.charSpacingPt ?? 0;
        p.sizePt = Math.max(p.sizePt ?? 0, size);
        // A character wider than the line still takes a line.
        p.width! += n * Math.min(box().width, Math.max(0.1, size * CHAR_EM + spacing));
      }
    } else looseChars += n;
  };
  const longest = (chars: number, at: number) => {
    if (!cost.longestParagraph || chars > cost.longestParagraph.chars) cost.longestParagraph = { chars, part, paragraph: at };
  };
  const attr = (tagStart: number, tagEnd: number, name: string): string | undefined =>
    attribute(xml.toString('latin1', tagStart, tagEnd), name);
  const open = (name: string, tagStart: number, tagEnd: number) => {
    if (mode === undefined) {
      mode = FLOW_ROOTS.has(name) ? 'flow' : name === 'sld' ? 'slide' : name === 'worksheet' ? 'sheet' : 'other';
      if (mode === 'slide') cost.slides++;
    }
    switch (name) {
      case 'p':
        cost.paragraphs++;
        stack.push({ kind: 'p', lines: 0, n: 0, at: ++paragraph, width: 0, sizePt: 0, imagesPt: 0, style: styles.normal, direct: {} });
        break;
      case 'pPr':
        inPPr++;
        break;
      case 'rPr':
        inRPr++;
        break;
      case 'r':
        run = {};
        break;
      case 'pStyle': {
        const p = innermost(stack, 'p');
        const id = attr(tagStart, tagEnd, 'val');
        if (p && inPPr > 0 && id !== undefined) p.style = styles.byId.get(id) ?? styles.normal;
        break;
      }
      case 'sz': {
        const v = numberAttr(attr(tagStart, tagEnd, 'val'));
        if (v === undefined || v <= 0) break;
        const p = innermost(stack, 'p');
        if (run && inPPr === 0) run.sizePt = v / 2;
        else if (p) p.sizePt = Math.max(p.sizePt ?? 0, v / 2); // the paragraph mark's font
        break;
      }
      case 'spacing': {
        const p = innermost(stack, 'p');
        if (!p) break;
        const tag = xml.toString('latin1', tagStart, tagEnd);
        if (inRPr > 0) {
          const v = numberAttr(attribute(tag, 'val'));
          if (v !== undefined) {
            if (run && inPPr === 0) run.charSpacingPt = v / 20;
          }
        } else if (inPPr > 0) Object.assign(p.direct!, spacingOf(tag));
        break;
      }
      case 'extent': {
        const p = innermost(stack, 'p');
        const cy = numberAttr(attr(tagStart, tagEnd, 'cy'));
        // An image taller than the page is scaled or clipped to it.
        if (p && cy !== undefined && cy > 0) p.imagesPt! += Math.min(cy / 12_700, box().height);
        break;
      }
      case 'tbl':
        stack.push({ kind: 'tbl', lines: 0, n: 0 });
        break;
      case 'tr': {
        const tbl = innermost(stack, 'tbl');
        if (tbl) tbl.n++;
        stack.push({ kind: 'tr', lines: 0, n: 0 });
        break;
      }
      case 'trHeight': {
        const tr = innermost(stack, 'tr');
        const v = numberAttr(attr(tagStart, tagEnd, 'val'));
        if (tr && v !== undefined && v > 0) tr.minPt = v / 20;
        break;
      }
      case 'tc':
        stack.push({ kind: 'tc', lines: 0, n: 0 });
        break;
      case 't':
        inText++;
        break;
      case 'br':
        if (/\btype\s*=\s*["']page["']/.test(xml.toString('latin1', tagStart, tagEnd))) cost.breaks++;
        break;
      case 'pageBreakBefore':
        if (!/\bval\s*=\s*["'](?:0|false|off)["']/.test(xml.toString('latin1', tagStart, tagEnd))) cost.breaks++;
        break;
      case 'sectPr':
        inSectPr++;
        sections.push(true);
        break;
      case 'type':
        if (inSectPr > 0 && /\bval\s*=\s*["']continuous["']/.test(xml.toString('latin1', tagStart, tagEnd)))
          sections[sections.length - 1] = false;
        break;
      case 'row':
        rows++;
        break;
      case 'c':
        if (mode === 'sheet') cells++;
        break;
    }
  };
  const close = (name: string) => {
    switch (name) {
      case 'sectPr': {
        inSectPr = Math.max(0, inSectPr - 1);
        if (inSectPr > 0) return;
        // A paragraph's own section ends with that paragraph; the body's ends the part.
        const p = innermost(stack, 'p');
        if (p) p.endsSection = true;
        else section++;
        return;
      }
      case 'pPr':
        inPPr = Math.max(0, inPPr - 1);
        return;
      case 'rPr':
        inRPr = Math.max(0, inRPr - 1);
        return;
      case 'r':
        run = undefined;
        return;
      case 't':
        inText = Math.max(0, inText - 1);
        if (inText === 0 && looseChars > 0) {
          longest(looseChars, 0);
          looseChars = 0;
        }
        return;
    }
    if (name !== 'p' && name !== 'tbl' && name !== 'tr' && name !== 'tc') return;
    const i = lastIndexOfKind(stack, name);
    if (i < 0) return;
    // Frames left open inside (malformed nesting) close with it.
    while (stack.length > i + 1) close(stack[stack.length - 1]!.kind);
    const f = stack.pop()!;
    if (f.kind === 'p') {
      longest(f.n, f.at ?? 0);
      addPages(paragraphPages(f, box(), styles) + f.lines);
      if (f.endsSection) section++;
    } else if (f.kind === 'tbl') {
      if (!cost.longestTable || f.n > cost.longestTable.rows) cost.longestTable = { rows: f.n, part };
      addPages(f.lines);
    } else if (f.kind === 'tr') {
      const line = (DEFAULT_FONT_PT * LINE_EM) / box().height;
      addPages(Math.max(line, f.n, (f.minPt ?? 0) / box().height));
    } else {
      const tr = stack[stack.length - 1];
      if (tr?.kind === 'tr') tr.n = Math.max(tr.n, f.lines);
      else addPages(f.lines);
    }
  };

  let i = 0;
  const n = xml.length;
  while (i < n) {
    const lt = xml.indexOf(0x3c, i);
    if (lt < 0) break;
    if (inText > 0 && lt > i) text(i, lt);
    const c1 = xml[lt + 1];
    if (c1 === 0x21 /* ! */) {
      if (xml[lt + 2] === 0x2d && xml[lt + 3] === 0x2d) {
        const end = xml.indexOf('-->', lt + 4, 'latin1');
        i = end < 0 ? n : end + 3;
        continue;
      }
      if (xml.toString('latin1', lt, lt + 9) === '<![CDATA[') {
        const end = xml.indexOf(']]>', lt + 9, 'latin1');
        if (inText > 0) text(lt + 9, end < 0 ? n : end);
        i = end < 0 ? n : end + 3;
        continue;
      }
    }
    if (c1 === 0x3f /* ? */) {
      const end = xml.indexOf('?>', lt + 2, 'latin1');
      i = end < 0 ? n : end + 2;
      continue;
    }
    const gt = xml.indexOf(0x3e, lt + 1);
    if (gt < 0) break;
    const closing = c1 === 0x2f;
    let s = lt + (closing ? 2 : 1);
    let e = s;
    while (e < gt) {
      const b = xml[e]!;
      if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0x2f) break;
      if (b === 0x3a) s = e + 1;
      e++;
    }
    i = gt + 1;
    // Only the first element's name (the part's kind) and the few names counted are ever made strings.
    const name = mode === undefined && !closing ? xml.toString('latin1', s, e) : nameOf(xml, s, e);
    if (name === undefined) continue;
    if (closing) close(name);
    else {
      open(name, lt, gt);
      if (xml[gt - 1] === 0x2f) close(name);
    }
  }
  while (stack.length > 0) close(stack[stack.length - 1]!.kind);
  if (mode === 'sheet') {
    cost.cells += cells;
    cost.pages += Math.max(Math.ceil(rows / SHEET_ROWS_PER_PAGE), Math.ceil(cells / SHEET_CELLS_PER_PAGE));
  }
  if (mode !== 'flow') return 0;
  // A section's properties say how it starts: every section after the first that is not continuous
  // starts a page.
  cost.breaks += sections.slice(1).filter(Boolean).length;
  return pages;
}

const COUNTED = [
  'p',
  't',
  'c',
  'r',
  'tr',
  'tc',
  'br',
  'sz',
  'tbl',
  'row',
  'pPr',
  'rPr',
  'type',
  'sectPr',
  'pStyle',
  'extent',
  'spacing',
  'trHeight',
  'pageBreakBefore',
].map((n) => Buffer.from(n, 'latin1'));

/** The local name in xml[s, e) when it is one of the counted names, without allocating. */
function nameOf(xml: Buffer, s: number, e: number): string | undefined {
  const len = e - s;
  for (const n of COUNTED) {
    if (n.length !== len || n[0] !== xml[s]) continue;
    let k = 1;
    while (k < len && n[k] === xml[s + k]) k++;
    if (k === len) return NAMES.get(n)!;
  }
  return undefined;
}
const NAMES = new Map(COUNTED.map((n) => [n, n.toString('latin1')]));

/** The pages a paragraph takes, as a fraction of its section's page: its lines (its text's width over
 *  the line's), each as high as its font and line spacing make it (a line taller than the page takes a
 *  page), its spacing before and after, its images. */
function paragraphPages(p: Frame, page: PageBox, styles: Styles): number {
  const get = <K extends keyof ParaProps>(k: K): ParaProps[K] => p.direct?.[k] ?? p.style?.[k] ?? styles.defaults[k];
  const size = Math.max(p.sizePt || 0, p.n === 0 ? (get('sizePt') ?? DEFAULT_FONT_PT) : 0) || DEFAULT_FONT_PT;
  const natural = size * LINE_EM;
  const line = get('line');
  const rule = get('lineRule') ?? 'auto';
  let lineH = natural;
  if (line !== undefined && line > 0) {
    if (rule === 'exact') lineH = line / 20;
    else if (rule === 'atLeast') lineH = Math.max(natural, line / 20);
    else lineH = natural * (line / 240);
  }
  const lines = Math.max(1, Math.ceil((p.width ?? 0) / page.width - 1e-9));
  const perPage = Math.max(1, Math.floor(page.height / Math.max(lineH, 0.01)));
  const spacing = Math.max(0, get('beforePt') ?? 0) + Math.max(0, get('afterPt') ?? 0);
  return lines / perPage + (spacing + (p.imagesPt ?? 0)) / page.height;
}

/** The text area (page size less margins, in points) of each section of a Word part, in order. */
function sectionBoxes(xml: Buffer): PageBox[] {
  const out: PageBox[] = [];
  let from = 0;
  for (;;) {
    const at = xml.indexOf('sectPr', from, 'latin1');
    if (at < 0) break;
    const end = xml.indexOf('sectPr', at + 6, 'latin1');
    from = at + 6;
    // An opening tag (`<w:sectPr`, not `</w:sectPr` nor w:sectPrChange) up to its closing tag.
    const lt = xml.lastIndexOf(0x3c, at);
    if (lt < 0 || xml[lt + 1] === 0x2f || !/^[\s/>]/.test(xml.toString('latin1', at + 6, at + 7))) continue;
    const body = xml.toString('latin1', at, end < 0 ? Math.min(xml.length, at + 4096) : end);
    from = end < 0 ? xml.length : end + 6;
    const size = /<(?:[\w.-]+:)?pgSz\b[^>]*>/.exec(body)?.[0] ?? '';
    const mar = /<(?:[\w.-]+:)?pgMar\b[^>]*>/.exec(body)?.[0] ?? '';
    // Without a size: A4 (LibreOffice's default in most locales), 1-inch margins (twips).
    const w = numberAttr(attribute(size, 'w')) ?? 11_906;
    const h = numberAttr(attribute(size, 'h')) ?? 16_838;
    const m = (k: string, d: number) => Math.abs(numberAttr(attribute(mar, k)) ?? d);
    const width = (w - m('left', 1440) - m('right', 1440)) / 20;
    const height = (h - m('top', 1440) - m('bottom', 1440)) / 20;
    out.push({ width: Math.max(1, width), height: Math.max(1, height) });
  }
  return out;
}

/** The document defaults and the paragraph styles (with what they inherit) of a styles part. */
function readStyles(xml: string): Styles {
  const defaults: ParaProps = {};
  const dd = /<(?:[\w.-]+:)?docDefaults\b[\s\S]*?<\/(?:[\w.-]+:)?docDefaults>/.exec(xml)?.[0];
  if (dd) Object.assign(defaults, propsOf(dd));
  const raw = new Map<string, { props: ParaProps; basedOn?: string }>();
  let normal: string | undefined;
  for (const m of xml.matchAll(/<(?:[\w.-]+:)?style\b([^>]*)>([\s\S]*?)<\/(?:[\w.-]+:)?style>/g)) {
    const head = m[1]!;
    if ((attribute(head, 'type') ?? 'paragraph') !== 'paragraph') continue;
    const id = attribute(head, 'styleId');
    if (id === undefined) continue;
    const basedOn = /<(?:[\w.-]+:)?basedOn\b[^>]*>/.exec(m[2]!)?.[0];
    raw.set(id, { props: propsOf(m[2]!), ...(basedOn ? { basedOn: attribute(basedOn, 'val') } : {}) });
    if (/^(?:1|true|on)$/.test(attribute(head, 'default') ?? '')) normal = id;
  }
  const resolved = (id: string): ParaProps => {
    const chain: ParaProps[] = [];
    const seen = new Set<string>();
    for (let at: string | undefined = id; at !== undefined && !seen.has(at) && raw.has(at); at = raw.get(at)!.basedOn) {
      seen.add(at);
      chain.unshift(raw.get(at)!.props);
    }
    return Object.assign({}, ...chain) as ParaProps;
  };
  const byId = new Map<string, ParaProps>();
  for (const id of raw.keys()) byId.set(id, resolved(id));
  return { defaults, normal: normal ? (byId.get(normal) ?? {}) : {}, byId };
}

/** Font size, line spacing, spacing before/after and character spacing of a style's (or the defaults') XML. */
function propsOf(xml: string): ParaProps {
  const out: ParaProps = {};
  const sz = /<(?:[\w.-]+:)?sz\b[^>]*>/.exec(xml)?.[0];
  const size = numberAttr(attribute(sz ?? '', 'val'));
  if (size !== undefined && size > 0) out.sizePt = size / 2;
  for (const tag of xml.match(/<(?:[\w.-]+:)?spacing\b[^>]*>/g) ?? []) {
    const val = numberAttr(attribute(tag, 'val'));
    if (val !== undefined) out.charSpacingPt = val / 20;
    else Object.assign(out, spacingOf(tag));
  }
  return out;
}

/** A paragraph's w:spacing: line (and its rule), before and after. */
function spacingOf(tag: string): ParaProps {
  const out: ParaProps = {};
  const line = numberAttr(attribute(tag, 'line'));
  if (line !== undefined) out.line = line;
  const rule = attribute(tag, 'lineRule');
  if (rule !== undefined) out.lineRule = rule;
  const before = numberAttr(attribute(tag, 'before'));
  if (before !== undefined) out.beforePt = before / 20;
  const after = numberAttr(attribute(tag, 'after'));
  if (after !== undefined) out.afterPt = after / 20;
  return out;
}

/** The expression of each attribute name read (a handful of names: compiled once). */
const ATTRIBUTE = new Map<string, RegExp>();

/** An attribute's value by its local name (any prefix). */
function attribute(tag: string, name: string): string | undefined {
  let re = ATTRIBUTE.get(name);
  if (!re) ATTRIBUTE.set(name, (re = new RegExp(`[\\s:]${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`)));
  const m = re.exec(tag);
  return m ? (m[1] ?? m[2]) : undefined;
}

function numberAttr(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number.parseFloat(v);
  return Number.isFinite(n) ? n : undefined;
}

/** The local name of the first element of an XML part's head (after its declaration and comments). */
function rootName(head: Uint8Array): string | undefined {
  const s = Buffer.from(head).toString('latin1');
  return /<([\w.-]+:)?([\w.-]+)[\s/>]/.exec(s.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->/g, ''))?.[2];
}

function innermost(stack: Frame[], kind: Frame['kind']): Frame | undefined {
  const i = lastIndexOfKind(stack, kind);
  return i < 0 ? undefined : stack[i];
}

function lastIndexOfKind(stack: Frame[], kind: string): number {
  for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.kind === kind) return i;
  return -1;
}

function looksLikeXml(head: Uint8Array): boolean {
  let k = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) k = 3;
  while (k < head.length && (head[k] === 0x20 || head[k] === 0x09 || head[k] === 0x0a || head[k] === 0x0d)) k++;
  return head[k] === 0x3c;
}

/** The first bytes of a part (at most `max`), inflating only what they need. */
function headOf(entry: ZipEntry, max: number): Uint8Array {
  if (entry.method === 0) return entry.raw.subarray(0, max);
  // A prefix of the compressed bytes inflates to at most ~1 000 times its size: a few KB is enough for
  // any image header, and never a large allocation.
  for (const take of [16 * 1024, 1024]) {
    try {
      const out = inflateRawSync(entry.raw.subarray(0, take), { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: 1 << 20 });
      return out.subarray(0, max);
    } catch {
      /* too much output for the cap: a smaller prefix */
    }
  }
  return new Uint8Array(0);
}

/** Width and height of an image part (PNG, JPEG, GIF, BMP, TIFF, WebP), by its bytes; null otherwise. */
function imageSize(part: Part): { width: number; height: number } | null {
  let head = part.entry && part.head.length < part.size ? headOf(part.entry, 64 * 1024) : part.head.subarray(0, 64 * 1024);
  const kind = sniff(head);
  if (kind) {
    const d = dimensions(head, kind);
    return d && d.w > 0 && d.h > 0 ? { width: d.w, height: d.h } : null;
  }
  if ((head[0] === 0x49 && head[1] === 0x49 && head[2] === 0x2a) || (head[0] === 0x4d && head[1] === 0x4d && head[3] === 0x2a)) {
    // A TIFF's directory may sit anywhere, often at the end.
    if (part.size > head.length) head = part.data();
    return tiffSize(head);
  }
  if (
    head.length >= 30 &&
    Buffer.from(head.subarray(0, 4)).toString('latin1') === 'RIFF' &&
    Buffer.from(head.subarray(8, 12)).toString('latin1') === 'WEBP'
  )
    return webpSize(head);
  return null;
}

function tiffSize(b: Uint8Array): { width: number; height: number } | null {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const le = b[0] === 0x49;
  try {
    const ifd = v.getUint32(4, le);
    const count = v.getUint16(ifd, le);
    let width = 0;
    let height = 0;
    for (let k = 0; k < count; k++) {
      const at = ifd + 2 + k * 12;
      const tag = v.getUint16(at, le);
      const type = v.getUint16(at + 2, le);
      const value = type === 3 ? v.getUint16(at + 8, le) : v.getUint32(at + 8, le);
      if (tag === 256) width = value;
      if (tag === 257) height = value;
    }
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}

function webpSize(b: Uint8Array): { width: number; height: number } | null {
  const chunk = Buffer.from(b.subarray(12, 16)).toString('latin1');
  if (chunk === 'VP8X')
    return { width: 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16)), height: 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16)) };
  if (chunk === 'VP8L') {
    const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  if (chunk === 'VP8 ') return { width: (b[26]! | (b[27]! << 8)) & 0x3fff, height: (b[28]! | (b[29]! << 8)) & 0x3fff };
  return null;
}

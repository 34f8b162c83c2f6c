import { escapeXml } from './xml.ts';
import { normalizeLinkAddress } from './links.ts';

/**
 * HTML to WordprocessingML for `{~~html}` (block: replaces the tag's paragraph with paragraphs and
 * tables) and `{~html}` (inline: runs inside the tag's paragraph). Supported: p, div, h1-h6,
 * blockquote, pre, br, b/strong, i/em, u/ins, s/strike/del, sup, sub, code, span, a href, ul/ol/li
 * (nested; bullets and numbers written as indented text), table/tr/td/th. Everything else keeps its
 * text. Nothing in the value becomes markup except through this mapping; links go through `link`
 * (which applies the host's scheme rules).
 */

interface El {
  name: string;
  attrs: Map<string, string>;
  children: HNode[];
}
type HNode = string | El;

const VOID = new Set(['br', 'hr', 'img', 'input', 'meta', 'link', 'col', 'wbr']);
const BLOCK = new Set([
  'p',
  'div',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'ul',
  'ol',
  'li',
  'table',
  'tr',
  'td',
  'th',
  'thead',
  'tbody',
  'tfoot',
  'hr',
  'section',
  'article',
  'header',
  'footer',
]);
const DROP = new Set(['script', 'style', 'head', 'title', 'template']);

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  euro: '€',
  bull: '•',
};

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const n = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : '';
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/** Tolerant parser: unknown or unbalanced markup never throws; text is always kept. */
export function parseHtml(html: string): HNode[] {
  const root: El = { name: '#root', attrs: new Map(), children: [] };
  const stack: El[] = [root];
  const re =
    /<!--[\s\S]*?(?:-->|$)|<!\[CDATA\[[\s\S]*?(?:\]\]>|$)|<![^>]*>|<\?[^>]*>|<\/([a-zA-Z][\w:-]*)\s*>|<([a-zA-Z][\w:-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*(\/?)>/g;
  let pos = 0;
  let dropDepth = 0;
  const top = (): El => stack[stack.length - 1] ?? root;
  const text = (t: string): void => {
    if (t !== '' && dropDepth === 0) top().children.push(decodeEntities(t));
  };
  for (const m of html.matchAll(re)) {
    text(html.slice(pos, m.index));
    pos = m.index + m[0].length;
    const close = m[1]?.toLowerCase();
    const open = m[2]?.toLowerCase();
    if (close !== undefined) {
      if (DROP.has(close)) {
        dropDepth = Math.max(0, dropDepth - 1);
        continue;
      }
      const at = stack.map((e) => e.name).lastIndexOf(close);
      if (at > 0) stack.length = at;
      continue;
    }
    if (open === undefined) continue;
    if (DROP.has(open)) {
      if (m[4] !== '/') dropDepth++;
      continue;
    }
    if (dropDepth > 0) continue;
    // A new block closes an open paragraph (HTML's implied end tags); li closes the previous li.
    if (BLOCK.has(open)) {
      const p = stack.map((e) => e.name).lastIndexOf('p');
      if (p > 0) stack.length = p;
      if (open === 'li') {
        const li = stack.map((e) => e.name).lastIndexOf('li');
        const list = Math.max(stack.map((e) => e.name).lastIndexOf('ul'), stack.map((e) => e.name).lastIndexOf('ol'));
        if (li > 0 && li > list) stack.length = li;
      }
      if (open === 'td' || open === 'th' || open === 'tr') {
        const names = stack.map((e) => e.name);
        const cell = Math.max(names.lastIndexOf('td'), names.lastIndexOf('th'));
        const table = names.lastIndexOf('table');
        if (cell > table && cell > 0) stack.length = cell;
        if (open === 'tr') {
          const tr = stack.map((e) => e.name).lastIndexOf('tr');
          if (tr > table && tr > 0) stack.length = tr;
        }
      }
    }
    const attrs = new Map<string, string>();
    for (const a of (m[3] ?? '').matchAll(/([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
      attrs.set((a[1] ?? '').toLowerCase(), decodeEntities(a[2] ?? a[3] ?? a[4] ?? ''));
    }
    const el: El = { name: open, attrs, children: [] };
    top().children.push(el);
    if (m[4] !== '/' && !VOID.has(open) && stack.length < 200) stack.push(el);
  }
  text(html.slice(pos));
  return root.children;
}

interface Style {
  b?: boolean;
  i?: boolean;
  u?: boolean;
  s?: boolean;
  vert?: 'superscript' | 'subscript';
  code?: boolean;
  size?: number;
  link?: boolean;
  pre?: boolean;
}

const RPR_ORDER = [
  'rStyle',
  'rFonts',
  'b',
  'bCs',
  'i',
  'iCs',
  'caps',
  'smallCaps',
  'strike',
  'dstrike',
  'outline',
  'shadow',
  'emboss',
  'imprint',
  'noProof',
  'snapToGrid',
  'vanish',
  'webHidden',
  'color',
  'spacing',
  'w',
  'kern',
  'position',
  'sz',
  'szCs',
  'highlight',
  'u',
  'effect',
  'bdr',
  'shd',
  'fitText',
  'vertAlign',
  'rtl',
  'cs',
  'em',
  'lang',
  'eastAsianLayout',
  'specVanish',
  'oMath',
];
export const PPR_ORDER = [
  'pStyle',
  'keepNext',
  'keepLines',
  'pageBreakBefore',
  'framePr',
  'widowControl',
  'numPr',
  'suppressLineNumbers',
  'pBdr',
  'shd',
  'tabs',
  'suppressAutoHyphens',
  'kinsoku',
  'wordWrap',
  'overflowPunct',
  'topLinePunct',
  'autoSpaceDE',
  'autoSpaceDN',
  'bidi',
  'adjustRightInd',
  'snapToGrid',
  'spacing',
  'ind',
  'contextualSpacing',
  'mirrorIndents',
  'suppressOverlap',
  'jc',
  'textDirection',
  'textAlignment',
  'textboxTightWrap',
  'outlineLvl',
  'divId',
  'cnfStyle',
  'rPr',
  'sectPr',
  'pPrChange',
];

/** Children of a w:rPr/w:pPr element as [local name, xml] pairs. */
function children(props: string): Array<[string, string]> {
  const inner = props.replace(/^<w:[rp]Pr\b[^>]*>/, '').replace(/<\/w:[rp]Pr>$/, '');
  if (/^<w:[rp]Pr\b[^>]*\/>$/.test(props)) return [];
  const out: Array<[string, string]> = [];
  for (const m of inner.matchAll(/<w:(\w+)\b[^>]*?(?:\/>|>[\s\S]*?<\/w:\1>)/g)) out.push([m[1] ?? '', m[0]]);
  return out;
}

/** Base properties with ours added (ours win), in the schema's order so Word accepts them. */
export function mergeProps(tag: 'w:rPr' | 'w:pPr', base: string, ours: Array<[string, string]>, order: string[]): string {
  const names = new Set(ours.map(([n]) => n));
  const all = [...children(base).filter(([n]) => !names.has(n)), ...ours];
  if (all.length === 0) return '';
  const rank = (n: string): number => {
    const i = order.indexOf(n);
    return i < 0 ? order.length : i;
  };
  all.sort((a, b) => rank(a[0]) - rank(b[0]));
  return `<${tag}>${all.map(([, x]) => x).join('')}</${tag}>`;
}

export interface HtmlEnv {
  /** Run properties of the run holding the tag (inherited by every run). */
  runProps: string;
  /** Paragraph properties of the tag's paragraph, without a section break (block mode). */
  paraProps: string;
  /** Relationship id for an external link, or undefined when the address is refused or empty. */
  link: (href: string) => string | undefined;
}

class Writer {
  readonly blocks: string[] = [];
  runs: string[] = [];
  private readonly env: HtmlEnv;
  private readonly inline: boolean;

  constructor(env: HtmlEnv, inline: boolean) {
    this.env = env;
    this.inline = inline;
  }

  run(text: string, st: Style): string {
    const ours: Array<[string, string]> = [];
    if (st.code) ours.push(['rFonts', '<w:rFonts w:ascii="Courier New" w:hAnsi="Courier New" w:cs="Courier New"/>']);
    if (st.b) ours.push(['b', '<w:b/>'], ['bCs', '<w:bCs/>']);
    if (st.i) ours.push(['i', '<w:i/>'], ['iCs', '<w:iCs/>']);
    if (st.s) ours.push(['strike', '<w:strike/>']);
    if (st.link) ours.push(['color', '<w:color w:val="0563C1"/>']);
    if (st.size !== undefined) ours.push(['sz', `<w:sz w:val="${st.size}"/>`], ['szCs', `<w:szCs w:val="${st.size}"/>`]);
    if (st.u || st.link) ours.push(['u', '<w:u w:val="single"/>']);
    if (st.vert !== undefined) ours.push(['vertAlign', `<w:vertAlign w:val="${st.vert}"/>`]);
    const rPr = mergeProps('w:rPr', this.env.runProps, ours, RPR_ORDER);
    return `<w:r>${rPr}<w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r>`;
  }

  /** Ends the current paragraph (block mode) or separates it with a line break (inline mode). */
  paragraph(pPr: Array<[string, string]> = [], force = false): void {
    if (this.runs.length === 0 && !force) return;
    if (this.inline) {
      if (this.blocks.length > 0) this.blocks.push('<w:r><w:br/></w:r>');
      this.blocks.push(this.runs.join(''));
    } else {
      this.blocks.push(`<w:p>${mergeProps('w:pPr', this.env.paraProps, pPr, PPR_ORDER)}${this.runs.join('')}</w:p>`);
    }
    this.runs = [];
  }

  inlineNodes(nodes: HNode[], st: Style): void {
    for (const n of nodes) {
      if (typeof n === 'string') {
        const t = st.pre ? n : n.replace(/[\t\n\r ]+/g, ' ');
        if (t !== '' && !(t === ' ' && this.runs.length === 0)) {
          // Line breaks inside <pre> are kept.
          const lines = t.split('\n');
          lines.forEach((line, k) => {
            if (k > 0) this.runs.push('<w:r><w:br/></w:r>');
            if (line !== '') this.runs.push(this.run(this.runs.length === 0 && !st.pre ? line.replace(/^ /, '') : line, st));
          });
        }
        continue;
      }
      if (BLOCK.has(n.name)) {
        this.blockNode(n, st, 0);
        continue;
      }
      const s: Style = { ...st };
      switch (n.name) {
        case 'br':
          this.runs.push('<w:r><w:br/></w:r>');
          continue;
        case 'b':
        case 'strong':
          s.b = true;
          break;
        case 'i':
        case 'em':
        case 'cite':
        case 'var':
          s.i = true;
          break;
        case 'u':
        case 'ins':
          s.u = true;
          break;
        case 's':
        case 'strike':
        case 'del':
          s.s = true;
          break;
        case 'sup':
          s.vert = 'superscript';
          break;
        case 'sub':
          s.vert = 'subscript';
          break;
        case 'code':
        case 'kbd':
        case 'samp':
        case 'tt':
          s.code = true;
          break;
        case 'a': {
          const href = n.attrs.get('href') ?? '';
          // Checked and written as a browser reads it (`java&#9;script:` is javascript:).
          const address = normalizeLinkAddress(href);
          const id = address === '' ? undefined : this.env.link(address);
          if (id === undefined) break;
          const outer = this.runs;
          this.runs = [];
          this.inlineNodes(n.children, { ...s, link: true });
          outer.push(`<w:hyperlink r:id="${id}" w:history="1">${this.runs.join('')}</w:hyperlink>`);
          this.runs = outer;
          continue;
        }
        default:
          break;
      }
      this.inlineNodes(n.children, s);
    }
  }

  blockNode(n: El, st: Style, depth: number): void {
    const heading = /^h([1-6])$/.exec(n.name);
    if (heading) {
      this.paragraph();
      const level = Number(heading[1]);
      this.inlineNodes(n.children, { ...st, b: true, size: [0, 32, 28, 26, 24, 22, 22][level] ?? 22 });
      this.paragraph([
        ['pStyle', `<w:pStyle w:val="Heading${level}"/>`],
        ['keepNext', '<w:keepNext/>'],
      ]);
      return;
    }
    switch (n.name) {
      case 'ul':
      case 'ol': {
        this.paragraph();
        let k = 0;
        const start = Number(n.attrs.get('start') ?? 1);
        for (const c of n.children) {
          if (typeof c === 'string') {
            if (c.trim() !== '') this.inlineNodes([c], st);
            continue;
          }
          if (c.name !== 'li') {
            this.blockNode(c, st, depth + 1);
            continue;
          }
          const marker = n.name === 'ul' ? '•' : `${(Number.isFinite(start) ? start : 1) + k}.`;
          k++;
          const ind: Array<[string, string]> = [
            ['tabs', `<w:tabs><w:tab w:val="left" w:pos="${720 * (depth + 1)}"/></w:tabs>`],
            ['ind', `<w:ind w:left="${720 * (depth + 1)}" w:hanging="360"/>`],
          ];
          this.runs.push(this.run(marker, st).replace('</w:t></w:r>', '</w:t><w:tab/></w:r>'));
          const nested: El[] = [];
          const inline: HNode[] = [];
          for (const x of c.children) {
            if (typeof x !== 'string' && (x.name === 'ul' || x.name === 'ol')) nested.push(x);
            else inline.push(x);
          }
          this.inlineNodes(inline, st);
          this.paragraph(ind, true);
          for (const x of nested) this.blockNode(x, st, depth + 1);
        }
        return;
      }
      case 'table':
        this.paragraph();
        this.table(n, st);
        return;
      case 'hr':
        this.paragraph();
        this.paragraph([['pBdr', '<w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="auto"/></w:pBdr>']], true);
        return;
      case 'blockquote':
        this.paragraph();
        this.blockChildren(n.children, st, [['ind', '<w:ind w:left="720"/>']]);
        return;
      case 'pre':
        this.paragraph();
        this.inlineNodes(n.children, { ...st, code: true, pre: true });
        this.paragraph();
        return;
      default:
        // p, div, li outside a list, table parts outside a table, sections.
        this.paragraph();
        this.blockChildren(n.children, st, []);
    }
  }

  blockChildren(nodes: HNode[], st: Style, pPr: Array<[string, string]>): void {
    for (const c of nodes) {
      if (typeof c !== 'string' && BLOCK.has(c.name)) {
        this.paragraph(pPr);
        this.blockNode(c, st, 0);
      } else this.inlineNodes([c], st);
    }
    this.paragraph(pPr);
  }

  private table(n: El, st: Style): void {
    const rows: El[] = [];
    const collect = (el: El): void => {
      for (const c of el.children) {
        if (typeof c === 'string') continue;
        if (c.name === 'tr') rows.push(c);
        else if (c.name === 'thead' || c.name === 'tbody' || c.name === 'tfoot') collect(c);
      }
    };
    collect(n);
    if (this.inline) {
      for (const r of rows) {
        const cells = r.children.filter((c): c is El => typeof c !== 'string' && (c.name === 'td' || c.name === 'th'));
        cells.forEach((c, k) => {
          if (k > 0) this.runs.push('<w:r><w:tab/></w:r>');
          this.inlineNodes(c.children, c.name === 'th' ? { ...st, b: true } : st);
        });
        this.paragraph();
      }
      return;
    }
    const grid = Math.max(
      1,
      ...rows.map((r) => r.children.filter((c) => typeof c !== 'string' && (c.name === 'td' || c.name === 'th')).length),
    );
    const width = Math.floor(9000 / grid);
    const border = (side: string): string => `<w:${side} w:val="single" w:sz="4" w:space="0" w:color="auto"/>`;
    let xml = `<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/><w:tblBorders>${['top', 'left', 'bottom', 'right', 'insideH', 'insideV'].map(border).join('')}</w:tblBorders><w:tblLook w:val="04A0"/></w:tblPr>`;
    xml += `<w:tblGrid>${`<w:gridCol w:w="${width}"/>`.repeat(grid)}</w:tblGrid>`;
    for (const r of rows) {
      xml += '<w:tr>';
      let cells = 0;
      for (const c of r.children) {
        if (typeof c === 'string' || (c.name !== 'td' && c.name !== 'th')) continue;
        cells++;
        const span = Math.max(1, Math.min(grid, Number(c.attrs.get('colspan') ?? 1) || 1));
        const sub = new Writer({ ...this.env, paraProps: '' }, false);
        sub.blockChildren(c.children, c.name === 'th' ? { ...st, b: true } : st, []);
        const body = sub.blocks.join('');
        xml += `<w:tc><w:tcPr><w:tcW w:w="${width * span}" w:type="dxa"/>${span > 1 ? `<w:gridSpan w:val="${span}"/>` : ''}</w:tcPr>${body.endsWith('</w:p>') ? body : `${body}<w:p/>`}</w:tc>`;
      }
      if (cells === 0) xml += `<w:tc><w:tcPr><w:tcW w:w="${width}" w:type="dxa"/></w:tcPr><w:p/></w:tc>`;
      xml += '</w:tr>';
    }
    this.blocks.push(`${xml}</w:tbl>`);
  }
}

/** Block mode: paragraphs and tables replacing the tag's paragraph (at least one paragraph). */
export function htmlToBlocks(html: string, env: HtmlEnv, sectPr: string): string {
  const w = new Writer(env, false);
  w.blockChildren(parseHtml(html), {}, []);
  if (w.blocks.length === 0 || !(w.blocks[w.blocks.length - 1] ?? '').startsWith('<w:p>')) w.paragraph([], true);
  let out = w.blocks.join('');
  if (sectPr !== '') {
    // The tag paragraph's section break stays on the last paragraph.
    const last = out.lastIndexOf('<w:p>');
    const head = out.slice(0, last);
    const tail = out.slice(last);
    out =
      head +
      (tail.startsWith('<w:p><w:pPr>')
        ? tail.replace('</w:pPr>', `${sectPr}</w:pPr>`)
        : tail.replace('<w:p>', `<w:p><w:pPr>${sectPr}</w:pPr>`));
  }
  return out;
}

/** Inline mode: runs (and hyperlinks) for the inside of the tag's paragraph; blocks become line breaks. */
export function htmlToRuns(html: string, env: HtmlEnv): string {
  const w = new Writer(env, true);
  w.blockChildren(parseHtml(html), {}, []);
  return w.blocks.join('');
}

/**
 * Row bookkeeping for xlsx row loops: every rendered row records which template row it came
 * from, so references elsewhere in the workbook (formulas, merged cells, dimension, defined
 * names, tables, conditional formats) can be moved to where their rows ended up.
 */

export class RowMap {
  /** Template row -> output rows, in order of emission. */
  readonly occurrences = new Map<number, number[]>();
  lastOrig = 0;
  lastOut = 0;
  maxOut = 0;
  /** Template rows removed by empty loops, pending until the next emitted row. */
  pendingRemoved = 0;
  /** Current template row and output row, for formulas inside the row. */
  curOrig = 0;
  curOut = 0;
  changed = false;
  /** Template rows of the repeated group being rendered (formulas inside it follow the copy). */
  group: [number, number] | null = null;
  /** Template row ranges removed by empty loops. */
  readonly removedRanges: Array<[number, number]> = [];
  private sorted: number[] | null = null;

  /** Output row number for the next occurrence of template row `orig`. */
  next(orig: number): number {
    let out: number;
    if (orig > this.lastOrig) out = this.lastOut + (orig - this.lastOrig) - this.pendingRemoved;
    else out = this.lastOut + 1;
    if (out <= this.lastOut) out = this.lastOut + 1;
    this.pendingRemoved = 0;
    if (out !== orig) this.changed = true;
    this.lastOrig = Math.max(orig, this.lastOrig);
    this.lastOut = out;
    if (out > this.maxOut) this.maxOut = out;
    this.curOrig = orig;
    this.curOut = out;
    let occ = this.occurrences.get(orig);
    if (occ === undefined) {
      occ = [];
      this.occurrences.set(orig, occ);
    }
    occ.push(out);
    this.sorted = null;
    return out;
  }

  /** Template rows first..last removed by a loop that rendered nothing. */
  removed(first: number, last: number): void {
    this.pendingRemoved += last - first + 1;
    this.changed = true;
    this.removedRanges.push([first, last]);
  }

  /** A template row that a loop removed and that was never rendered. */
  gone(r: number): boolean {
    if (this.removedRanges.length === 0 || this.occurrences.has(r)) return false;
    return this.removedRanges.some(([a, b]) => r >= a && r <= b);
  }

  /**
   * Like Excel deleting rows: a range end on a removed row moves to the nearest remaining row
   * inside the range; -1 when nothing of it remains (a single removed row, or a range of them).
   */
  mapLive(r: number, which: 'first' | 'last', single: boolean): number {
    if (!this.gone(r)) return this.map(r, which);
    if (single) return -1;
    let k = r;
    // Bounded by the removed ranges: rows beyond them are not gone.
    while (this.gone(k)) k += which === 'first' ? 1 : -1;
    if (k < 1) return -1;
    return this.map(k, which);
  }

  /** Where template row `r` ended up: its first or last copy, or shifted like its neighbours. */
  map(r: number, which: 'first' | 'last'): number {
    const occ = this.occurrences.get(r);
    if (occ !== undefined && occ.length > 0) return which === 'first' ? (occ[0] ?? r) : (occ[occ.length - 1] ?? r);
    if (this.sorted === null) this.sorted = [...this.occurrences.keys()].sort((a, b) => a - b);
    const s = this.sorted;
    let lo = 0;
    let hi = s.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((s[mid] ?? 0) < r) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (best < 0) return r;
    const prev = s[best] ?? 0;
    const prevOcc = this.occurrences.get(prev) ?? [prev];
    return (prevOcc[prevOcc.length - 1] ?? prev) + (r - prev);
  }

  /**
   * A reference in a formula of the row being rendered. Inside a repeated group, a relative row follows
   * the current copy (Excel filling the row down); an absolute (`$`) row stays on its row, and the end of
   * a range grows to the row's last copy (Excel inserting the copies inside the range): `SUM($D$2:D2)`
   * is a running total, `D2/SUM($D$2:$D$2)` a share of the whole. Rows not rendered yet (below, or
   * later in the group) are only known once the sheet is done: a placeholder that `resolveDeferred`
   * replaces.
   */
  mapInRow(r: number, which: 'first' | 'last', single = false, absolute = false): number | string {
    const g = this.group;
    if (g !== null && r >= g[0] && r <= g[1] && this.curOrig >= g[0] && this.curOrig <= g[1]) {
      return absolute ? deferRow(r, which, single) : this.curOut + (r - this.curOrig);
    }
    if (r === this.curOrig) return this.curOut;
    if (r > this.lastOrig) return deferRow(r, which, single);
    return this.mapLive(r, which, single);
  }

  /** Replaces the placeholders of `mapInRow` once every row of the sheet is placed. */
  resolveDeferred(xml: string): string {
    if (xml.indexOf(DEFER) < 0) return xml;
    return xml.replace(DEFERRED_REF, (m: string, c1: string, r1: string, c2: string | undefined, r2: string | undefined) => {
      if (m.indexOf(DEFER) < 0) return m;
      const end = (spec: string, range: boolean): number => {
        const d = /^\u0001(\d+)([fl])([01])\u0001$/.exec(spec);
        if (d === null) return Number(spec);
        return this.mapLive(Number(d[1]), d[2] === 'l' ? 'last' : 'first', !range && d[3] === '1');
      };
      const a = end(r1, c2 !== undefined);
      if (c2 === undefined || r2 === undefined) return a < 0 ? '#REF!' : `${c1}${a}`;
      const b = end(r2, true);
      return a < 0 || b < 0 || a > b ? '#REF!' : `${c1}${a}:${c2}${b}`;
    });
  }
}

const DEFER = '\u0001';
const ROW_OR_DEFERRED = '(\\d+|\u0001\\d+[fl][01]\u0001)';
const DEFERRED_REF = new RegExp(`(\\$?[A-Z]{1,3}\\$?)${ROW_OR_DEFERRED}(?::(\\$?[A-Z]{1,3}\\$?)${ROW_OR_DEFERRED})?`, 'g');

function deferRow(r: number, which: 'first' | 'last', single: boolean): string {
  return `${DEFER}${r}${which === 'last' ? 'l' : 'f'}${single ? 1 : 0}${DEFER}`;
}

export function colToNum(col: string): number {
  let n = 0;
  for (let i = 0; i < col.length; i++) n = n * 26 + (col.charCodeAt(i) - 64);
  return n;
}

export function numToCol(n: number): string {
  let s = '';
  while (n > 0) {
    const m = (n - 1) % 26;
    s = String.fromCharCode(65 + m) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

/**
 * Output row of template row `r` (range start `first`, end `last`); -1 when the row is gone. `absolute`:
 * the row is written with `$`. A string is written as the row as is (a placeholder resolved later).
 */
export type RowMapper = (r: number, which: 'first' | 'last', single?: boolean, absolute?: boolean) => number | string;
/** Row mapper of a sheet named in a reference (`'Sales Data'!E5`, `Data!A1`), or undefined to leave it. */
export type SheetMapper = (sheet: string) => RowMapper | undefined;

// String literals, and references qualified with a sheet name (quoted or not).
const QUALIFIED =
  /"(?:[^"]|"")*"|(?:'((?:[^']|'')+)'|([\p{L}_\\][\p{L}\p{N}_.]*))!(\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?)(?![\d(\p{L}_])/gu;

/**
 * Rewrites the row numbers of A1 references in a formula or range list, the way Excel moves them
 * when rows are inserted: the start of a range maps to the first copy of its row, the end (after
 * ':') to the last copy, so totals cover every repeated row. Unqualified references use `mapRow`
 * (left alone when null); references naming a sheet use that sheet's mapper from `sheets`.
 * References into another workbook (`[1]Sheet!A1`) and 3-D references (`A:B!A1`) are left alone.
 */
export function rewriteRefs(text: string, mapRow: RowMapper | null, sheets?: SheetMapper): string {
  if (mapRow === null && (sheets === undefined || text.indexOf('!') < 0)) return text;
  let out = '';
  let pos = 0;
  for (const m of text.matchAll(QUALIFIED)) {
    out += mapRow === null ? text.slice(pos, m.index) : rewritePlain(text.slice(pos, m.index), mapRow);
    pos = m.index + m[0].length;
    const range = m[3];
    const prev = m.index > 0 ? text.charAt(m.index - 1) : '';
    const mapper =
      range === undefined || sheets === undefined || prev === ']' || prev === ':' || /[\p{L}\p{N}_.]/u.test(prev)
        ? undefined
        : sheets(m[1] !== undefined ? m[1].replace(/''/g, "'") : (m[2] ?? ''));
    out += mapper === undefined || range === undefined ? m[0] : m[0].slice(0, m[0].length - range.length) + rewritePlain(range, mapper);
  }
  return out + (mapRow === null ? text.slice(pos) : rewritePlain(text.slice(pos), mapRow));
}

// A1 reference or range (`A1`, `$A$1:$B$9`), optionally absolute; not followed by '(' (LOG10(...)).
const REF_OR_RANGE = /(\$?)([A-Z]{1,3})(\$?)([1-9]\d{0,6})(?::(\$?)([A-Z]{1,3})(\$?)([1-9]\d{0,6}))?(?![\d(A-Za-z_])/g;

function rewritePlain(text: string, mapRow: RowMapper): string {
  return text.replace(
    REF_OR_RANGE,
    (
      m,
      d1: string,
      c1: string,
      d2: string,
      r1: string,
      d3: string | undefined,
      c2: string | undefined,
      d4: string | undefined,
      r2: string | undefined,
      offset: number,
      whole: string,
    ) => {
      const prev = offset > 0 ? whole.charAt(offset - 1) : '';
      if (/[A-Za-z_\d.]/.test(prev)) return m;
      if (c2 === undefined || r2 === undefined) {
        const row = mapRow(Number(r1), prev === ':' ? 'last' : 'first', true, d2 === '$');
        return typeof row === 'number' && row < 0 ? '#REF!' : `${d1}${c1}${d2}${row}`;
      }
      // A range written end-first (`O2:O1`, selected upwards) is the same range to Excel: map it start-first.
      if (Number(r1) > Number(r2)) [d2, r1, d4, r2] = [d4 ?? '', r2, d2, r1];
      const a = mapRow(Number(r1), 'first', false, d2 === '$');
      const b = mapRow(Number(r2), 'last', false, d4 === '$');
      // Every row of the range was removed (an empty loop): Excel's #REF!, never a reference that
      // silently points at other rows (or at the formula's own cell).
      if (typeof a === 'number' && typeof b === 'number' && (a < 0 || b < 0 || a > b)) return '#REF!';
      return `${d1}${c1}${d2}${a}:${d3 ?? ''}${c2}${d4 ?? ''}${b}`;
    },
  );
}

/**
 * Same, for a space-separated list of ranges (sqref of conditional formats and validations): like
 * Excel inserting rows, a range over a repeated row grows to cover every copy (one range, not one
 * per copy).
 */
export function rewriteSqref(sqref: string, rows: RowMap): string {
  return sqref
    .split(/\s+/)
    .filter((s) => s !== '')
    .map((range) => {
      const m = /^(\$?[A-Z]{1,3}\$?)(\d+)(?::(\$?[A-Z]{1,3}\$?)(\d+))?$/.exec(range);
      if (!m) return rewriteRefs(range, (r, w) => rows.map(r, w));
      const a = rows.mapLive(Number(m[2]), 'first', false);
      const b = rows.mapLive(Number(m[4] ?? m[2]), 'last', false);
      // Cells all removed by an empty loop: the range goes (the caller drops an empty list).
      if (a < 0 || b < 0 || a > b) return '';
      // A single cell in a repeated row becomes a range over its copies.
      return m[3] === undefined && a === b ? `${m[1]}${a}` : `${m[1]}${a}:${m[3] ?? m[1]}${b}`;
    })
    .filter((r) => r !== '')
    .join(' ');
}

/** A range wholly inside rows that were repeated is repeated with them (merged cells, formats). */
export function expandRange(range: string, rows: RowMap): string[] {
  const m = /^(\$?[A-Z]{1,3}\$?)(\d+)(?::(\$?[A-Z]{1,3}\$?)(\d+))?$/.exec(range);
  if (!m) return [rewriteRefs(range, (r, w) => rows.map(r, w))];
  const r1 = Number(m[2]);
  const r2 = m[4] === undefined ? r1 : Number(m[4]);
  const o1 = rows.occurrences.get(r1) ?? [];
  const o2 = rows.occurrences.get(r2) ?? [];
  if (o1.length > 1 && o1.length === o2.length) {
    const out: string[] = [];
    for (let k = 0; k < o1.length; k++) {
      out.push(m[3] === undefined ? `${m[1]}${o1[k]}` : `${m[1]}${o1[k]}:${m[3]}${o2[k]}`);
    }
    return out;
  }
  const a = rows.mapLive(r1, 'first', false);
  const b = rows.mapLive(r2, 'last', false);
  // A merged range inside rows an empty loop removed goes with them.
  if (a < 0 || b < 0 || a > b) return [];
  if (m[3] === undefined) return [`${m[1]}${a}`];
  return [`${m[1]}${a}:${m[3]}${b}`];
}

// ---- shared formulas ----

// Pieces of a formula that are not references: string literals and quoted sheet names.
const LITERALS = /"(?:[^"]|"")*"|'(?:[^']|'')*'/g;
// A cell reference, or a whole-column / whole-row range (`A:C`, `$2:$5`), not a function name
// (`LOG10(`), a name (`Rate1x`) or an unquoted sheet name (`Q1!`).
const SHIFTABLE =
  /(?<![A-Za-z_\d.$])(?:(\$?)([A-Z]{1,3})(\$?)([1-9]\d{0,6})|(\$?)([A-Z]{1,3}):(\$?)([A-Z]{1,3})|(\$?)([1-9]\d{0,6}):(\$?)([1-9]\d{0,6}))(?![\d(A-Za-z_!])/g;

/**
 * The formula a follower cell of a shared formula stands for: the master's formula with its
 * relative references moved by the follower's offset (absolute `$` parts stay), as Excel does.
 */
export function shiftFormula(formula: string, dRow: number, dCol: number): string {
  if (dRow === 0 && dCol === 0) return formula;
  const col = (abs: string, c: string): string => {
    if (abs === '$') return `$${c}`;
    const n = colToNum(c) + dCol;
    return n < 1 || n > 16384 ? '#REF!' : numToCol(n);
  };
  const row = (abs: string, r: string): string => {
    if (abs === '$') return `$${r}`;
    const n = Number(r) + dRow;
    return n < 1 || n > 1048576 ? '#REF!' : String(n);
  };
  const shift = (seg: string): string =>
    seg.replace(
      SHIFTABLE,
      (
        m,
        a1?: string,
        c1?: string,
        a2?: string,
        r1?: string,
        b1?: string,
        cc1?: string,
        b2?: string,
        cc2?: string,
        d1?: string,
        rr1?: string,
        d2?: string,
        rr2?: string,
      ) => {
        let out: string;
        if (c1 !== undefined && r1 !== undefined) out = `${col(a1 ?? '', c1)}${row(a2 ?? '', r1)}`;
        else if (cc1 !== undefined && cc2 !== undefined) out = `${col(b1 ?? '', cc1)}:${col(b2 ?? '', cc2)}`;
        else if (rr1 !== undefined && rr2 !== undefined) out = `${row(d1 ?? '', rr1)}:${row(d2 ?? '', rr2)}`;
        else return m;
        return out.includes('#REF!') ? '#REF!' : out;
      },
    );
  let out = '';
  let pos = 0;
  for (const m of formula.matchAll(LITERALS)) {
    out += shift(formula.slice(pos, m.index)) + m[0];
    pos = m.index + m[0].length;
  }
  return out + shift(formula.slice(pos));
}

/**
 * Writes every shared formula of a sheet out as plain formulas (master and followers). A shared
 * formula names its cells by a fixed range (`ref`) and an index (`si`); once rows are repeated or
 * moved, copies of a master would share an index and the range would point at other cells. As
 * plain formulas, each cell's references follow the rows like any other formula.
 */
export function unshareFormulas(xml: string): string {
  if (xml.indexOf('t="shared"') < 0) return xml;
  const masters = new Map<string, { col: number; row: number; text: string }>();
  // A self-closing cell (`<c r="C2" s="0"/>`, Excel's formatted blank) is a cell of its own, never the
  // start of the next one's body.
  return xml.replace(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g, (cell, attrs: string, body: string | undefined) => {
    if (body === undefined || body.indexOf('t="shared"') < 0) return cell;
    const ref = /\sr="([A-Z]{1,3})(\d+)"/.exec(attrs);
    if (ref === null) return cell;
    const col = colToNum(ref[1] ?? 'A');
    const row = Number(ref[2]);
    const next = body.replace(
      /<f\b([^>]*)\bt="shared"([^>]*?)(?:\/>|>([^<]*)<\/f>)/,
      (f, x: string, y: string, text: string | undefined) => {
        const other = `${x} ${y}`;
        const si = /\bsi="(\d+)"/.exec(other)?.[1];
        if (si === undefined) return f;
        // Keep the other attributes (aca, ca…), drop the sharing ones.
        const rest = other
          .replace(/\s*\b(?:si|ref)="[^"]*"/g, '')
          .replace(/\s+/g, ' ')
          .trim();
        const open = rest === '' ? '<f>' : `<f ${rest}>`;
        if (text !== undefined && text !== '') {
          masters.set(si, { col, row, text });
          return `${open}${text}</f>`;
        }
        const m = masters.get(si);
        if (m === undefined) return f;
        return `${open}${escapeXmlText(shiftFormula(decodeXmlText(m.text), row - m.row, col - m.col))}</f>`;
      },
    );
    return next === body ? cell : `<c${attrs}>${next}</c>`;
  });
}

function decodeXmlText(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function escapeXmlText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

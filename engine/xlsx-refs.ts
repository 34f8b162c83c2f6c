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

  /** Inside a repeated group, references to the group's rows follow the current copy. */
  mapInRow(r: number, which: 'first' | 'last', single = false): number {
    const g = this.group;
    if (g !== null && r >= g[0] && r <= g[1] && this.curOrig >= g[0] && this.curOrig <= g[1]) return this.curOut + (r - this.curOrig);
    if (r === this.curOrig) return this.curOut;
    if (r > this.lastOrig) return r + (this.curOut - this.curOrig);
    return this.mapLive(r, which, single);
  }
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

/** Output row of template row `r` (range start `first`, end `last`); -1 when the row is gone. */
export type RowMapper = (r: number, which: 'first' | 'last', single?: boolean) => number;
/** Row mapper of a sheet named in a reference (`'Sales Data'!E5`, `Data!A1`), or undefined to leave it. */
export type SheetMapper = (sheet: string) => RowMapper | undefined;

// String literals, and references qualified with a sheet name (quoted or not).
const QUALIFIED = /"(?:[^"]|"")*"|(?:'((?:[^']|'')+)'|([\p{L}_\\][\p{L}\p{N}_.]*))!(\$?[A-Z]{1,3}\$?\d+(?::\$?[A-Z]{1,3}\$?\d+)?)(?![\d(\p{L}_])/gu;

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
    const mapper = range === undefined || sheets === undefined || prev === ']' || prev === ':' || /[\p{L}\p{N}_.]/u.test(prev) ? undefined : sheets(m[1] !== undefined ? m[1].replace(/''/g, "'") : (m[2] ?? ''));
    out += mapper === undefined || range === undefined ? m[0] : m[0].slice(0, m[0].length - range.length) + rewritePlain(range, mapper);
  }
  return out + (mapRow === null ? text.slice(pos) : rewritePlain(text.slice(pos), mapRow));
}

// A1 reference or range (`A1`, `$A$1:$B$9`), optionally absolute; not followed by '(' (LOG10(...)).
const REF_OR_RANGE = /(\$?)([A-Z]{1,3})(\$?)([1-9]\d{0,6})(?::(\$?)([A-Z]{1,3})(\$?)([1-9]\d{0,6}))?(?![\d(A-Za-z_])/g;

function rewritePlain(text: string, mapRow: RowMapper): string {
  return text.replace(REF_OR_RANGE, (m, d1: string, c1: string, d2: string, r1: string, d3: string | undefined, c2: string | undefined, d4: string | undefined, r2: string | undefined, offset: number, whole: string) => {
    const prev = offset > 0 ? whole.charAt(offset - 1) : '';
    if (/[A-Za-z_\d.]/.test(prev)) return m;
    if (c2 === undefined || r2 === undefined) {
      const row = mapRow(Number(r1), prev === ':' ? 'last' : 'first', true);
      return row < 0 ? '#REF!' : `${d1}${c1}${d2}${row}`;
    }
    const a = mapRow(Number(r1), 'first', false);
    const b = mapRow(Number(r2), 'last', false);
    // Every row of the range was removed (an empty loop): Excel's #REF!, never a reference that
    // silently points at other rows (or at the formula's own cell).
    if (a < 0 || b < 0 || a > b) return '#REF!';
    return `${d1}${c1}${d2}${a}:${d3 ?? ''}${c2}${d4 ?? ''}${b}`;
  });
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

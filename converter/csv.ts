// csv output that a spreadsheet opens as data, not as formulas (issue 25 §3; OWASP "CSV Injection"): a
// cell whose text begins with = + - @, a tab, a carriage return or a line feed is read by Excel, LibreOffice and
// Google Sheets as a formula (`=HYPERLINK(...)`, `=cmd|' /C calc'!A0`, `@SUM(...)`, `-2+3+cmd|...`). Such a
// cell is written as text: prefixed with a single quote and quoted. A number keeps its form (-5, +3,
// -1,234.50, -1 234,5, -12%, -1E+05 stay numbers), and a lone - or + (a placeholder, never a formula)
// stays as it is. CSV_ESCAPE_FORMULAS=false turns this off.
//
// The file is rewritten in its own encoding without decoding it whole: every character that matters here
// (quote, separator, line ends, the triggers, the quote prefix) is ASCII, which every supported encoding
// writes as its one-byte (or, in UTF-16, one-unit) self, and which no multi-byte UTF-8 sequence contains.
import { ConvertError } from './errors.ts';

const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const LF = 0x0a;
const CR = 0x0d;
/** A quoted cell may also begin with a line feed: a CR that a cell's value began with reaches LibreOffice
 *  as LF (XML reads CR as LF), and is exported so. */
const TRIGGERS = new Set([0x3d /* = */, 0x2b /* + */, 0x2d /* - */, 0x40 /* @ */, 0x09, CR, LF]);

/** Encodings TextDecoder knows, by the names planConversion accepts (CSV_ENCODINGS); ibm850/ibm437 it does not. */
const DECODER_LABEL: Record<string, string> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'utf-16': 'utf-16le',
  'utf-16le': 'utf-16le',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  latin1: 'windows-1252',
  'iso-8859-15': 'iso-8859-15',
  'us-ascii': 'windows-1252',
  ascii: 'windows-1252',
  'windows-1250': 'windows-1250',
  'windows-1251': 'windows-1251',
  'iso-8859-2': 'iso-8859-2',
  macintosh: 'macintosh',
};

const isUtf16 = (encoding: string) => encoding === 'utf-16' || encoding === 'utf-16le';

/** The separator as the code units of the encoding; undefined when it cannot be found (a non-ASCII
 *  separator in an encoding TextDecoder does not know). */
function separatorUnits(separator: string, encoding: string): number[] | undefined {
  const code = separator.codePointAt(0) ?? 0x2c;
  if (isUtf16(encoding)) return Array.from({ length: separator.length }, (_, k) => separator.charCodeAt(k));
  if (code < 0x80) return [code];
  if (encoding === 'utf-8' || encoding === 'utf8') return [...new TextEncoder().encode(separator)];
  const label = DECODER_LABEL[encoding];
  if (!label) return undefined;
  const decoder = new TextDecoder(label);
  for (let b = 0x80; b < 0x100; b++) if (decoder.decode(new Uint8Array([b])) === separator) return [b];
  return undefined;
}

/** Refuses, before anything is converted, a separator the escaping could not find in the output. */
export function checkCsvEscapable(separator: string, encoding: string): void {
  if (!separatorUnits(separator, encoding)) {
    throw new ConvertError(
      'BAD_OPTIONS',
      `csv separator '${separator}' cannot be used with encoding ${encoding} while formulas are escaped (CSV_ESCAPE_FORMULAS); use an ASCII separator`,
    );
  }
}

/** Numbers as a spreadsheet shows them: sign, digits with group separators, decimals, exponent, percent. */
const NUMBER = /^[+-]?(?:\d+(?:[.,'\u00a0\u202f ]\d+)*(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?\s?%?$/;

/**
 * The csv with every cell that a spreadsheet would run as a formula written as text ('-prefixed, quoted).
 * `encoding` and `separator` are the export's (planConversion's names); the output keeps both, and a
 * UTF-16 byte order mark.
 */
export function escapeCsvFormulas(csv: Uint8Array, separator: string, encoding: string): Uint8Array {
  const enc = encoding.trim().toLowerCase();
  const sep = separatorUnits(separator, enc);
  if (!sep) throw new ConvertError('BAD_OPTIONS', `csv separator '${separator}' cannot be found in ${enc} output`);
  const wide = isUtf16(enc);
  const units: Uint8Array | Uint16Array = wide
    ? new Uint16Array(csv.buffer.slice(csv.byteOffset, csv.byteOffset + (csv.byteLength & ~1)))
    : csv;
  const decoder = new TextDecoder(DECODER_LABEL[enc] ?? 'windows-1252');
  const text = (from: number, to: number): string => decoder.decode(wide ? csv.subarray(from * 2, to * 2) : csv.subarray(from, to));
  const atSeparator = (p: number) => sep.every((u, k) => units[p + k] === u);
  // The output: runs of the input kept as they are, and the escaped cells.
  const pieces: ArrayLike<number>[] = [];
  let copyFrom = 0;
  const n = units.length;
  let i = wide && units[0] === 0xfeff ? 1 : 0;
  while (i < n) {
    const start = i;
    let contentFrom = i;
    let contentTo: number;
    if (units[i] === QUOTE) {
      let j = i + 1;
      for (; j < n; j++) {
        if (units[j] !== QUOTE) continue;
        if (units[j + 1] === QUOTE) j++;
        else break;
      }
      contentFrom = i + 1;
      contentTo = Math.min(j, n);
      i = Math.min(j + 1, n);
    } else {
      while (i < n && units[i] !== LF && units[i] !== CR && !atSeparator(i)) i++;
      contentTo = i;
    }
    const first = units[contentFrom];
    const length = contentTo - contentFrom;
    if (
      first !== undefined &&
      length > 0 &&
      TRIGGERS.has(first) &&
      !(length === 1 && (first === 0x2d || first === 0x2b)) &&
      !NUMBER.test(text(contentFrom, contentTo))
    ) {
      pieces.push(units.subarray(copyFrom, start), [QUOTE, APOSTROPHE]);
      if (units[start] === QUOTE) pieces.push(units.subarray(contentFrom, contentTo));
      else {
        // An unquoted cell holds no quote in a well-formed file; one that does gets it doubled.
        const cell = Array.from(units.subarray(contentFrom, contentTo));
        pieces.push(cell.flatMap((u) => (u === QUOTE ? [QUOTE, QUOTE] : [u])));
      }
      pieces.push([QUOTE]);
      copyFrom = i;
    }
    // What follows the cell: a separator (another cell follows), line ends (a new record), or the end.
    if (i < n && atSeparator(i)) {
      i += sep.length;
      if (i >= n) break;
    } else {
      while (i < n && (units[i] === CR || units[i] === LF)) i++;
    }
  }
  if (pieces.length === 0) return csv;
  pieces.push(units.subarray(copyFrom, n));
  const total = pieces.reduce((t, p) => t + p.length, 0);
  const joined = wide ? new Uint16Array(total) : new Uint8Array(total);
  let at = 0;
  for (const p of pieces) {
    joined.set(p, at);
    at += p.length;
  }
  return wide ? new Uint8Array(joined.buffer) : (joined as Uint8Array);
}

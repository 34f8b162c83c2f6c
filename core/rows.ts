// The rows of a batch (one document per row), read from a data file as it streams in: a JSON array, JSON
// Lines, CSV (comma, semicolon or tab separated, RFC 4180 quoting), or one JSON value whose list a path
// names (a GraphQL result, an object holding an array). Pure: text in, rows out; the caller streams the
// bytes and decodes them. Used by the batch activities (api -> workflow never sees a row) and by the CLI's
// offline `render --each`.

export type RowsFormat = 'json' | 'jsonl' | 'csv';
export const ROWS_FORMATS: readonly RowsFormat[] = ['json', 'jsonl', 'csv'];

export type Row = Record<string, unknown>;

/** A problem with the data file, in words for the caller (line and row numbers are 1-based, as in the file). */
export class RowsError extends Error {
  override name = 'RowsError';
}

/** The field separators a CSV file may use: the comma, the semicolon (what spreadsheets write where the comma
 *  is the decimal separator, e.g. in most of Europe) and the tab. */
export const CSV_SEPARATORS = [',', ';', '\t'] as const;
export type CsvSeparator = (typeof CSV_SEPARATORS)[number];
export const separatorName = (sep: string): string => (sep === '\t' ? 'tab' : `'${sep}'`);

/** RFC 4180 CSV: quoted fields (with "" for a quote, the separator and line breaks inside), CRLF or LF. */
export function parseCsv(text: string, separator: CsvSeparator = ','): string[][] {
  const rows: string[][] = [];
  const lexer = new CsvLexer(separator);
  lexer.push(text, (cells) => rows.push(cells));
  lexer.end((cells) => rows.push(cells));
  return rows;
}

/**
 * The separator of a CSV file: of comma, semicolon and tab, the one that splits the header into the most
 * columns while every row has as many fields as the header; when none does, the one that splits the header
 * most (the row count check then names the line and the separator). A file of one column is comma-separated.
 * `text` may be the file's beginning only: a last line cut short is not held against a separator.
 */
export function detectCsvSeparator(text: string, complete = true): CsvSeparator {
  let best: { sep: CsvSeparator; columns: number; consistent: boolean } | undefined;
  for (const sep of CSV_SEPARATORS) {
    let rows: string[][];
    try {
      rows = parseCsv(text, sep);
    } catch {
      if (complete) continue;
      rows = [];
    }
    if (!complete && rows.length > 1) rows = rows.slice(0, -1);
    const columns = rows[0]?.length ?? 0;
    const consistent = rows.every((r) => r.length === columns);
    const better = !best || (consistent && !best.consistent) || (consistent === best.consistent && columns > best.columns);
    if (columns > 1 && better) best = { sep, columns, consistent };
  }
  return best?.sep ?? ',';
}

/** A number written plainly (42, -3.5) becomes a number, so filters such as currency and sum work. */
export function csvValue(raw: string): string | number {
  return /^-?(0|[1-9]\d*)(\.\d+)?$/.test(raw) ? Number(raw) : raw;
}

/** One CSV record as an object: `a.b` headers build nested objects. */
export function csvRecord(header: readonly string[], cells: readonly string[]): Row {
  const row: Row = {};
  header.forEach((name, c) => {
    const keys = name.trim().split('.');
    let target = row;
    for (const k of keys.slice(0, -1)) {
      const next = target[k];
      target = (next !== null && typeof next === 'object' ? next : (target[k] = {})) as Row;
    }
    target[keys.at(-1)!] = csvValue(cells[c] ?? '');
  });
  return row;
}

/** The CSV tokenizer, fed in pieces: records are emitted as they complete. Empty lines are skipped. */
class CsvLexer {
  private row: string[] = [];
  private field = '';
  private quoted = false;
  /** The previous piece ended inside a quoted field on a quote: "" or the closing quote, decided next. */
  private pendingQuote = false;
  private pendingCr = false;
  private started = false;
  private readonly separator: string;
  constructor(separator: string) {
    this.separator = separator;
  }

  push(text: string, emit: (cells: string[]) => void): void {
    let i = 0;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (this.pendingCr) {
        this.pendingCr = false;
        if (c === '\n') continue;
      }
      if (this.pendingQuote) {
        this.pendingQuote = false;
        if (c === '"') {
          this.field += '"';
          continue;
        }
        this.quoted = false;
      }
      if (this.quoted) {
        if (c === '"') {
          if (i + 1 < text.length) {
            if (text[i + 1] === '"') {
              this.field += '"';
              i++;
            } else this.quoted = false;
          } else this.pendingQuote = true;
        } else this.field += c;
      } else if (c === '"' && this.field === '') this.quoted = true;
      else if (c === this.separator) {
        this.row.push(this.field);
        this.field = '';
      } else if (c === '\n' || c === '\r') {
        if (c === '\r') this.pendingCr = true;
        this.row.push(this.field);
        this.flush(emit);
      } else this.field += c;
    }
  }

  end(emit: (cells: string[]) => void): void {
    if (this.pendingQuote) {
      this.pendingQuote = false;
      this.quoted = false;
    }
    if (this.quoted) throw new RowsError('CSV: a quoted field is not closed');
    if (this.field !== '' || this.row.length > 0) {
      this.row.push(this.field);
      this.flush(emit);
    }
  }

  private flush(emit: (cells: string[]) => void): void {
    const cells = this.row;
    this.row = [];
    this.field = '';
    if (cells.length === 1 && cells[0] === '') return;
    emit(cells);
  }
}

export interface RowReaderOptions {
  /** Default: sniffed from the first character (`[` a JSON array; `{` JSON Lines, or one JSON value when
   *  `rowsPath` is given; anything else CSV). */
  format?: RowsFormat;
  /** The list inside one JSON value (`data.customers`, `items.0.lines`): the value is read whole, then the
   *  list is taken from it. For a JSON value only. */
  rowsPath?: string;
  /** Where the rows come from, for messages (e.g. `data.urn 1234`). */
  source?: string;
  /** Most rows accepted; one more is a RowsError. */
  maxRows?: number;
  /** Largest row (its JSON text, or its CSV line) in characters. */
  maxRowChars?: number;
}

const DEFAULT_MAX_ROW_CHARS = 1024 * 1024;
/** How much of a CSV file decides its separator (the header and the first lines). */
const CSV_SNIFF_CHARS = 64 * 1024;

/**
 * Reads rows from text given in pieces (`push`, then `end`), each piece's complete rows returned at once, so
 * a caller streaming a large file holds one piece and the rows it has not handed on yet. Every row is an
 * object (a JSON object, or a CSV record keyed by the header).
 */
export class RowReader {
  private format: RowsFormat | undefined;
  private readonly opts: RowReaderOptions;
  private readonly maxRowChars: number;
  private count = 0;
  private line = 1;
  // json (array, streamed): the element being read, and the scanner's state.
  private element = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private arrayState: 'before' | 'in' | 'after' = 'before';
  private collecting = false;
  // json (one value, rowsPath), csv sniffing: text held until it can be read.
  private held = '';
  // jsonl: the line being read.
  private partial = '';
  // csv
  private lexer: CsvLexer | undefined;
  private header: string[] | undefined;
  private separator: CsvSeparator = ',';
  private csvLine = 1;

  constructor(opts: RowReaderOptions = {}) {
    this.opts = opts;
    this.format = opts.format;
    this.maxRowChars = opts.maxRowChars ?? DEFAULT_MAX_ROW_CHARS;
    if (opts.rowsPath !== undefined && opts.format !== undefined && opts.format !== 'json') {
      throw new RowsError(`rowsPath names a list inside one JSON value; a ${opts.format} file is a list of rows already`);
    }
  }

  /** Rows read so far. */
  get rows(): number {
    return this.count;
  }

  get detectedFormat(): RowsFormat | undefined {
    return this.format;
  }

  push(text: string): Row[] {
    const out: Row[] = [];
    if (this.format === undefined) {
      const first = /\S/.exec(text.replace(/^\ufeff/, ''))?.[0];
      if (first === undefined) {
        this.held += text;
        return out;
      }
      this.format = first === '[' || (first === '{' && this.opts.rowsPath !== undefined) ? 'json' : first === '{' ? 'jsonl' : 'csv';
      text = this.held + text;
      this.held = '';
    }
    switch (this.format) {
      case 'json':
        if (this.opts.rowsPath !== undefined) this.hold(text);
        else this.scanArray(text, out);
        break;
      case 'jsonl':
        this.readLines(text, out);
        break;
      case 'csv':
        this.readCsv(text, out, false);
        break;
    }
    return out;
  }

  end(): Row[] {
    const out: Row[] = [];
    const format = this.format ?? (this.opts.rowsPath !== undefined ? 'json' : 'csv');
    if (format === 'json' && this.opts.rowsPath !== undefined) {
      this.fromValue(out);
    } else if (format === 'json') {
      if (this.arrayState === 'before') throw new RowsError(`${this.what()} is empty: a JSON array of objects was expected`);
      if (this.arrayState === 'in')
        throw new RowsError(`${this.what()} is not valid JSON: the array is not closed (the file ends inside it)`);
    } else if (format === 'jsonl') {
      this.readLines('\n', out);
    } else {
      this.readCsv('', out, true);
      if (!this.header) throw new RowsError(`${this.what()} is empty: a CSV file whose first line names the columns was expected`);
    }
    return out;
  }

  private what(): string {
    return this.opts.source ?? 'the data file';
  }

  private add(row: unknown, where: string, out: Row[]): void {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new RowsError(`${this.what()} ${where} is not an object (each row is an object whose fields the template reads)`);
    }
    this.count++;
    if (this.opts.maxRows !== undefined && this.count > this.opts.maxRows) {
      throw new RowsError(`${this.what()} has more than ${this.opts.maxRows} rows (BATCH_MAX_ROWS)`);
    }
    out.push(row as Row);
  }

  private hold(text: string): void {
    this.held += text;
  }

  /** One JSON value, then the list at rowsPath. */
  private fromValue(out: Row[]): void {
    let value: unknown;
    try {
      value = JSON.parse(this.held.replace(/^\ufeff/, ''));
    } catch (err) {
      throw new RowsError(`${this.what()} is not valid JSON: ${(err as Error).message}`);
    }
    this.held = '';
    const path = this.opts.rowsPath ?? '';
    const list = valueAt(value, path);
    if (!Array.isArray(list)) {
      throw new RowsError(
        `rowsPath ${JSON.stringify(path)} of ${this.what()} ${list === undefined ? 'names nothing' : 'is not a list'} (it must name an array of objects)`,
      );
    }
    list.forEach((row, i) => this.add(row, `row ${i + 1} (at ${path}[${i}])`, out));
  }

  /** A JSON array of objects, streamed: each element is cut out at depth 1 and parsed alone. */
  private scanArray(text: string, out: Row[]): void {
    // An element cut by the end of the previous piece goes on from this piece's first character.
    let start = this.collecting ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.line++;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 92 /* \ */) this.escaped = true;
        else if (c === 34 /* " */) this.inString = false;
        continue;
      }
      if (this.arrayState === 'before') {
        if (c === 0xfeff || c === 32 || c === 9 || c === 10 || c === 13) continue;
        if (c !== 91 /* [ */) throw new RowsError(`${this.what()}: a JSON array of objects was expected (line ${this.line})`);
        this.arrayState = 'in';
        this.depth = 1;
        continue;
      }
      if (this.arrayState === 'after') {
        if (c === 32 || c === 9 || c === 10 || c === 13) continue;
        throw new RowsError(`${this.what()}: text after the end of the JSON array (line ${this.line})`);
      }
      if (c === 34) {
        this.inString = true;
        if (start < 0 && this.depth === 1) start = i;
        continue;
      }
      if (c === 123 /* { */ || c === 91 /* [ */) {
        if (this.depth === 1 && start < 0) start = i;
        this.depth++;
      } else if (c === 125 /* } */ || c === 93 /* ] */) {
        this.depth--;
        if (this.depth === 0) {
          if (start >= 0) this.element += text.slice(start, i);
          start = -1;
          this.endElement(out, true);
          this.arrayState = 'after';
        }
      } else if (c === 44 /* , */ && this.depth === 1) {
        if (start >= 0) this.element += text.slice(start, i);
        start = -1;
        this.endElement(out, false);
      } else if (this.depth === 1 && start < 0 && c !== 32 && c !== 9 && c !== 10 && c !== 13) start = i;
    }
    this.collecting = start >= 0;
    if (start >= 0) this.element += text.slice(start);
    if (this.element.length > this.maxRowChars)
      throw new RowsError(`${this.what()}: row ${this.count + 1} is larger than ${this.maxRowChars} characters`);
  }

  private endElement(out: Row[], last: boolean): void {
    const text = this.element.trim();
    this.element = '';
    if (text === '') {
      if (last && this.count === 0) return; // []
      throw new RowsError(`${this.what()}: an empty element in the JSON array after row ${this.count} (line ${this.line})`);
    }
    let row: unknown;
    try {
      row = JSON.parse(text);
    } catch (err) {
      throw new RowsError(`${this.what()}: row ${this.count + 1} is not valid JSON (${(err as Error).message}; near line ${this.line})`);
    }
    this.add(row, `row ${this.count + 1}`, out);
  }

  /** JSON Lines: one object per line; blank lines are skipped. */
  private readLines(text: string, out: Row[]): void {
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      const line = (this.partial + text.slice(from, nl)).replace(/^\ufeff/, '').trim();
      this.partial = '';
      from = nl + 1;
      const n = this.line++;
      if (line === '') continue;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch (err) {
        const hint =
          n === 1 && line.startsWith('{') ? ' (one JSON object per line is expected: for a JSON value, name its list with rowsPath)' : '';
        throw new RowsError(`${this.what()} line ${n} is not valid JSON: ${(err as Error).message}${hint}`);
      }
      this.add(row, `line ${n}`, out);
    }
    this.partial += text.slice(from);
    if (this.partial.length > this.maxRowChars)
      throw new RowsError(`${this.what()} line ${this.line} is longer than ${this.maxRowChars} characters`);
  }

  private readCsv(text: string, out: Row[], end: boolean): void {
    if (!this.lexer) {
      this.held += text;
      if (this.held.length < CSV_SNIFF_CHARS && !end) return;
      this.separator = detectCsvSeparator(this.held, end);
      this.lexer = new CsvLexer(this.separator);
      text = this.held;
      this.held = '';
    }
    const emit = (cells: string[]) => {
      const line = this.csvLine++;
      if (!this.header) {
        this.header = cells;
        return;
      }
      if (cells.length !== this.header.length) {
        throw new RowsError(
          `${this.what()} line ${line}: ${cells.length} fields, the header has ${this.header.length} (separated by ${separatorName(this.separator)}, ` +
            `read from the header; the separator may be ${CSV_SEPARATORS.map(separatorName).join(', ')}; quote a value that contains it)`,
        );
      }
      this.add(csvRecord(this.header, cells), `line ${line}`, out);
    };
    this.lexer.push(text, emit);
    if (end) this.lexer.end(emit);
  }
}

/** The value at a dotted path (`data.customers`, `items.0`); the empty path is the value itself. */
export function valueAt(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split('.').filter((k) => k !== '')) {
    if (v === null || typeof v !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** A dotted path of plain names or indexes (`data.customers`), as rowsPath accepts it. */
export function isRowsPath(path: string): boolean {
  return /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/.test(path) && !/(^|\.)(__proto__|constructor|prototype)(\.|$)/.test(path);
}

/** Reads every row of a whole text (tests, the CLI's small files). */
export function readAllRows(text: string, opts: RowReaderOptions = {}): Row[] {
  const reader = new RowReader(opts);
  return [...reader.push(text), ...reader.end()];
}

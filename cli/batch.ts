// One document per row: rows from a JSON array or a CSV file, a progress indicator, a summary, and
// every failure listed with its row and reason. Shared by `docgen render --each` (the engine, offline)
// and `docgen generate --each` (the running service).
import fs from 'node:fs';
import path from 'node:path';
import { DocgenError } from '../client/errors.ts';
import { ConfigError } from '../config/env.ts';
import { TemplateError } from '../engine/errors.ts';

/** The field separators a CSV file may use: the comma, the semicolon (what spreadsheets write where the comma
 *  is the decimal separator, e.g. in most of Europe) and the tab. */
export const CSV_SEPARATORS = [',', ';', '\t'] as const;
export type CsvSeparator = (typeof CSV_SEPARATORS)[number];
const separatorName = (sep: string) => (sep === '\t' ? 'tab' : `'${sep}'`);

/** RFC 4180 CSV: quoted fields (with "" for a quote, the separator and line breaks inside), CRLF or LF. */
export function parseCsv(text: string, separator: CsvSeparator = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === separator) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (quoted) throw new ConfigError('CSV: a quoted field is not closed');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

/**
 * The separator of a CSV file: of comma, semicolon and tab, the one that splits the header into the most
 * columns while every row has as many fields as the header; when none does, the one that splits the header
 * most (the row count check then names the line and the separator). A file of one column is comma-separated.
 */
export function detectCsvSeparator(text: string): CsvSeparator {
  let best: { sep: CsvSeparator; columns: number; consistent: boolean } | undefined;
  for (const sep of CSV_SEPARATORS) {
    let rows: string[][];
    try {
      rows = parseCsv(text, sep);
    } catch {
      continue;
    }
    const columns = rows[0]?.length ?? 0;
    const consistent = rows.every((r) => r.length === columns);
    const better = !best || (consistent && !best.consistent) || (consistent === best.consistent && columns > best.columns);
    if (columns > 1 && better) best = { sep, columns, consistent };
  }
  return best?.sep ?? ',';
}

/** A number written plainly (42, -3.5) becomes a number, so filters such as currency and sum work. */
function csvValue(raw: string): string | number {
  return /^-?(0|[1-9]\d*)(\.\d+)?$/.test(raw) ? Number(raw) : raw;
}

/** The rows of a data file: a JSON array of objects, or a CSV file whose first line names the columns
 *  (`a.b` headers build nested objects). */
export function readRows(file: string): Record<string, unknown>[] {
  const text = fs.readFileSync(file, 'utf8');
  if (file.toLowerCase().endsWith('.csv')) {
    const separator = detectCsvSeparator(text);
    const [header, ...lines] = parseCsv(text, separator);
    if (!header) throw new ConfigError(`${file}: empty CSV file`);
    return lines.map((cells, i) => {
      if (cells.length !== header.length) {
        throw new ConfigError(
          `${file} line ${i + 2}: ${cells.length} fields, the header has ${header.length} (separated by ${separatorName(separator)}, ` +
            `read from the header; the separator may be ${CSV_SEPARATORS.map(separatorName).join(', ')}; quote a value that contains it)`,
        );
      }
      const row: Record<string, unknown> = {};
      header.forEach((name, c) => {
        const keys = name.trim().split('.');
        let target = row;
        for (const k of keys.slice(0, -1)) target = (target[k] ??= {}) as Record<string, unknown>;
        target[keys.at(-1)!] = csvValue(cells[c]!);
      });
      return row;
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!Array.isArray(data)) throw new ConfigError(`${file}: --each needs a JSON array (one object per document) or a .csv file`);
  data.forEach((row, i) => {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new ConfigError(`${file}: row ${i + 1} is not an object`);
  });
  return data as Record<string, unknown>[];
}

/** Every problem an error carries, each with its location when it has one. */
export function describeError(err: unknown): string[] {
  if (err instanceof TemplateError) {
    return err.errors.map((e) => {
      const loc = e.location ? ` (${[e.location.part, e.location.cell ? `cell ${e.location.cell}` : '', e.location.paragraph !== undefined ? `paragraph ${e.location.paragraph}` : ''].filter(Boolean).join(', ')})` : '';
      return `${e.id}${loc}: ${e.message}`;
    });
  }
  if (err instanceof DocgenError) {
    const head = err.status ? `HTTP ${err.status}` : 'no response';
    return err.innerErrors.length > 0 ? err.innerErrors.map((e) => `${head} ${e.code}: ${e.message}`) : [`${head}: ${err.message}`];
  }
  return [err instanceof Error ? err.message : String(err)];
}

/** A file name for row `index` (1-based): the row's `nameField` value when given, else the number. */
export function rowFileName(row: Record<string, unknown>, index: number, base: string, ext: string, nameField?: string): string {
  const named = nameField !== undefined ? row[nameField] : undefined;
  const stem = named === undefined || named === null || String(named).trim() === '' ? `${base}-${String(index).padStart(3, '0')}` : String(named).trim().replace(/[^\p{L}\p{N}._-]+/gu, '_');
  return `${stem}.${ext}`;
}

export interface BatchResult {
  ok: number;
  failed: { row: number; reasons: string[] }[];
}

/**
 * Runs `job` for every row, `concurrency` at a time, with a progress bar on a terminal (a line per 10 %
 * otherwise), then prints a summary and each failure with its row number (1-based, as in the file).
 */
export async function runBatch(
  rows: Record<string, unknown>[],
  job: (row: Record<string, unknown>, index: number) => Promise<string>,
  opts: { concurrency: number; out: NodeJS.WritableStream & { isTTY?: boolean }; outDir: string },
): Promise<BatchResult> {
  const result: BatchResult = { ok: 0, failed: [] };
  const total = rows.length;
  let done = 0;
  let lastTenth = -1;
  const t0 = Date.now();
  const progress = () => {
    if (opts.out.isTTY) {
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      opts.out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${result.failed.length ? `, ${result.failed.length} failed` : ''}`);
      if (done === total) opts.out.write('\n');
    } else {
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth !== lastTenth) {
        lastTenth = tenth;
        opts.out.write(`${done}/${total} rows${result.failed.length ? `, ${result.failed.length} failed` : ''}\n`);
      }
    }
  };
  progress();
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      try {
        await job(rows[i]!, i + 1);
        result.ok++;
      } catch (err) {
        result.failed.push({ row: i + 1, reasons: describeError(err) });
      }
      done++;
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, total)) }, worker));
  result.failed.sort((a, b) => a.row - b.row);
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  opts.out.write(`${result.ok} of ${total} document(s) written to ${path.resolve(opts.outDir)} in ${secs} s${result.failed.length ? `; ${result.failed.length} failed:` : ''}\n`);
  for (const f of result.failed) for (const reason of f.reasons) opts.out.write(`  row ${f.row}: ${reason}\n`);
  return result;
}

// One document per row: rows from a JSON array or a CSV file, a progress indicator, a summary, and
// every failure listed with its row and reason. Shared by `docgen render --each` (the engine, offline)
// and `docgen generate --each` (the running service).
import fs from 'node:fs';
import path from 'node:path';
import { DocgenError } from '../client/errors.ts';
import { ConfigError } from '../config/env.ts';
import { TemplateError } from '../engine/errors.ts';
import { readAllRows, RowsError } from '../core/rows.ts';

/** The rows of a data file: a JSON array of objects, JSON Lines (.jsonl, .ndjson), or a CSV file whose first
 *  line names the columns (`a.b` headers build nested objects; comma, semicolon or tab separated). The same
 *  reader as a batch's on the service (core/rows.ts). */
export function readRows(file: string): Record<string, unknown>[] {
  const text = fs.readFileSync(file, 'utf8');
  const ext = path.extname(file).toLowerCase();
  const format = ext === '.csv' ? 'csv' : ext === '.jsonl' || ext === '.ndjson' ? 'jsonl' : 'json';
  try {
    if (format === 'json') {
      const first = /\S/.exec(text.replace(/^\ufeff/, ''))?.[0];
      if (first !== undefined && first !== '[')
        throw new RowsError(`${file}: --each needs a JSON array (one object per document), a .jsonl or a .csv file`);
    }
    return readAllRows(text, { format, source: file });
  } catch (err) {
    if (err instanceof RowsError) throw new ConfigError(err.message);
    throw err;
  }
}

/** Every problem an error carries, each with its location when it has one. */
export function describeError(err: unknown): string[] {
  if (err instanceof TemplateError) {
    return err.errors.map((e) => {
      const loc = e.location
        ? ` (${[e.location.part, e.location.cell ? `cell ${e.location.cell}` : '', e.location.paragraph !== undefined ? `paragraph ${e.location.paragraph}` : ''].filter(Boolean).join(', ')})`
        : '';
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
  const stem =
    named === undefined || named === null || String(named).trim() === ''
      ? `${base}-${String(index).padStart(3, '0')}`
      : String(named)
          .trim()
          .replace(/[^\p{L}\p{N}._-]+/gu, '_');
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
  const t0 = Date.now();
  const progress = progressLine(opts.out);
  progress({ done, total, failed: 0 });
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
      progress({ done, total, failed: result.failed.length });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, total)) }, worker));
  result.failed.sort((a, b) => a.row - b.row);
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  opts.out.write(
    `${result.ok} of ${total} document(s) written to ${path.resolve(opts.outDir)} in ${secs} s${result.failed.length ? `; ${result.failed.length} failed:` : ''}\n`,
  );
  for (const f of result.failed) for (const reason of f.reasons) opts.out.write(`  row ${f.row}: ${reason}\n`);
  return result;
}

/** A live progress line: a bar redrawn in place on a terminal, a line per tenth otherwise (logs, CI). */
export function progressLine(
  out: NodeJS.WritableStream & { isTTY?: boolean },
): (p: { done: number; total: number; failed: number; rate?: number; eta?: string }) => void {
  let lastTenth = -1;
  let finished = false;
  return ({ done, total, failed, rate, eta }) => {
    if (finished) return;
    const extra = `${failed ? `, ${failed} failed` : ''}${rate !== undefined && done < total ? `, ${rate.toFixed(1)} rows/s${eta ? `, done by ${eta}` : ''}` : ''}`;
    if (out.isTTY) {
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      out.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${extra}\x1b[K`);
      if (done === total) {
        out.write('\n');
        finished = true;
      }
    } else {
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth !== lastTenth) {
        lastTenth = tenth;
        out.write(`${done}/${total} rows${extra}\n`);
      }
      if (done === total) finished = true;
    }
  };
}

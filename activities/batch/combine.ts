// The combined output (a normal activity on the batch task queue): the zip or merged PDF of every done row in
// row order, written once (its urn is derived from the batch) through generate's one writeAndRecord and
// recorded as a document of the batch; the merged PDF's pages are checked against the rows'.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { batchOperationRun, type BatchRun, batchScratch, combinedOperationId } from '../../core/batch.ts';
import type { BlobRef } from '../../core/blob.ts';
import { callerFailure } from '../../core/failures.ts';
import { setBatchCombined } from '../../store/records/batches.ts';
import { activity, type BatchDeps, beatWhileRunning } from './deps.ts';
import { combinedUrn, rowDocKey } from './ids.ts';
import { mergePdfFiles, PdfMergeError } from './pdf.ts';
import { safeEntryName, uniqueNames, zipStream, type ZipEntry } from './zip.ts';

export interface CombineInput {
  run: BatchRun;
  combined: { format: 'zip' | 'pdf'; name: string; path: string; deliveryMethod: string };
}

export function combining(deps: BatchDeps) {
  async function combineBatch(input: CombineInput): Promise<{ urn: string; name: string; pages?: number }> {
    const { run, combined } = input;
    const ctx = activity();
    const stopBeating = beatWhileRunning(ctx, () => undefined);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-batch-'));
    try {
      const rows = await doneRows(run);
      const outKey = `${batchScratch(run.workflowId)}combined.${combined.format}`;
      let pages: number | undefined;
      let put: { size: number; sha256: string };
      if (combined.format === 'zip') {
        const names = uniqueNames();
        const blobs = deps.blobs;
        const key = (r: number) => rowDocKey(run, r);
        async function* entries(): AsyncGenerator<ZipEntry> {
          for (const r of rows) {
            const inFolder = r.path === 'root' ? '' : r.path.replace(/^root\//, '');
            yield { name: names(safeEntryName(inFolder ? `${inFolder}/${r.name}` : r.name)), bytes: await blobs.get(key(r.row)) };
          }
        }
        put = await deps.blobs.putStream(outKey, zipStream(entries()));
      } else {
        const files: string[] = [];
        for (const r of rows) {
          const file = path.join(dir, `${String(r.row).padStart(7, '0')}.pdf`);
          await pipeline(await deps.blobs.createReadStream(rowDocKey(run, r.row)), fs.createWriteStream(file));
          files.push(file);
        }
        const out = path.join(dir, 'merged.pdf');
        try {
          pages = (await mergePdfFiles(files, out, { workDir: dir, ...(ctx ? { signal: ctx.cancellationSignal } : {}) })).pages;
        } catch (err) {
          if (err instanceof PdfMergeError && !err.retryable)
            throw callerFailure(err.message.includes('qpdf on the worker') ? 'NOT_SUPPORTED' : 'VALIDATION_ERROR', err.message);
          throw err;
        }
        const expected = rows.reduce((n, r) => n + r.pages, 0);
        if (pages !== expected) throw new Error(`the merged PDF has ${pages} pages where the rows have ${expected}`);
        put = await deps.blobs.putStream(outKey, fs.createReadStream(out));
      }
      const source: BlobRef = { key: outKey, ...put, contentType: combined.format === 'zip' ? 'application/zip' : 'application/pdf' };
      // The one write-and-record of every document (activities/groups.ts), under the combined output's own
      // operation id: not metered (its rows were), its pages known from the merge. A retry finds its record.
      const { written } = await deps.writeAndRecord({
        run: batchOperationRun(run, combinedOperationId(run.batchId)),
        urn: combinedUrn(run.batchId),
        source,
        target: { name: combined.name, path: combined.path, fileFormat: combined.format, deliveryMethod: combined.deliveryMethod },
        field: 'combined',
        pages: pages ?? 0,
        metering: 'none',
        end: { uploads: [], scratch: [] },
      });
      await setBatchCombined(deps.db, run.subscriptionId, run.batchId, {
        urn: written.urn,
        name: written.name,
        ...(pages !== undefined ? { pages } : {}),
      });
      return { urn: written.urn, name: written.name, ...(pages !== undefined ? { pages } : {}) };
    } finally {
      stopBeating();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Every done row of the batch, in row order (names and paths as recorded). */
  async function doneRows(run: BatchRun): Promise<{ row: number; name: string; path: string; pages: number }[]> {
    const r = await deps.db.query<{ row_number: number; name: string; path: string; pages: number }>(
      "SELECT row_number, name, path, pages FROM batch_rows WHERE batch_id = $1 AND subscription_id = $2 AND status = 'done' ORDER BY row_number",
      [run.batchId, run.subscriptionId],
    );
    return r.rows.map((x) => ({ row: Number(x.row_number), name: x.name, path: x.path, pages: Number(x.pages) }));
  }

  return { combineBatch };
}

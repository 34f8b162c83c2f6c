// Admission (a local activity of batchAdmission): everything a batch needs before it is accepted, and the
// checks that make a bad request a 400 with nothing queued. The templates copied into the batch's scratch,
// the rows read once as they stream into pages of chunkRows rows (claim check: rows never enter a payload),
// the first rows named and merged as the batch will do them, the batch's row.
import { ApplicationFailure } from '@temporalio/activity';
import { type BatchInput, batchPageKey, type BatchRun, batchScratch, type PreparedBatch, runOf } from '../../core/batch.ts';
import type { BlobRef } from '../../core/blob.ts';
import { innerError, type InnerError, isErrorCode } from '../../core/errors.ts';
import { type Row, RowReader, RowsError } from '../../core/rows.ts';
import { createBatch } from '../../store/records/batches.ts';
import { atLocation, contextOf } from '../locations.ts';
import { type BatchDeps, discard } from './deps.ts';
import { describeFailure, isFinal, type RowSteps } from './rows.ts';

export interface PrepareBatchInput {
  batch: BatchInput;
  /** The batch workflow's id (its scratch prefix). */
  workflowId: string;
  /** How many rows to merge and name before the batch is accepted. */
  checkRows: number;
  maxRows: number;
}

export type PrepareBatchResult = { ok: true; prepared: PreparedBatch } | { ok: false; problems: InnerError[] };

export function admission(deps: BatchDeps, rows: RowSteps) {
  async function prepareBatch(input: PrepareBatchInput): Promise<PrepareBatchResult> {
    const { batch } = input;
    const scratch = batchScratch(input.workflowId);
    const problems: InnerError[] = [];
    const { run: who } = batch;
    try {
      // The batch's own copy of its templates: an upload's retention period (or the sweep) may end
      // before a long batch does, and a drive's template is read once, not per chunk.
      const { relatedItems, ...main } = batch.template;
      const found = await deps.steps.resolveTemplate({ run: who, template: main });
      const template = await copyInto(found, `${scratch}template.${batch.template.fileFormat}`);
      let related: Record<string, BlobRef> | undefined;
      for (const [i, item] of (relatedItems ?? []).entries()) {
        const ref = await deps.steps.resolveTemplate({ run: who, template: item, field: `template.relatedItems[${i}]` });
        (related ??= {})[item.name] = await copyInto(ref, `${scratch}related-${i}.${item.fileFormat}`);
      }
      const xmlTemplate = batch.document.einvoice?.template;
      const einvoiceTemplate = xmlTemplate
        ? await copyInto(
            await deps.steps.resolveTemplate({
              run: who,
              template: { ...xmlTemplate, fileFormat: '' },
              field: 'document.einvoice.template',
            }),
            `${scratch}einvoice-template.xml`,
          )
        : undefined;
      const templates = { template, ...(related ? { related } : {}), ...(einvoiceTemplate ? { einvoiceTemplate } : {}) };
      // The rows: read once, as they stream, into pages of chunkRows rows.
      const source = await rowsSource(batch);
      const first: Row[] = [];
      const rowsTotal = await readIntoPages(source, batch, input.workflowId, input.maxRows, (row) => {
        if (first.length < input.checkRows) first.push(row);
      });
      if (source.key.startsWith(`scratch/`) && !source.key.startsWith(scratch)) await deps.blobs.delete(source.key);
      if (rowsTotal === 0) problems.push(innerError('DATA_INVALID', `data.urn ${batch.data.urn} holds no rows`));
      // The first rows, as the batch will do them (no conversion): name, path, merge.
      const run: BatchRun = runOf(batch, input.workflowId, templates);
      for (const [i, row] of first.entries()) {
        try {
          rows.nameOf(run, row);
          await rows.mergeRow(run, row, undefined);
        } catch (err) {
          if (!isFinal(err)) throw err;
          const f = describeFailure(err);
          problems.push(innerError(f.code, `row ${i + 1}: ${f.message}`));
        }
      }
      if (problems.length === 0) {
        await createBatch(deps.db, {
          id: batch.batchId,
          subscriptionId: who.subscriptionId,
          userId: who.userId,
          workflowId: input.workflowId,
          rowsTotal,
          fileFormat: batch.document.fileFormat,
          deliveryMethod: batch.document.deliveryMethod ?? '',
          ...(batch.combined ? { combinedFormat: batch.combined.format } : {}),
        });
        return {
          ok: true,
          prepared: { rowsTotal, pages: Math.ceil(rowsTotal / batch.tuning.chunkRows), ...templates },
        };
      }
    } catch (err) {
      await discard(deps, scratch);
      if (err instanceof RowsError) return { ok: false, problems: [innerError('DATA_INVALID', err.message)] };
      if (err instanceof ApplicationFailure && err.nonRetryable && isErrorCode(err.type)) {
        const inner = Array.isArray(err.details?.[0]) ? (err.details[0] as InnerError[]) : [innerError(err.type, err.message)];
        return { ok: false, problems: inner };
      }
      throw err;
    }
    await discard(deps, scratch);
    return { ok: false, problems };
  }

  async function copyInto(ref: BlobRef, key: string): Promise<BlobRef> {
    await deps.blobs.copy(ref.key, key);
    // A drive's template was downloaded into the admission's own scratch: that copy goes now.
    if (ref.key.startsWith('scratch/') && ref.key !== key) await deps.blobs.delete(ref.key);
    return { ...ref, key };
  }

  /** The data file (Storage, DriveA, DriveB) or the GraphQL result, as a blob. */
  async function rowsSource(batch: BatchInput): Promise<BlobRef> {
    if (batch.data.loadMethod === 'GraphQL') return deps.steps.loadData({ run: batch.run, data: batch.data });
    // Not loadData for a file: it checks the file is one JSON value, and rows may be JSON Lines or CSV.
    const need = { method: batch.data.loadMethod, capability: 'readData', field: 'data.loadMethod' } as const;
    return atLocation(deps.locations, need, (l) => l.readData!(contextOf(batch.run, batch.data.loadMethod), batch.data.urn));
  }

  /** Streams the rows of `source` into pages (JSON Lines blobs of chunkRows rows); returns the row count. */
  async function readIntoPages(
    source: BlobRef,
    batch: BatchInput,
    workflowId: string,
    maxRows: number,
    seen: (row: Row) => void,
  ): Promise<number> {
    const reader = new RowReader({
      ...(batch.data.rowsFormat ? { format: batch.data.rowsFormat } : {}),
      ...(batch.data.rowsPath !== undefined ? { rowsPath: batch.data.rowsPath } : {}),
      source: `data.urn ${batch.data.urn}`,
      maxRows,
    });
    const size = batch.tuning.chunkRows;
    let page: string[] = [];
    let pageNo = 0;
    const writes: Promise<unknown>[] = [];
    const take = async (rows: Row[]) => {
      for (const row of rows) {
        seen(row);
        page.push(JSON.stringify(row));
        if (page.length === size) {
          writes.push(deps.blobs.put(batchPageKey(workflowId, pageNo++), Buffer.from(`${page.join('\n')}\n`, 'utf8')));
          page = [];
          if (writes.length >= 8) await Promise.all(writes.splice(0));
        }
      }
    };
    const decoder = new TextDecoder('utf-8', { fatal: true });
    try {
      for await (const chunk of await deps.blobs.createReadStream(source.key))
        await take(reader.push(decoder.decode(chunk as Buffer, { stream: true })));
      await take(reader.push(decoder.decode()));
    } catch (err) {
      if (err instanceof TypeError && /encoded data|decode/i.test(err.message))
        throw new RowsError(`data.urn ${batch.data.urn} is not UTF-8 text`);
      throw err;
    }
    await take(reader.end());
    if (page.length > 0) writes.push(deps.blobs.put(batchPageKey(workflowId, pageNo++), Buffer.from(`${page.join('\n')}\n`, 'utf8')));
    await Promise.all(writes);
    return reader.rows;
  }

  return { prepareBatch };
}

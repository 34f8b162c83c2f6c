// The steps of a batch (workflows/batch.ts). Rows never travel through Temporal: admission reads the data
// file once, as it streams, into pages of rows in the batch's scratch (claim check), and each chunk
// activity reads its page and generates its rows one after another, heartbeating the last row done.
//   prepareBatch   (admission, local) the batch's own copy of the templates; rows read into pages and
//                  counted; the first rows merged and named (a problem is the request's 400); the batch row
//   generateBatchChunk (normal activity, batch task queue) per row: name -> merge -> [convert] -> count
//                  pages -> write (the urn is a UUIDv5 of batch and row) -> record entry, document and
//                  metering in one transaction. A row already recorded is skipped, so a retried chunk
//                  resumes after its last row and never writes a row twice.
//   combineBatch   (normal activity) the zip or merged PDF of every done row, written and recorded once
//   finishBatch    (local) the batch's status, its uploads consumed, its scratch removed
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { type BatchInput, batchPageKey, type BatchRun, batchScratch, type PreparedBatch, rowRun, runOf } from '../core/batch.ts';
import type { BlobRef } from '../core/blob.ts';
import { generatedConsumption } from '../core/envelope.ts';
import { type ErrorCode, innerError, type InnerError, isErrorCode } from '../core/errors.ts';
import { callerFailure } from '../core/failures.ts';
import { bytesFormatOf, contentTypeOf, outputFileName } from '../core/formats.ts';
import { type Row, RowReader, RowsError } from '../core/rows.ts';
import { convert, isConvertError, type ConvertOptions } from '../converter/index.ts';
import { LOCATION_CATALOG } from '../connectors/registry.ts';
import { entryOf } from '../core/locations.ts';
import { customProperties } from '../core/save-options.ts';
import { placeProblems } from '../core/target.ts';
import { conversionFailure } from './convert.ts';
import { compileTextPattern, TemplateError, type TextPattern } from '../engine/text-pattern.ts';
import { consumeFiles } from '../store/files.ts';
import { type Batch, batchCancelRequested, type BatchStatus, createBatch, endBatch, getBatch, listBatchRows, recordBatchRowDone, recordBatchRowFailed, recordedRows, setBatchCombined } from '../store/records/batches.ts';
import { countMetering } from '../telemetry/metrics.ts';
import { mergePdfFiles, PdfMergeError } from './batch-pdf.ts';
import { safeEntryName, uniqueNames, zipStream, type ZipEntry } from './batch-zip.ts';
import type { ResolvedActivityDeps } from './deps.ts';
import { atLocation, contextOf } from './locations.ts';
import { mergeBytes } from './merge.ts';
import type { Steps, WriteAndRecordInput, Recorded } from './groups.ts';
import { currentRun } from './scratch.ts';

export interface PrepareBatchInput {
  batch: BatchInput;
  /** The batch workflow's id (its scratch prefix). */
  workflowId: string;
  /** How many rows to merge and name before the batch is accepted. */
  checkRows: number;
  maxRows: number;
}

export type PrepareBatchResult = { ok: true; prepared: PreparedBatch } | { ok: false; problems: InnerError[] };

export interface ChunkInput {
  run: BatchRun;
  page: number;
  /** 1-based number of the page's first row. */
  firstRow: number;
  count: number;
}

export interface ChunkResult {
  done: number;
  failed: number;
  /** The batch's done and failed rows so far (all chunks): progress, and stopAfterFailures. */
  batchDone: number;
  batchFailed: number;
}

export interface CombineInput {
  run: BatchRun;
  combined: { format: 'zip' | 'pdf'; name: string; path: string; deliveryMethod: string };
}

/** Failed rows the summary callback lists. */
const FIRST_FAILURES = 10;

export interface FinishBatchInput {
  subscriptionId: string;
  batchId: string;
  workflowId: string;
  status: Exclude<BatchStatus, 'running'>;
  error?: { code: string; message: string };
  /** The uploads the request named (template, data, related items): consumed now, once. */
  uploads: string[];
}

/** UUIDv5 (RFC 9562) of `name` in `namespace`: a row's document urn, the same whichever attempt writes it. */
export function uuidv5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The urn of row `row`'s document, and of the combined output. */
export const rowUrn = (batchId: string, row: number) => uuidv5(batchId, `row:${row}`);
export const combinedUrn = (batchId: string) => uuidv5(batchId, 'combined');

/** After this many attempts of a chunk, a row that still fails with an unexpected error is recorded as
 *  failed instead of failing the chunk again (one poisoned row must not hold the batch). */
const POISON_ATTEMPT = 3;

function rowDocKey(run: Pick<BatchRun, 'workflowId' | 'document'>, row: number): string {
  return `${batchScratch(run.workflowId)}docs/${String(row).padStart(7, '0')}.${run.document.fileFormat}`;
}

/** Heartbeat and cancellation of the running activity; nothing outside one (tests). */
function activity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

const text = new TextDecoder();

export function batchActivities(deps: ResolvedActivityDeps & { steps: Pick<Steps, 'resolveTemplate' | 'loadData' | 'measure'>; writeAndRecord: (input: WriteAndRecordInput) => Promise<Recorded> }) {
  const patterns = new Map<string, { name: TextPattern; path: TextPattern }>();
  /** Compiled once per worker and batch (the API checked them already). */
  function patternsOf(run: Pick<BatchRun, 'batchId' | 'document'>) {
    let p = patterns.get(run.batchId);
    if (!p) {
      p = { name: compileTextPattern(run.document.name, 'document.name'), path: compileTextPattern(run.document.path, 'document.path') };
      if (patterns.size > 100) patterns.clear();
      patterns.set(run.batchId, p);
    }
    return p;
  }

  /** The row's name and path from the patterns, held to generate's target rules (core/target.ts): the
   *  file-name rule, and the path rule of the location the rows go to (none for combined-only rows). */
  function nameOf(run: BatchRun, row: Row): { name: string; path: string } {
    const p = patternsOf(run);
    const ctx = { locale: run.document.locale, timezone: run.document.timezone };
    const place = { name: p.name.render(row, ctx).trim(), path: p.path.render(row, ctx).trim() };
    const location = run.document.deliveryMethod ? entryOf(LOCATION_CATALOG, run.document.deliveryMethod) : undefined;
    const problems = placeProblems(place, location, 'document');
    if (problems.length > 0) {
      throw callerFailure('VALIDATION_ERROR', `${problems.join('; ')} (this row gives name ${JSON.stringify(place.name.slice(0, 80))}, path ${JSON.stringify(place.path.slice(0, 80))})`);
    }
    // Every row's name and folders against the target's own rules too (SharePoint's reserved names: CON,
    // ~$draft...), as the API checks a single generate's before queueing: refused here, nothing is sent.
    const refused = run.document.deliveryMethod ? deps.locations.get(run.document.deliveryMethod)?.nameProblem?.({ ...place, fileFormat: run.document.fileFormat }) : undefined;
    if (refused) {
      throw callerFailure('VALIDATION_ERROR', `document.${refused.field} ${JSON.stringify(refused.field === 'name' ? run.document.name : run.document.path)} gives ${JSON.stringify(place[refused.field].slice(0, 80))} for this row: ${refused.reason}`);
    }
    return place;
  }

  const templates = new Map<string, { bytes: Uint8Array; related?: Record<string, Uint8Array> }>();
  async function templateOf(run: BatchRun) {
    let t = templates.get(run.template.key);
    if (!t) {
      const related = run.related
        ? Object.fromEntries(await Promise.all(Object.entries(run.related).map(async ([n, ref]) => [n, await deps.blobs.get(ref.key)] as const)))
        : undefined;
      t = { bytes: await deps.blobs.get(run.template.key), ...(related ? { related } : {}) };
      if (templates.size > 20) templates.clear();
      templates.set(run.template.key, t);
    }
    return t;
  }

  /** One row's document: merged, converted when the format differs (its pages are counted as it is written). */
  async function render(run: BatchRun, row: Row, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const bytes = await mergeRow(run, row, signal);
    return run.document.fileFormat !== run.templateFormat ? convertRow(run, bytes, signal) : bytes;
  }

  async function mergeRow(run: BatchRun, row: Row, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const t = await templateOf(run);
    const merged = await mergeBytes(
      deps,
      run.subscriptionId,
      t.bytes,
      Buffer.from(JSON.stringify(row), 'utf8'),
      {
        locale: run.document.locale,
        timezone: run.document.timezone,
        ...(run.variables ? { variables: run.variables } : {}),
        ...(run.embedded ? { embedded: run.embedded } : {}),
        ...(t.related ? { relatedItems: t.related } : {}),
        ...(run.document.strict ? { strict: true } : {}),
      },
      signal,
    );
    return merged.output;
  }

  async function convertRow(run: BatchRun, bytes: Uint8Array, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const save = run.document.saveOptions ?? {};
    const embedded = run.embedded ? customProperties(run.embedded) : undefined;
    const options = {
      from: bytesFormatOf(run.templateFormat),
      to: run.document.fileFormat,
      tenant: run.subscriptionId,
      ...(signal ? { signal } : {}),
      ...(save.pdf ? { pdf: save.pdf } : {}),
      ...(save.csv ? { csv: save.csv } : {}),
      ...(embedded ? { embedded } : {}),
    } as ConvertOptions;
    try {
      return await convert(bytes, options, deps.converter);
    } catch (err) {
      // A single generate's answers (activities/convert.ts): a row over a limit is TEMPLATE_TOO_COMPLEX, a
      // spent budget TOO_MANY_REQUESTS, a crash retried. A batch has no caller's deadline.
      if (isConvertError(err)) throw conversionFailure(err, undefined);
      throw err;
    }
  }

  /** Writes a row's document where the request sends it (same urn on every attempt) and records it, through
   *  generate's own write-and-record (count || write -> record -> the row's scratch file discarded), under the
   *  row's own operation id; then the row's entry. A row without a delivery (combined output only) is
   *  counted and metered with its entry. A crash between the record and the entry makes the next attempt
   *  write the same file again and find its record and metering (idempotent per operation): the entry, and
   *  the batch's counters with it, are written once. */
  async function deliverAndRecord(run: BatchRun, rowNumber: number, names: { name: string; path: string }, source: BlobRef): Promise<void> {
    const d = run.document;
    const who = rowRun(run, rowNumber);
    const scratch = run.keepDocuments ? [] : [source];
    if (d.deliveryMethod) {
      const recorded = await deps.writeAndRecord({
        run: who,
        urn: rowUrn(run.batchId, rowNumber),
        source,
        target: {
          name: names.name,
          path: names.path,
          fileFormat: d.fileFormat,
          deliveryMethod: d.deliveryMethod,
          ...(d.sharing ? { sharing: d.sharing } : {}),
          ...(d.conflict ? { conflict: d.conflict } : {}),
        },
        metering: 'generated',
        end: { uploads: [], scratch },
      });
      await recordBatchRowDone(deps.db, {
        subscriptionId: run.subscriptionId,
        batchId: run.batchId,
        row: rowNumber,
        urn: recorded.written.urn,
        name: recorded.written.name,
        path: recorded.written.path,
        pages: recorded.pages,
      });
      return;
    }
    const pages = await deps.steps.measure({ blob: source, fileFormat: d.fileFormat, subscriptionId: run.subscriptionId });
    const { metered } = await recordBatchRowDone(deps.db, {
      subscriptionId: run.subscriptionId,
      batchId: run.batchId,
      row: rowNumber,
      urn: '',
      name: outputFileName(names.name, d.fileFormat),
      path: names.path,
      pages,
      metering: { operationId: who.operationId, userId: run.userId, consumption: generatedConsumption(pages) },
    });
    countMetering(metered);
  }

  /** A row's failure as the row's entry: the caller's code (and the first inner message), or for an
   *  unexpected error its message under FUNCTION_EXECUTION_ERROR. */
  function describeFailure(err: unknown): { code: ErrorCode; message: string } {
    if (err instanceof ApplicationFailure && isErrorCode(err.type)) {
      const inner = Array.isArray(err.details?.[0]) ? (err.details[0] as InnerError[]) : [];
      return { code: err.type, message: withoutRepeats(err.message, inner.map((e) => e.message)) };
    }
    if (err instanceof TemplateError) return { code: 'TEMPLATE_ERROR', message: err.errors.map((e) => e.message).join('; ') };
    return { code: 'FUNCTION_EXECUTION_ERROR', message: err instanceof Error ? err.message : String(err) };
  }

  /** The failure's message with its inner errors' details, each said once: a detail the message holds
   *  adds nothing, and a detail that repeats the message's end ("...: no value for tag X" and "no value for
   *  tag X (part, place)") replaces that end. */
  function withoutRepeats(outer: string, inner: (string | undefined)[]): string {
    const details = [...new Set(inner.filter((m): m is string => !!m && !outer.includes(m)))];
    if (details.length !== 1) return details.length === 0 ? outer : `${outer}: ${details.join('; ')}`;
    const detail = details[0]!;
    const parts = outer.split(': ');
    for (let k = 0; k < parts.length; k++) {
      if (detail.startsWith(parts.slice(k).join(': '))) return [...parts.slice(0, k), detail].join(': ');
    }
    return `${outer}: ${detail}`;
  }

  const isFinal = (err: unknown) => (err instanceof ApplicationFailure && err.nonRetryable) || err instanceof TemplateError;

  return {
    /** Admission (a local activity of batchAdmission): everything a batch needs before it is accepted, and
     *  the checks that make a bad request a 400 with nothing queued. */
    async prepareBatch(input: PrepareBatchInput): Promise<PrepareBatchResult> {
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
        // The rows: read once, as they stream, into pages of chunkRows rows.
        const source = await rowsSource(batch);
        const first: Row[] = [];
        const rowsTotal = await readIntoPages(source, batch, input.workflowId, input.maxRows, (row) => {
          if (first.length < input.checkRows) first.push(row);
        });
        if (source.key.startsWith(`scratch/`) && !source.key.startsWith(scratch)) await deps.blobs.delete(source.key);
        if (rowsTotal === 0) problems.push(innerError('DATA_INVALID', `data.urn ${batch.data.urn} holds no rows`));
        // The first rows, as the batch will do them (no conversion): name, path, merge.
        const run: BatchRun = runOf(batch, input.workflowId, { template, ...(related ? { related } : {}) });
        for (const [i, row] of first.entries()) {
          try {
            nameOf(run, row);
            await mergeRow(run, row, undefined);
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
          return { ok: true, prepared: { rowsTotal, pages: Math.ceil(rowsTotal / batch.tuning.chunkRows), template, ...(related ? { related } : {}) } };
        }
      } catch (err) {
        await discard(scratch);
        if (err instanceof RowsError) return { ok: false, problems: [innerError('DATA_INVALID', err.message)] };
        if (err instanceof ApplicationFailure && err.nonRetryable && isErrorCode(err.type)) {
          const inner = Array.isArray(err.details?.[0]) ? (err.details[0] as InnerError[]) : [innerError(err.type, err.message)];
          return { ok: false, problems: inner };
        }
        throw err;
      }
      await discard(scratch);
      return { ok: false, problems };
    },

    /** A chunk of rows, one after another. Each row is final once recorded (done or failed); the heartbeat
     *  carries the last row recorded, so a retry (another worker, after a crash) starts after it. */
    async generateBatchChunk(input: ChunkInput): Promise<ChunkResult> {
      const { run } = input;
      const ctx = activity();
      const signal = ctx?.cancellationSignal;
      const last = input.firstRow + input.count - 1;
      const resumeAfter = Number((ctx?.info.heartbeatDetails as { lastRow?: number } | undefined)?.lastRow ?? 0);
      const recorded = await recordedRows(deps.db, run.subscriptionId, run.batchId, input.firstRow, last);
      const page = await deps.blobs.get(batchPageKey(run.workflowId, input.page));
      const rows = text.decode(page).split('\n').filter((l) => l !== '');
      if (rows.length !== input.count) throw new Error(`page ${input.page} of batch ${run.batchId} holds ${rows.length} rows, not ${input.count}`);
      const result = { done: 0, failed: 0 };
      // Also while one row takes long (a slow conversion): a third of the heartbeat timeout.
      const beat = setInterval(() => ctx?.heartbeat({ lastRow: lastRecorded }), Math.max(500, Math.floor((ctx?.info.heartbeatTimeoutMs ?? 15_000) / 3)));
      let lastRow = Math.max(resumeAfter, input.firstRow - 1);
      let lastRecorded = lastRow;
      try {
        for (let i = 0; i < rows.length; i++) {
          const rowNumber = input.firstRow + i;
          if (rowNumber <= resumeAfter || recorded.has(rowNumber)) continue;
          // Cancelled (the batch was cancelled, or the worker is stopping): stop before a row starts; a row
          // whose write has begun is finished below, so nothing is left half-written.
          if (signal?.aborted) throw ApplicationFailure.create({ type: 'CANCELLED', message: 'the batch chunk was cancelled', nonRetryable: false });
          // A cancel asked for through the API is read here, between rows: Temporal's cancellation reaches
          // the chunk only with a heartbeat's answer (throttled), by when many rows would have started.
          if (await batchCancelRequested(deps.db, run.subscriptionId, run.batchId)) break;
          const row = JSON.parse(rows[i]!) as Row;
          try {
            const names = nameOf(run, row);
            const bytes = await render(run, row, signal);
            const key = rowDocKey(run, rowNumber);
            const put = await deps.blobs.put(key, bytes);
            const source = { key, sha256: put.sha256, size: put.size, contentType: contentTypeOf(run.document.fileFormat) };
            await deliverAndRecord(run, rowNumber, names, source);
            result.done++;
          } catch (err) {
            if (signal?.aborted) throw err;
            if (!isFinal(err) && (ctx?.info.attempt ?? 1) < POISON_ATTEMPT) throw err;
            const f = describeFailure(err);
            await recordBatchRowFailed(deps.db, run.subscriptionId, run.batchId, rowNumber, f.code, f.message);
            result.failed++;
          }
          lastRow = rowNumber;
          lastRecorded = rowNumber;
          ctx?.heartbeat({ lastRow });
        }
      } finally {
        clearInterval(beat);
      }
      const batch = await getBatch(deps.db, run.subscriptionId, run.batchId);
      return { ...result, batchDone: batch?.rowsDone ?? result.done, batchFailed: batch?.rowsFailed ?? result.failed };
    },

    /** The combined output of every done row in row order, written once (its urn is derived from the batch)
     *  and recorded as a document of the batch; the merged PDF's pages are checked against the rows'. */
    async combineBatch(input: CombineInput): Promise<{ urn: string; name: string; pages?: number }> {
      const { run, combined } = input;
      const ctx = activity();
      const beat = setInterval(() => ctx?.heartbeat(), Math.max(500, Math.floor((ctx?.info.heartbeatTimeoutMs ?? 15_000) / 3)));
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
            if (err instanceof PdfMergeError && !err.retryable) throw callerFailure(err.message.includes('qpdf on the worker') ? 'NOT_SUPPORTED' : 'VALIDATION_ERROR', err.message);
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
          run: { operationId: `${run.batchId}:combined`, subscriptionId: run.subscriptionId, userId: run.userId, ...(run.connections ? { connections: run.connections } : {}), ...(run.remote ? { remote: run.remote } : {}) },
          urn: combinedUrn(run.batchId),
          source,
          target: { name: combined.name, path: combined.path, fileFormat: combined.format, deliveryMethod: combined.deliveryMethod },
          field: 'combined',
          pages: pages ?? 0,
          metering: 'none',
          end: { uploads: [], scratch: [] },
        });
        await setBatchCombined(deps.db, run.subscriptionId, run.batchId, { urn: written.urn, name: written.name, ...(pages !== undefined ? { pages } : {}) });
        return { urn: written.urn, name: written.name, ...(pages !== undefined ? { pages } : {}) };
      } finally {
        clearInterval(beat);
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },

    /** The batch's end: its status, its uploads consumed (once, by this run), its scratch removed. Returns
     *  the batch as recorded, for the callback. */
    async finishBatch(input: FinishBatchInput): Promise<Batch & { firstFailures: { row: number; code: string; message: string }[] }> {
      const run = currentRun();
      if (input.uploads.length > 0) await consumeFiles(deps.db, input.subscriptionId, input.uploads, ['template', 'data'], run?.runId ?? input.workflowId);
      const ended = await endBatch(deps.db, input.subscriptionId, input.batchId, input.status, input.error);
      await discard(batchScratch(input.workflowId));
      if (!ended) throw new Error(`batch ${input.batchId} is not recorded`);
      // The first failed rows, for the summary callback (the rest: GET /documents/batch/{id}/rows).
      const failed = await listBatchRows(deps.db, input.subscriptionId, input.batchId, { status: 'failed', top: FIRST_FAILURES, skip: 0 });
      const batch = { ...ended, firstFailures: failed.rows.map((r) => ({ row: r.row, code: r.code ?? '', message: r.message ?? '' })) };
      return batch;
    },
  };

  async function copyInto(ref: BlobRef, key: string): Promise<BlobRef> {
    await deps.blobs.copy(ref.key, key);
    // A drive's template was downloaded into the admission's own scratch: that copy goes now.
    if (ref.key.startsWith('scratch/') && ref.key !== key) await deps.blobs.delete(ref.key);
    return { ...ref, key };
  }

  async function discard(prefix: string): Promise<void> {
    await deps.blobs.deleteAll(prefix);
  }

  /** The data file (Storage, DriveA, DriveB) or the GraphQL result, as a blob. */
  async function rowsSource(batch: BatchInput): Promise<BlobRef> {
    if (batch.data.loadMethod === 'GraphQL') return deps.steps.loadData({ run: batch.run, data: batch.data });
    // Not loadData for a file: it checks the file is one JSON value, and rows may be JSON Lines or CSV.
    const need = { method: batch.data.loadMethod, capability: 'readData', field: 'data.loadMethod' } as const;
    return atLocation(deps.locations, need, (l) => l.readData!(contextOf(batch.run, batch.data.loadMethod), batch.data.urn));
  }

  /** Streams the rows of `source` into pages (JSON Lines blobs of chunkRows rows); returns the row count. */
  async function readIntoPages(source: BlobRef, batch: BatchInput, workflowId: string, maxRows: number, seen: (row: Row) => void): Promise<number> {
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
      for await (const chunk of await deps.blobs.createReadStream(source.key)) await take(reader.push(decoder.decode(chunk as Buffer, { stream: true })));
      await take(reader.push(decoder.decode()));
    } catch (err) {
      if (err instanceof TypeError && /encoded data|decode/i.test(err.message)) throw new RowsError(`data.urn ${batch.data.urn} is not UTF-8 text`);
      throw err;
    }
    await take(reader.end());
    if (page.length > 0) writes.push(deps.blobs.put(batchPageKey(workflowId, pageNo++), Buffer.from(`${page.join('\n')}\n`, 'utf8')));
    await Promise.all(writes);
    return reader.rows;
  }

  /** Every done row of the batch, in row order (names and paths as recorded). */
  async function doneRows(run: BatchRun): Promise<{ row: number; name: string; path: string; pages: number }[]> {
    const r = await deps.db.query<{ row_number: number; name: string; path: string; pages: number }>(
      "SELECT row_number, name, path, pages FROM batch_rows WHERE batch_id = $1 AND subscription_id = $2 AND status = 'done' ORDER BY row_number",
      [run.batchId, run.subscriptionId],
    );
    return r.rows.map((x) => ({ row: Number(x.row_number), name: x.name, path: x.path, pages: Number(x.pages) }));
  }
}

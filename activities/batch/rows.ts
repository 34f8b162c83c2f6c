// One row of a batch, as a single generate does it: named by the patterns and held to generate's Target rules
// (core/target.ts placeProblems, the location's own name rules), merged, converted with generate's failure
// mapping (activities/convert.ts conversionFailure) and its embedded properties (core/save-options.ts),
// written and recorded by generate's one writeAndRecord under the row's own operation id. Its failure, when
// it has one, described as the row's entry.
import { ApplicationFailure } from '@temporalio/activity';
import { type BatchRun, rowRun } from '../../core/batch.ts';
import type { BlobRef } from '../../core/blob.ts';
import { generatedConsumption } from '../../core/envelope.ts';
import type { GenerateWarning } from '../../core/generate.ts';
import { type ErrorCode, type InnerError, isErrorCode } from '../../core/errors.ts';
import { callerFailure } from '../../core/failures.ts';
import { bytesFormatOf, contentTypeOf, outputFileName } from '../../core/formats.ts';
import { entryOf } from '../../core/locations.ts';
import type { Row } from '../../core/rows.ts';
import { customProperties } from '../../core/save-options.ts';
import { placeProblems } from '../../core/target.ts';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import { convert, type ConvertOptions, isConvertError } from '../../converter/index.ts';
import { compileTextPattern, TemplateError, type TextPattern } from '../../engine/text-pattern.ts';
import { type DeliveredRow, recordBatchRowDone, recordBatchRowsDelivered } from '../../store/records/batches.ts';
import { countMetering } from '../../telemetry/metrics.ts';
import { conversionFailure } from '../convert.ts';
import { eInvoiceOf } from '../einvoice.ts';
import { mergeBytes } from '../merge.ts';
import type { BatchDeps } from './deps.ts';
import { rowDocKey, rowUrn } from './ids.ts';

export type RowSteps = ReturnType<typeof rowSteps>;

/** A row's entry as it was recorded: `inserted` false when an earlier attempt had recorded it; whether a
 *  cancel of the batch was asked for, read in the same transaction (absent when nothing was written). */
export interface RowRecorded {
  inserted: boolean;
  cancelRequested?: boolean;
}

export function rowSteps(deps: BatchDeps) {
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

  /** A batch's templates (the Office template, its related items, document.einvoice.template), read once per
   *  worker and template from the batch's scratch. */
  const templates = new Map<string, { bytes: Uint8Array; related?: Record<string, Uint8Array>; xml?: Uint8Array }>();
  async function templateOf(run: BatchRun) {
    let t = templates.get(run.template.key);
    if (!t) {
      const related = run.related
        ? Object.fromEntries(
            await Promise.all(Object.entries(run.related).map(async ([n, ref]) => [n, await deps.blobs.get(ref.key)] as const)),
          )
        : undefined;
      const xml = run.einvoiceTemplate ? await deps.blobs.get(run.einvoiceTemplate.key) : undefined;
      t = { bytes: await deps.blobs.get(run.template.key), ...(related ? { related } : {}), ...(xml ? { xml } : {}) };
      if (templates.size > 20) templates.clear();
      templates.set(run.template.key, t);
    }
    return t;
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
      throw callerFailure(
        'VALIDATION_ERROR',
        `${problems.join('; ')} (this row gives name ${JSON.stringify(place.name.slice(0, 80))}, path ${JSON.stringify(place.path.slice(0, 80))})`,
      );
    }
    // Every row's name and folders against the target's own rules too (SharePoint's reserved names: CON,
    // ~$draft...), as the API checks a single generate's before queueing: refused here, nothing is sent.
    const refused = run.document.deliveryMethod
      ? deps.locations.get(run.document.deliveryMethod)?.nameProblem?.({ ...place, fileFormat: run.document.fileFormat })
      : undefined;
    if (refused) {
      throw callerFailure(
        'VALIDATION_ERROR',
        `document.${refused.field} ${JSON.stringify(refused.field === 'name' ? run.document.name : run.document.path)} gives ${JSON.stringify(place[refused.field].slice(0, 80))} for this row: ${refused.reason}`,
      );
    }
    return place;
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
        ...(run.document.saveOptions?.pdf?.accessible ? { accessible: true } : {}),
      },
      signal,
    );
    return merged.output;
  }

  async function convertRow(
    run: BatchRun,
    row: Row,
    bytes: Uint8Array,
    signal: AbortSignal | undefined,
    pdf?: NonNullable<BatchRun['document']['saveOptions']>['pdf'],
  ): Promise<Uint8Array> {
    const save = run.document.saveOptions ?? {};
    const embedded = run.embedded ? customProperties(run.embedded) : undefined;
    const options = {
      from: bytesFormatOf(run.templateFormat),
      // An e-invoice's rendition is a pdf whatever the delivered format (activities/einvoice.ts).
      to: pdf ? 'pdf' : run.document.fileFormat,
      tenant: run.subscriptionId,
      ...(signal ? { signal } : {}),
      ...(pdf ? { pdf } : save.pdf ? { pdf: save.pdf } : {}),
      // An accessible row's title when the template has none: the row's document name.
      ...((pdf ?? save.pdf)?.accessible ? { title: nameOf(run, row).name.replace(/\.pdf$/i, ''), language: run.document.locale } : {}),
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

  /** One row's document: merged, converted when the format differs (its pages are counted as it is written). */
  async function render(
    run: BatchRun,
    row: Row,
    signal: AbortSignal | undefined,
  ): Promise<{ bytes: Uint8Array; warnings: GenerateWarning[] }> {
    const option = run.document.einvoice;
    if (option) {
      // document.einvoice: the row's invoice checked before its merge, as a single generate does.
      const rowName = nameOf(run, row).name;
      const xml = {
        ...(run.einvoiceTemplate ? { template: (await templateOf(run)).xml } : {}),
        render: { locale: run.document.locale, timezone: run.document.timezone, ...(run.document.strict ? { strict: true } : {}) },
      };
      return eInvoiceOf(option, row, rowName, xml, {
        merge: () => mergeRow(run, row, signal),
        pdf: (bytes, pdf) => convertRow(run, row, bytes, signal, pdf),
      });
    }
    const bytes = await mergeRow(run, row, signal);
    return { bytes: run.document.fileFormat !== run.templateFormat ? await convertRow(run, row, bytes, signal) : bytes, warnings: [] };
  }

  /** Writes a row's document where the request sends it (same urn on every attempt) and records it, through
   *  generate's own write-and-record (write -> record -> the row's scratch file discarded), under the row's own
   *  operation id, with the row's entry and the batch's counters in the record's statement. A row without a
   *  delivery (combined output only) is metered with its entry. A delivered row's record and entry are one
   *  statement, so no crash falls between them; an attempt whose write-and-record answers with what an
   *  earlier attempt recorded writes the entry on its own. The entry, and the batch's counters with it, are
   *  written once. */
  async function deliverAndRecord(
    run: BatchRun,
    rowNumber: number,
    names: { name: string; path: string },
    source: BlobRef,
    pages: number,
    warnings: GenerateWarning[] = [],
  ): Promise<RowRecorded> {
    const d = run.document;
    const who = rowRun(run, rowNumber);
    const scratch = run.keepDocuments ? [] : [source];
    if (d.deliveryMethod) {
      const recorded = await deps.writeAndRecord({
        run: who,
        urn: rowUrn(run.batchId, rowNumber),
        source,
        pages,
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
        batchRow: { batchId: run.batchId, row: rowNumber, ...(warnings.length > 0 ? { warnings } : {}) },
      });
      if (recorded.batchRow) return recorded.batchRow;
      return recordBatchRowDone(deps.db, {
        subscriptionId: run.subscriptionId,
        batchId: run.batchId,
        row: rowNumber,
        urn: recorded.written.urn,
        name: recorded.written.name,
        path: recorded.written.path,
        pages: recorded.pages,
        ...(warnings.length > 0 ? { warnings } : {}),
      });
    }
    const { inserted, metered, cancelRequested } = await recordBatchRowDone(deps.db, {
      subscriptionId: run.subscriptionId,
      batchId: run.batchId,
      row: rowNumber,
      urn: '',
      name: outputFileName(names.name, d.fileFormat),
      path: names.path,
      pages,
      ...(warnings.length > 0 ? { warnings } : {}),
      metering: { operationId: who.operationId, userId: run.userId, consumption: generatedConsumption(pages) },
    });
    countMetering(metered);
    return { inserted, ...(cancelRequested !== undefined ? { cancelRequested } : {}) };
  }

  /** One row, start to end: named, rendered, put in the batch's scratch (its key is the row's, so an
   *  attempt after a crash overwrites it) while its pages are counted from the bytes in hand, delivered and
   *  recorded. Says whether this call wrote the row's entry (false: an earlier attempt had) and, when it
   *  did, whether a cancel of the batch was asked for; or, for a Storage row the combined output does not
   *  need, that it was written straight to its key and waits for the chunk's flush (`delivered`). */
  async function generateRow(
    run: BatchRun,
    rowNumber: number,
    row: Row,
    signal: AbortSignal | undefined,
  ): Promise<RowRecorded | { delivered: DeliveredRow }> {
    const names = nameOf(run, row);
    const { bytes, warnings } = await render(run, row, signal);
    const key = rowDocKey(run, rowNumber);
    const source = { key, sha256: '', size: bytes.byteLength, contentType: contentTypeOf(run.document.fileFormat) };
    const measured = deps.steps.measure({ blob: source, bytes, fileFormat: run.document.fileFormat, subscriptionId: run.subscriptionId });
    const d = run.document;
    // A row the combined output does not need, for a location that writes bytes (Storage), is written once,
    // at its final key (no scratch file to put, link and remove), and its record waits for the chunk's next
    // flush (recordDelivered). Otherwise it waits in scratch and is recorded now.
    const location = d.deliveryMethod ? deps.locations.get(d.deliveryMethod) : undefined;
    if (!run.keepDocuments && d.deliveryMethod && location?.writesBytes) {
      const pages = await measured;
      const who = rowRun(run, rowNumber);
      const written = await deps.steps.deliver({
        run: who,
        urn: rowUrn(run.batchId, rowNumber),
        source,
        bytes,
        target: { name: names.name, path: names.path, fileFormat: d.fileFormat, deliveryMethod: d.deliveryMethod },
        // Its file record (Storage's) goes in the flush's statement too: the row's document resolves once
        // its record, metering and entry are stored, all at once.
        recordLater: true,
      });
      if (written.uri || written.links || written.emails)
        throw new Error(`a ${d.deliveryMethod} write answered with links: its row cannot wait for a flush`);
      return {
        delivered: {
          row: rowNumber,
          operationId: who.operationId,
          userId: run.userId,
          urn: written.urn,
          name: written.name,
          path: written.path,
          pages,
          fileFormat: d.fileFormat,
          deliveryMethod: d.deliveryMethod,
          consumption: generatedConsumption(pages),
          ...(warnings.length > 0 ? { warnings } : {}),
          ...(written.file ? { file: written.file } : {}),
        },
      };
    }
    const [put, pages] = await Promise.all([deps.blobs.put(key, bytes), measured]);
    return deliverAndRecord(run, rowNumber, names, { ...source, sha256: put.sha256 }, pages, warnings);
  }

  /** Records delivered rows (generateRow's `delivered`), in row order, in one statement; the metering counted. */
  async function recordDelivered(run: BatchRun, delivered: DeliveredRow[]): Promise<{ inserted: Set<number>; cancelRequested?: boolean }> {
    const recorded = await recordBatchRowsDelivered(deps.db, run.subscriptionId, run.batchId, delivered);
    countMetering(recorded.metered);
    return {
      inserted: recorded.inserted,
      ...(recorded.cancelRequested !== undefined ? { cancelRequested: recorded.cancelRequested } : {}),
    };
  }

  return { nameOf, mergeRow, generateRow, recordDelivered };
}

/** Whether a row's failure is its own for good (the caller's input), not one to retry the chunk for. */
export const isFinal = (err: unknown) => (err instanceof ApplicationFailure && err.nonRetryable) || err instanceof TemplateError;

/** A row's failure as the row's entry: the caller's code (and the first inner message), or for an
 *  unexpected error its message under FUNCTION_EXECUTION_ERROR. */
export function describeFailure(err: unknown): { code: ErrorCode; message: string } {
  if (err instanceof ApplicationFailure && isErrorCode(err.type)) {
    const inner = Array.isArray(err.details?.[0]) ? (err.details[0] as InnerError[]) : [];
    return {
      code: err.type,
      message: withoutRepeats(
        err.message,
        inner.map((e) => e.message),
      ),
    };
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

import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { type ConvertError, type ConvertOptions, convert, isConvertError, pageCount } from '../converter/index.ts';
import type { ActivityDeps } from './deps.ts';
import { callerFailure } from '../core/failures.ts';
import { bytesFormatOf } from '../core/formats.ts';
import type { EInvoiceOption } from '../core/einvoice.ts';
import { eInvoiceDocument } from './einvoice.ts';
import { takeHeld } from './held.ts';

export interface ConvertInput {
  source: BlobRef;
  from: string;
  to: string;
  outputKey: string;
  contentType: string;
  pdf?: ConvertOptions['pdf'];
  csv?: ConvertOptions['csv'];
  embedded?: Record<string, string>;
  /** pdf.accessible: the title when the document has none, the language when the template sets none. */
  title?: string;
  language?: string;
  /** Epoch ms when the caller stops waiting (a sync generate): no conversion runs or retries past it. */
  deadline?: number;
  /** document.einvoice: the checked XML made by the merge step; the output is the e-invoice (a PDF/A-3b with
   *  the XML inside, or the XML, with the pdf inside when asked): activities/einvoice.ts. */
  einvoice?: { xml: BlobRef; option: EInvoiceOption; name: string };
  /** Waiting conversions are served to the subscription that used the least converter time recently. */
  subscriptionId?: string;
  /** A sync generate: when its caller stops waiting (RunContext.callerDeadline); still queued then, the
   *  conversion is not run. */
  abandonAt?: number;
}

/** The converted file, and its pages when its format's count is exact from its own bytes (pdf: the page
 *  tree, csv: 1; converter/pages.ts): the workflow meters them instead of reading and parsing the file again
 *  in the write step (PAGE_COUNT does not apply to these formats). Absent from the results of runs recorded
 *  before it: the write step counts then. */
export interface Converted extends BlobRef {
  pages?: number;
}

export function convertActivity(deps: ActivityDeps) {
  /** A normal activity for an async generate and manage (long, bound to the LibreOffice pool: it
   *  heartbeats) and a local one for a sync generate (workflows/steps.ts); a cancelled or timed-out attempt
   *  kills its conversion. */
  return async function convertDocument(input: ConvertInput): Promise<Converted> {
    const ctx = Context.current();
    const timeoutMs = remainingBudget(input.deadline);
    // The merge's output, when it ran just before on this worker (activities/held.ts); else the file.
    const bytes = takeHeld(input.source) ?? (await deps.blobs.get(input.source.key));
    const invoice = input.einvoice;
    const cii = invoice && (invoice.option.standard === 'facturx' || invoice.option.standard === 'zugferd');
    // XRechnung without its pdf: the XML is the document, nothing to convert.
    const renders = !invoice || cii || invoice.option.pdf === true;
    const beat = ctx.info.isLocal ? undefined : setInterval(() => ctx.heartbeat(), 2_000);
    let out: Uint8Array | undefined;
    try {
      if (renders)
        out = await convert(
          bytes,
          {
            // A native format's bytes are its Office twin (exported from DriveB, or merged from the export).
            from: bytesFormatOf(input.from),
            to: invoice ? 'pdf' : input.to,
            signal: ctx.cancellationSignal,
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
            ...(input.subscriptionId ? { tenant: input.subscriptionId } : {}),
            ...(input.abandonAt !== undefined ? { abandonAt: input.abandonAt } : {}),
            // Factur-X / ZUGFeRD: PDF/A-3b (the API refuses another conformance).
            ...(cii ? { pdf: { ...input.pdf, conformance: 'PdfA3B' } } : input.pdf ? { pdf: input.pdf } : {}),
            ...(input.csv ? { csv: input.csv } : {}),
            ...(input.embedded ? { embedded: input.embedded } : {}),
            ...(input.title ? { title: input.title } : {}),
            ...(input.language ? { language: input.language } : {}),
          } as ConvertOptions,
          deps.converter,
        );
    } catch (err) {
      if (isConvertError(err)) throw conversionFailure(err, input.deadline);
      throw err;
    } finally {
      clearInterval(beat);
    }
    if (invoice) {
      const xml = new TextDecoder().decode(await deps.blobs.get(invoice.xml.key));
      try {
        out = eInvoiceDocument(xml, invoice.option, out, `${invoice.name.replace(/\.xml$/i, '')}.pdf`);
      } catch (err) {
        if (isConvertError(err)) throw conversionFailure(err, input.deadline);
        throw err;
      }
    }
    // A cancelled attempt (the run cancelled mid-conversion) writes nothing: the run's end may have
    // discarded its scratch already (a local activity is not waited for).
    const put = await deps.blobs.put(input.outputKey, out!, { signal: ctx.cancellationSignal });
    const pages = EXACT_FROM_BYTES.has(input.to) ? (await pageCount(out!, input.to, { render: null, count: null })).pages : undefined;
    return {
      key: input.outputKey,
      sha256: put.sha256,
      size: put.size,
      contentType: input.contentType,
      ...(pages !== undefined ? { pages } : {}),
    };
  };
}

/** The formats whose page count the converted bytes give exactly, whatever PAGE_COUNT says (converter/pages.ts). */
const EXACT_FROM_BYTES = new Set(['pdf', 'csv']);

/**
 * What the caller is told of a converter failure, and whether the step is retried. Final (a 400 the sync
 * caller gets, or the async callback): the document's cost, checked before (TEMPLATE_TOO_COMPLEX naming
 * the limit) or found by the time it took (a conversion past CONVERTER_TIMEOUT_MS, or past
 * CONVERTER_CONTENDED_TIMEOUT_MS while others waited: another attempt would hold LibreOffice as long again);
 * the subscription's spent budget (429); no LibreOffice at all (NOT_SUPPORTED: it never started here);
 * other refusals of the input. Retried: crashes, a full queue, a converter stopping.
 */
export function conversionFailure(err: ConvertError, deadline: number | undefined): ApplicationFailure {
  if (err.code === 'TIMEOUT' && err.setting === 'GENERATE_TIMEOUT_MS') return budgetSpent();
  if (err.code === 'TIMEOUT' && err.setting === undefined && deadline !== undefined && Date.now() >= deadline - 1_000) return budgetSpent();
  if (err.code === 'TIMEOUT' && err.setting !== undefined)
    return callerFailure('TEMPLATE_TOO_COMPLEX', `the document cannot be converted: ${err.message}`);
  if (err.code === 'TOO_COMPLEX') return callerFailure('TEMPLATE_TOO_COMPLEX', err.message);
  if (err.code === 'OVER_BUDGET') {
    return callerFailure('TOO_MANY_REQUESTS', err.message, undefined, undefined, {
      retryAfterSeconds: Math.max(1, Math.ceil((err.retryAfterMs ?? 1_000) / 1000)),
    });
  }
  if (err.code === 'CONVERTER_UNAVAILABLE') return callerFailure('NOT_SUPPORTED', err.message);
  if (!err.retryable) return callerFailure('VALIDATION_ERROR', err.message);
  // Crashes, a full queue, a stopping converter: another attempt (maybe on another worker) can succeed.
  return ApplicationFailure.create({ type: `CONVERT_${err.code}`, message: err.message, nonRetryable: false });
}

/** Time left before `deadline`, or undefined without one; a spent budget is a final failure. */
export function remainingBudget(deadline: number | undefined): number | undefined {
  if (deadline === undefined) return undefined;
  const left = deadline - Date.now();
  if (left <= 1_000) throw budgetSpent();
  return left;
}

/** The synchronous caller has been answered 504: nothing may run or retry for it any more. */
function budgetSpent(): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'GENERATION_TIMEOUT',
    message: 'the caller stopped waiting (GENERATE_TIMEOUT_MS); the conversion is not run or retried',
    nonRetryable: true,
  });
}

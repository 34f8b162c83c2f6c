import { ApplicationFailure, Context } from '@temporalio/activity';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { convert, countWith, isConvertError, pageCount } from '../converter/index.ts';
import { conversionFailure, remainingBudget } from './convert.ts';
import type { ActivityDeps } from './deps.ts';
import { bytesFormatOf } from '../core/formats.ts';
import { takeHeld } from './held.ts';

export function measureActivity(deps: ActivityDeps) {
  /** The page count that `pages-generated` meters, by PAGE_COUNT (rules in converter/pages.ts): exact for
   *  pdf, slides for pptx; for docx/xlsx the pages of the PDF rendition (LibreOffice's layout count, no PDF
   *  written; a Gotenberg converter makes the rendition) or the document's own statistic. The count gets
   *  what is left of the caller's budget and of this step's own time limit. With `auto`, a count that
   *  times out or crashes meters the statistic (the step is not retried into a second conversion); with
   *  `exact` it fails the attempt, and the step's retries count again: never a count of another kind. */
  return async function measure(input: {
    blob: BlobRef;
    /** The blob's bytes, when the caller holds them (a batch row, in this process): not read again. */
    bytes?: Uint8Array;
    fileFormat: string;
    deadline?: number;
    subscriptionId?: string;
    abandonAt?: number;
  }): Promise<number> {
    const ctx = Context.current();
    const mode = deps.pageCount ?? 'auto';
    const own = ctx.info.startToCloseTimeoutMs ? ctx.info.startToCloseTimeoutMs - 2_000 : undefined;
    const budget = remainingBudget(input.deadline);
    const timeoutMs = [own, budget].filter((x): x is number => x !== undefined).reduce((a, b) => Math.min(a, b), Infinity);
    const bytes = input.bytes ?? takeHeld(input.blob) ?? (await deps.blobs.get(input.blob.key));
    const converter = deps.converter;
    if (mode === 'exact' && !converter && needsConverter(input.fileFormat)) {
      throw ApplicationFailure.nonRetryable('PAGE_COUNT=exact but this worker has no converter to count docx/xlsx pages', 'NOT_SUPPORTED');
    }
    const opts = {
      ...(converter
        ? { render: (b: Uint8Array, o: Parameters<typeof convert>[1]) => convert(b, o, converter), count: countWith(converter) }
        : {}),
      statistic: mode === 'document' ? ('document' as const) : ('exact' as const),
      signal: ctx.cancellationSignal,
      ...(Number.isFinite(timeoutMs) ? { timeoutMs: Math.max(1_000, timeoutMs) } : {}),
      ...(input.subscriptionId ? { tenant: input.subscriptionId } : {}),
      ...(input.abandonAt !== undefined ? { abandonAt: input.abandonAt } : {}),
    };
    try {
      return (await pageCount(bytes, bytesFormatOf(input.fileFormat), opts)).pages;
    } catch (err) {
      if (mode === 'auto' && isConvertError(err) && FALLBACK.has(err.code) && !ctx.cancellationSignal.aborted) {
        ctx.log.warn('exact page count failed; metering the document statistic (PAGE_COUNT=auto)', { error: err.message });
        return (await pageCount(bytes, bytesFormatOf(input.fileFormat), { render: null, count: null })).pages;
      }
      // PAGE_COUNT=exact: the same answers as a conversion (a count past the converter's limits is final).
      if (isConvertError(err)) throw conversionFailure(err, input.deadline);
      throw err;
    }
  };
}

/** With PAGE_COUNT=auto, these failures of the exact count meter the document statistic instead: the
 *  document is delivered already, and another count would cost LibreOffice as much again. A converter that
 *  cannot start (LibreOffice found but broken or partly installed) is no converter: docx, xlsx and pptx
 *  generation works without one (README), only conversions need it. */
const FALLBACK = new Set(['TIMEOUT', 'CRASHED', 'TOO_COMPLEX', 'OVER_BUDGET', 'CONVERTER_UNAVAILABLE']);

function needsConverter(format: string): boolean {
  const f = format.trim().toLowerCase();
  return f === 'docx' || f === 'xlsx';
}

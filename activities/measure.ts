import { Context } from '@temporalio/activity';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { convert, isConvertError, pageCount } from '../converter/index.ts';
import { remainingBudget } from './convert.ts';
import type { ActivityDeps } from './deps.ts';
import { bytesFormatOf } from '../core/formats.ts';

export function measureActivity(deps: ActivityDeps) {
  /** The page count that `pages-generated` meters: exact for pdf, slides for pptx, a PDF rendition's
   *  pages for docx/xlsx when a converter is available (rules in converter/README.md). The rendition
   *  gets what is left of the caller's budget and of this step's own time limit; when it times out or
   *  crashes the count falls back to the estimate (the step is not retried into a second conversion). */
  return async function measure(input: { blob: BlobRef; fileFormat: string; deadline?: number; subscriptionId?: string }): Promise<number> {
    const ctx = Context.current();
    const own = ctx.info.startToCloseTimeoutMs ? ctx.info.startToCloseTimeoutMs - 2_000 : undefined;
    const budget = remainingBudget(input.deadline);
    const timeoutMs = [own, budget].filter((x): x is number => x !== undefined).reduce((a, b) => Math.min(a, b), Infinity);
    const bytes = await deps.blobs.get(input.blob.key);
    const converter = deps.converter;
    const opts = {
      ...(converter ? { render: (b: Uint8Array, o: Parameters<typeof convert>[1]) => convert(b, o, converter) } : {}),
      signal: ctx.cancellationSignal,
      ...(Number.isFinite(timeoutMs) ? { timeoutMs: Math.max(1_000, timeoutMs) } : {}),
      ...(input.subscriptionId ? { tenant: input.subscriptionId } : {}),
    };
    try {
      return (await pageCount(bytes, bytesFormatOf(input.fileFormat), opts)).pages;
    } catch (err) {
      if (isConvertError(err) && (err.code === 'TIMEOUT' || err.code === 'CRASHED') && !ctx.cancellationSignal.aborted) {
        ctx.log.warn('page count rendition failed; metering the estimate', { error: err.message });
        return (await pageCount(bytes, bytesFormatOf(input.fileFormat), { render: null })).pages;
      }
      throw err;
    }
  };
}

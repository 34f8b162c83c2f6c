import { Context } from '@temporalio/activity';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { pageCount } from '../engine/convert.ts';
import type { ActivityDeps } from './deps.ts';

export function measureActivity(deps: ActivityDeps) {
  /** The page count that `pages-generated` meters: exact for pdf, slides for pptx, a PDF rendition's
   *  pages for docx/xlsx when a converter is available (rules in engine/convert/README.md). For docx and
   *  xlsx the workflow runs this as a normal, heartbeating activity (like a conversion), since it may wait
   *  for a LibreOffice instance; otherwise as a local one. */
  return async function measure(input: { blob: BlobRef; fileFormat: string }): Promise<number> {
    const ctx = Context.current();
    const local = ctx.info.isLocal;
    const beat = local ? undefined : setInterval(() => ctx.heartbeat(), 2_000);
    try {
      return (await pageCount(await deps.blobs.get(input.blob.key), input.fileFormat, local ? {} : { signal: ctx.cancellationSignal })).pages;
    } finally {
      if (beat) clearInterval(beat);
    }
  };
}

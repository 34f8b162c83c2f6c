import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { pageCount } from '../converter/index.ts';
import type { ActivityDeps } from './deps.ts';

export function measureActivity(deps: ActivityDeps) {
  /** The page count that `pages-generated` meters: exact for pdf, slides for pptx, a PDF rendition's
   *  pages for docx/xlsx when a converter is available (rules in converter/README.md). */
  return async function measure(input: { blob: BlobRef; fileFormat: string }): Promise<number> {
    return (await pageCount(await deps.blobs.get(input.blob.key), input.fileFormat)).pages;
  };
}

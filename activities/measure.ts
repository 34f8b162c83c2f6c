import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { countPages } from '../engine/pages.ts';
import type { ActivityDeps } from './deps.ts';

export function measureActivity(deps: ActivityDeps) {
  /** The page count that `pages-generated` meters (rules in engine/pages.ts). */
  return async function measure(input: { blob: BlobRef; fileFormat: string }): Promise<number> {
    return countPages(await deps.blobs.get(input.blob.key), input.fileFormat);
  };
}

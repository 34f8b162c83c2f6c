import type { BlobRef } from '../connectors/storage/blob-store.ts';
import type { GenerateInput } from '../core/generate.ts';
import { getFile } from '../store/files.ts';
import type { ActivityDeps } from './deps.ts';
import { callerFailure } from './failures.ts';

export function loadDataActivity(deps: ActivityDeps) {
  /** Resolves the data file and checks it is JSON, so a bad file fails here with a clear cause rather
   *  than deep inside the merge. */
  return async function loadData(input: Pick<GenerateInput, 'subscriptionId' | 'data'>): Promise<BlobRef> {
    const { data } = input;
    if (data.loadMethod !== 'Storage') {
      throw callerFailure('NOT_SUPPORTED', `data.loadMethod ${data.loadMethod} is not available in this deployment yet`);
    }
    const file = await getFile(deps.db, input.subscriptionId, data.urn, ['data']);
    if (!file || !(await deps.blobs.exists(file.blobKey))) {
      throw callerFailure(
        'DATA_NOT_FOUND',
        `data.urn ${data.urn} does not resolve: upload the file with POST /documents/data/upload (uploads expire after use or 24 hours)`,
      );
    }
    const bytes = await deps.blobs.get(file.blobKey);
    try {
      JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch (err) {
      throw callerFailure('DATA_INVALID', `data.urn ${data.urn} is not valid JSON: ${(err as Error).message}`);
    }
    return { key: file.blobKey, sha256: file.sha256, size: file.size, contentType: 'application/json' };
  };
}

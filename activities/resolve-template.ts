import type { BlobRef } from '../connectors/storage/blob-store.ts';
import type { GenerateInput } from '../core/generate.ts';
import { getFile } from '../store/files.ts';
import type { ActivityDeps } from './deps.ts';
import { callerFailure } from './failures.ts';

export function resolveTemplateActivity(deps: ActivityDeps) {
  /** Finds the template's bytes and returns a reference to them; the bytes stay in the blob store. */
  return async function resolveTemplate(input: Pick<GenerateInput, 'subscriptionId' | 'template'>): Promise<BlobRef> {
    const { template } = input;
    if (template.loadMethod !== 'Storage') {
      throw callerFailure('NOT_SUPPORTED', `template.loadMethod ${template.loadMethod} is not available in this deployment yet`);
    }
    const file = await getFile(deps.db, input.subscriptionId, template.urn, ['template']);
    if (!file || !(await deps.blobs.exists(file.blobKey))) {
      throw callerFailure(
        'TEMPLATE_NOT_FOUND',
        `template.urn ${template.urn} does not resolve: upload the file with POST /documents/template/upload (uploads expire after use or 24 hours)`,
      );
    }
    return { key: file.blobKey, sha256: file.sha256, size: file.size, contentType: file.contentType };
  };
}

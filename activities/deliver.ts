import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { outputFileName } from '../core/generate.ts';
import { insertFile } from '../store/files.ts';
import type { ActivityDeps } from './deps.ts';
import { callerFailure } from './failures.ts';

export interface DeliverInput {
  source: BlobRef;
  subscriptionId: string;
  userId: string;
  /** Chosen by the workflow (deterministically), so a retried delivery overwrites the same file. */
  urn: string;
  document: { name: string; fileFormat: string; deliveryMethod: string; path: string };
}

export interface Delivered {
  urn: string;
  name: string;
  path: string;
}

export function deliverActivity(deps: ActivityDeps) {
  /** Writes the finished file to its target. This is the only step that writes where the caller can see. */
  return async function deliver(input: DeliverInput): Promise<Delivered> {
    const { document } = input;
    if (document.deliveryMethod !== 'Storage') {
      throw callerFailure('NOT_SUPPORTED', `document.deliveryMethod ${document.deliveryMethod} is not available in this deployment yet`);
    }
    const name = outputFileName(document.name, document.fileFormat);
    const key = `subscriptions/${input.subscriptionId}/documents/${input.urn}`;
    // Inside the store (S3: a server-side copy): a large document never passes through this process.
    await deps.blobs.copy(input.source.key, key);
    await insertFile(deps.db, {
      id: input.urn,
      subscriptionId: input.subscriptionId,
      ownerId: input.userId,
      kind: 'document',
      fileName: name,
      path: document.path,
      contentType: input.source.contentType,
      size: input.source.size,
      sha256: input.source.sha256,
      blobKey: key,
      expiresDate: null,
    });
    return { urn: input.urn, name, path: document.path };
  };
}

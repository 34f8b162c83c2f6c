// The names a batch derives from its id, the same on every attempt: the urn of each row's document and of
// the combined output (UUIDv5: a retried write lands on the same file), and each row's scratch key.
import { createHash } from 'node:crypto';
import { batchScratch, type BatchRun } from '../../core/batch.ts';

/** UUIDv5 (RFC 9562) of `name` in `namespace`: a row's document urn, the same whichever attempt writes it. */
export function uuidv5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The urn of row `row`'s document, and of the combined output. */
export const rowUrn = (batchId: string, row: number) => uuidv5(batchId, `row:${row}`);
export const combinedUrn = (batchId: string) => uuidv5(batchId, 'combined');

/** Where row `row`'s document waits in the batch's scratch (for its write, and the combined output). */
export function rowDocKey(run: Pick<BatchRun, 'workflowId' | 'document'>, row: number): string {
  return `${batchScratch(run.workflowId)}docs/${String(row).padStart(7, '0')}.${run.document.fileFormat}`;
}

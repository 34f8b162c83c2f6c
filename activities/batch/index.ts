// The steps of a batch (workflows/batch.ts), one file each. Rows never travel through Temporal: admission
// reads the data file once, as it streams, into pages of rows in the batch's scratch (claim check), and each
// chunk activity reads its page and generates its rows one after another, heartbeating the last row done.
//   admission.ts  prepareBatch (local): the batch's own copy of the templates; rows read into pages and
//                 counted; the first rows merged and named (a problem is the request's 400); the batch row
//   rows.ts       one row, as a single generate: name -> merge -> [convert] -> count pages || write (the urn
//                 is a UUIDv5 of batch and row) -> record the document and metering, then the row's entry;
//                 a failure described as the row's entry
//   chunk.ts      generateBatchChunk (normal activity, batch task queue): a page of rows; a row already
//                 recorded is skipped, so a retried chunk resumes after its last row and never writes a row
//                 twice; the cancel read between rows; heartbeats carry the last row and progress
//   combine.ts    combineBatch (normal activity): the zip or merged PDF of every done row, written and
//                 recorded once (zip.ts, pdf.ts)
//   finish.ts     finishBatch (local): the batch's status, its uploads consumed, its scratch removed
//   ids.ts        the urns and scratch keys derived from the batch
import { admission } from './admission.ts';
import { chunks } from './chunk.ts';
import { combining } from './combine.ts';
import type { BatchDeps } from './deps.ts';
import { finishing } from './finish.ts';
import { rowSteps } from './rows.ts';

export type { PrepareBatchInput, PrepareBatchResult } from './admission.ts';
export type { ChunkHeartbeat, ChunkInput, ChunkResult } from './chunk.ts';
export type { CombineInput } from './combine.ts';
export type { BatchDeps } from './deps.ts';
export type { FinishBatchInput } from './finish.ts';
export { combinedUrn, rowUrn, uuidv5 } from './ids.ts';

export function batchActivities(deps: BatchDeps) {
  const rows = rowSteps(deps);
  return {
    ...admission(deps, rows),
    ...chunks(deps, rows),
    ...combining(deps),
    ...finishing(deps),
  };
}

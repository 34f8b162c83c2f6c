// A batch's cancel, as the rows see it: `cancel_requested_date` is set by POST /documents/batch/{id}/cancel
// before the workflow is cancelled, and every chunk reads it between rows (activities/batch/chunk.ts), so no row
// starts after the cancel, whatever the chunk's size or when its heartbeat brings Temporal's cancellation.
export const m010 = {
  version: 10,
  name: 'batch-cancel',
  sql: `
ALTER TABLE batches ADD COLUMN cancel_requested_date timestamptz;
`,
};

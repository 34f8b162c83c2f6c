// Upload retention by one periodic sweep (workflows/retention.ts uploadSweeper) instead of a sleeping
// workflow per upload. `erased_date`: when the sweep erased the upload's bytes (and marked the row removed,
// if a generate had not already); rows whose period is over and that are not erased yet are the sweep's
// work, found through the partial index. Uploads made before this migration are swept too (their own timers,
// still sleeping, find nothing left to do).
export const m008 = {
  version: 8,
  name: 'upload-sweep',
  sql: `
ALTER TABLE stored_files ADD COLUMN erased_date timestamptz;
CREATE INDEX stored_files_to_erase ON stored_files(expires_date) WHERE erased_date IS NULL AND expires_date IS NOT NULL;
`,
};

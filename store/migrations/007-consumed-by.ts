// The workflow run (its run id) that consumed an upload (spec 3: a generate consumes the uploads it names). The row is marked
// removed at once, so the urn stops resolving for everyone else; the same run still resolves it, so a step
// that runs again after a lost workflow task reads what the first execution read. The bytes are erased when
// the upload's retention period ends (workflows/retention.ts).
export const m007 = {
  version: 7,
  name: 'consumed-by',
  sql: `
ALTER TABLE stored_files ADD COLUMN consumed_by text;
`,
};

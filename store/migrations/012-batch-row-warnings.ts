// A done batch row's warnings (GET /documents/batch/{id}/rows: a row's e-invoice warnings, EINVOICE_RULE), as
// JSON text of the API's GenerateWarning list; NULL for none.
export const m012 = {
  version: 12,
  name: 'batch-row-warnings',
  sql: `
ALTER TABLE batch_rows ADD COLUMN warnings text;
`,
};

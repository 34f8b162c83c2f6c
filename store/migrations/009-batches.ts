// Batches (POST /documents/document/generate/batch, extension): one row per batch with its counters and
// outcome, and one row per processed row of the batch, done (with its document) or failed (with the code
// and message). A row's entry is written in the same transaction as its document record and metering, and
// the counters move only when the entry is new, so a row processed again after a crash counts once.
export const m009 = {
  version: 9,
  name: 'batches',
  sql: `
CREATE TABLE batches (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  user_id uuid NOT NULL,
  workflow_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'stopped', 'failed')),
  rows_total integer NOT NULL,
  rows_done integer NOT NULL DEFAULT 0,
  rows_failed integer NOT NULL DEFAULT 0,
  pages integer NOT NULL DEFAULT 0,
  file_format text NOT NULL,
  delivery_method text NOT NULL DEFAULT '',
  combined_format text NOT NULL DEFAULT '',
  combined_urn text NOT NULL DEFAULT '',
  combined_name text NOT NULL DEFAULT '',
  combined_pages integer,
  error_code text NOT NULL DEFAULT '',
  error_message text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  progress_date timestamptz,
  ended_date timestamptz
);
CREATE INDEX batches_subscription ON batches(subscription_id, created_date);

CREATE TABLE batch_rows (
  batch_id uuid NOT NULL REFERENCES batches(id),
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  row_number integer NOT NULL,
  status text NOT NULL CHECK (status IN ('done', 'failed')),
  urn text NOT NULL DEFAULT '',
  name text NOT NULL DEFAULT '',
  path text NOT NULL DEFAULT '',
  pages integer NOT NULL DEFAULT 0,
  code text NOT NULL DEFAULT '',
  message text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (batch_id, row_number)
);
CREATE INDEX batch_rows_failed ON batch_rows(batch_id, row_number) WHERE status = 'failed';
`,
};

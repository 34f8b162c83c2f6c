// The write journal of external locations (store/location-writes.ts): per subscription, location and the
// urn the workflow chose for a write, what an earlier attempt already did (an upload session, the file's
// external id, whether it has its final name), so a retried delivery finds its file instead of adding one.
export const m006 = {
  version: 6,
  name: 'location-writes',
  sql: `
CREATE TABLE location_writes (
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  location text NOT NULL,
  urn text NOT NULL,
  state text NOT NULL CHECK (state IN ('uploading', 'uploaded', 'placed')),
  item_id text,
  upload_url text,
  updated_date timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (subscription_id, location, urn)
);
`,
};

// Connections of a subscription to its drives and CRM (connectors/connections.ts): one per kind, secrets
// sealed with the service key.
export const m004 = {
  version: 4,
  name: 'connections',
  sql: `
CREATE TABLE connections (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  kind text NOT NULL,
  settings jsonb NOT NULL,
  sealed_secrets text NOT NULL,
  secret_names jsonb NOT NULL,
  created_by uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, kind)
);
`,
};

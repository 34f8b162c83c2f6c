export const m001 = {
  version: 1,
  name: 'initial',
  sql: `
CREATE TABLE subscriptions (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE,
  created_date timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  name text NOT NULL,
  email text NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_subscription ON users(subscription_id);

-- API keys are stored as SHA-256 digests only; the prefix lets operators recognise a key without the secret.
CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  user_id uuid NOT NULL REFERENCES users(id),
  prefix text NOT NULL,
  digest text NOT NULL UNIQUE,
  created_date timestamptz NOT NULL DEFAULT now(),
  revoked_date timestamptz
);

-- Asymmetric keys that sign local bearer tokens (embedded default; an identity provider's JWKS replaces them).
CREATE TABLE signing_keys (
  kid text PRIMARY KEY,
  alg text NOT NULL,
  private_jwk jsonb NOT NULL,
  public_jwk jsonb NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now()
);

-- Every file the service holds: uploaded templates and data, and delivered documents (Storage target).
CREATE TABLE stored_files (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  kind text NOT NULL CHECK (kind IN ('template', 'data', 'document')),
  file_name text NOT NULL,
  path text NOT NULL DEFAULT '',
  content_type text NOT NULL,
  size bigint NOT NULL,
  sha256 text NOT NULL,
  blob_key text NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now(),
  expires_date timestamptz,
  removed_date timestamptz
);
CREATE INDEX stored_files_subscription ON stored_files(subscription_id, kind);

-- Generated document records (spec 2.5).
CREATE TABLE documents (
  document_guid uuid PRIMARY KEY,
  subscription_guid uuid NOT NULL REFERENCES subscriptions(id),
  owner_guid uuid NOT NULL,
  last_modified_user_guid uuid NOT NULL,
  operation_id text NOT NULL,
  title text NOT NULL DEFAULT '',
  urn text NOT NULL DEFAULT '',
  url text NOT NULL DEFAULT '',
  path text NOT NULL DEFAULT '',
  file_format text NOT NULL DEFAULT '',
  delivery_method text NOT NULL DEFAULT '',
  view_anonymous_link text NOT NULL DEFAULT '',
  edit_anonymous_link text NOT NULL DEFAULT '',
  view_user_link text NOT NULL DEFAULT '',
  edit_user_link text NOT NULL DEFAULT '',
  view_organization_link text NOT NULL DEFAULT '',
  edit_organization_link text NOT NULL DEFAULT '',
  succeeded_view_user_email_list text NOT NULL DEFAULT '',
  succeeded_edit_user_email_list text NOT NULL DEFAULT '',
  failed_view_user_email_list text NOT NULL DEFAULT '',
  failed_edit_user_email_list text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  is_deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX documents_subscription ON documents(subscription_guid);
-- A workflow retried after a crash records its document once.
CREATE UNIQUE INDEX documents_operation ON documents(subscription_guid, operation_id);

-- Metering: one row per metered event (spec 8: pages/documents generated/managed).
CREATE TABLE consumption (
  id bigserial PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  user_id uuid NOT NULL,
  operation_id text NOT NULL,
  dimension text NOT NULL,
  value integer NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now(),
  UNIQUE (operation_id, dimension)
);
CREATE INDEX consumption_subscription ON consumption(subscription_id, created_date);
`,
};

// Configuration records of spec 4.3-4.6: document solutions, solution configurations, templates, data
// sources, their links to solutions, and option values. Every row carries its subscription and every
// query filters on it; deletes are soft (is_deleted), so a deleted record keeps its history.
export const m002 = {
  version: 2,
  name: 'records',
  sql: `
CREATE TABLE document_solutions (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  is_deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX document_solutions_subscription ON document_solutions(subscription_id, created_date);

CREATE TABLE solution_configurations (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  document_solution_id uuid REFERENCES document_solutions(id),
  owner_id uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  title text NOT NULL DEFAULT '',
  file_format text NOT NULL DEFAULT '',
  processing_type text NOT NULL DEFAULT '',
  delivery_method text NOT NULL DEFAULT '',
  path text NOT NULL DEFAULT '',
  pdf_conformance_level text NOT NULL DEFAULT '',
  pdf_version text NOT NULL DEFAULT '',
  language text NOT NULL DEFAULT '',
  locale text NOT NULL DEFAULT '',
  time_zone text NOT NULL DEFAULT '',
  embedded_data text NOT NULL DEFAULT '',
  view_anonymous boolean NOT NULL DEFAULT false,
  edit_anonymous boolean NOT NULL DEFAULT false,
  view_organization boolean NOT NULL DEFAULT false,
  edit_organization boolean NOT NULL DEFAULT false,
  view_user boolean NOT NULL DEFAULT false,
  edit_user boolean NOT NULL DEFAULT false,
  view_user_email_list text NOT NULL DEFAULT '',
  edit_user_email_list text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  is_deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX solution_configurations_subscription ON solution_configurations(subscription_id, created_date);

CREATE TABLE document_templates (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  title text NOT NULL DEFAULT '',
  urn text NOT NULL DEFAULT '',
  url text NOT NULL DEFAULT '',
  file_format text NOT NULL DEFAULT '',
  load_method text NOT NULL DEFAULT '',
  path text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  is_deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX document_templates_subscription ON document_templates(subscription_id, created_date);

CREATE TABLE data_sources (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  urn text NOT NULL DEFAULT '',
  load_method text NOT NULL,
  query text NOT NULL DEFAULT '',
  variables text NOT NULL DEFAULT '',
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  is_deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX data_sources_subscription ON data_sources(subscription_id, created_date);

-- Links carry the subscription too, so a join can never cross tenants even if ids were guessed.
CREATE TABLE solution_templates (
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  document_solution_id uuid NOT NULL REFERENCES document_solutions(id),
  document_template_id uuid NOT NULL REFERENCES document_templates(id),
  created_date timestamptz NOT NULL DEFAULT now(),
  seq bigserial NOT NULL,
  PRIMARY KEY (document_solution_id, document_template_id)
);
CREATE INDEX solution_templates_template ON solution_templates(subscription_id, document_template_id);

CREATE TABLE solution_data_sources (
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  document_solution_id uuid NOT NULL REFERENCES document_solutions(id),
  data_source_id uuid NOT NULL REFERENCES data_sources(id),
  created_date timestamptz NOT NULL DEFAULT now(),
  seq bigserial NOT NULL,
  PRIMARY KEY (document_solution_id, data_source_id)
);
CREATE INDEX solution_data_sources_source ON solution_data_sources(subscription_id, data_source_id);

CREATE TABLE option_values (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  entity_type text NOT NULL,
  entity_id uuid NOT NULL,
  option_definition_id integer,
  custom_key text,
  custom_group text NOT NULL DEFAULT '',
  value text NOT NULL DEFAULT '',
  owner_id uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now(),
  is_deleted boolean NOT NULL DEFAULT false,
  -- Insertion order: a replace writes its whole set in one transaction, where created_date (now()) is
  -- the same for every row; the set reads back in the order it was sent.
  seq bigserial NOT NULL,
  CHECK ((option_definition_id IS NULL) <> (custom_key IS NULL))
);
CREATE INDEX option_values_entity ON option_values(subscription_id, entity_type, entity_id);
`,
};

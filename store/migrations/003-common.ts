// Common utilities and signatures (spec 2.7-2.11, 4.1, 4.2): metering plans and their limits, user
// contacts, folders, and envelopes with their documents, recipients, sign groups and fields. Every row
// carries its subscription (plans are shared catalogue data; a subscription points at one).
//
// The seed is the embedded default plan: the four metered dimensions of spec 8 with monthly and yearly
// limits for the subscription and for each user. -1 means unlimited.
const PLAN = '6f1c0d2e-0000-4000-8000-000000000001';

interface SeedDimension {
  name: string;
  displayName: string;
  groups: string[];
  pricePerUnit: number | null;
  sortOrder: number;
  category: { name: string; description: string; sortOrder: number };
  subCategory: { name: string; description: string };
  /** [subscription monthly, subscription yearly, user monthly, user yearly] */
  limits: [number, number, number, number];
}

const DIMENSIONS: SeedDimension[] = [
  {
    name: 'pages-generated',
    displayName: 'Pages generated',
    groups: ['Generation', 'Pages'],
    pricePerUnit: 0.01,
    sortOrder: 1,
    category: { name: 'Generation', description: 'Documents produced by the generate operations', sortOrder: 1 },
    subCategory: { name: 'Pages', description: 'Counted per page of output' },
    limits: [1000, 12000, 250, 3000],
  },
  {
    name: 'documents-generated',
    displayName: 'Documents generated',
    groups: ['Generation', 'Documents'],
    pricePerUnit: null,
    sortOrder: 2,
    category: { name: 'Generation', description: 'Documents produced by the generate operations', sortOrder: 1 },
    subCategory: { name: 'Documents', description: 'Counted per output document' },
    limits: [500, 6000, 100, 1200],
  },
  {
    name: 'pages-managed',
    displayName: 'Pages managed',
    groups: ['Management', 'Pages'],
    pricePerUnit: 0.005,
    sortOrder: 3,
    category: { name: 'Management', description: 'Files copied, moved, deleted or converted by the manage operation', sortOrder: 2 },
    subCategory: { name: 'Pages', description: 'Counted per page of output' },
    limits: [-1, -1, -1, -1],
  },
  {
    name: 'documents-managed',
    displayName: 'Documents managed',
    groups: ['Management', 'Documents'],
    pricePerUnit: null,
    sortOrder: 4,
    category: { name: 'Management', description: 'Files copied, moved, deleted or converted by the manage operation', sortOrder: 2 },
    subCategory: { name: 'Documents', description: 'Counted per output document' },
    limits: [2000, 24000, 500, 6000],
  },
];

const q = (s: string) => `'${s.replace(/'/g, "''")}'`;

function seed(): string {
  const out: string[] = [`INSERT INTO plans (id, key, name) VALUES ('${PLAN}', 'default', 'Default plan');`];
  DIMENSIONS.forEach((d, di) => {
    out.push(
      `INSERT INTO plan_dimensions (plan_id, name, display_name, groups, price_per_unit, sort_order) VALUES ('${PLAN}', ${q(d.name)}, ${q(d.displayName)}, ARRAY[${d.groups.map(q).join(', ')}]::text[], ${d.pricePerUnit ?? 'NULL'}, ${d.sortOrder});`,
    );
    const entries: [string, string, number, number][] = [
      ['subscription', 'monthly', d.limits[0], 2],
      ['subscription', 'yearly', d.limits[1], 2],
      ['user', 'monthly', d.limits[2], 1],
      ['user', 'yearly', d.limits[3], 1],
    ];
    entries.forEach(([audience, period, value, priority], ei) => {
      // Fixed ids, so a limit keeps its id across databases and overrides can name it.
      const id = `6f1c0d2e-0001-4000-8000-${String(di * 10 + ei + 1).padStart(12, '0')}`;
      const scope = audience === 'subscription' ? 'Subscription' : 'User';
      out.push(
        `INSERT INTO plan_limits (id, plan_id, dimension, audience, period, key, value, application, scope_name, scope_priority,
           category_name, category_description, category_sort_order, sub_category_name, sub_category_description, sub_category_sort_order, group_key, group_name)
         VALUES ('${id}', '${PLAN}', ${q(d.name)}, '${audience}', '${period}', ${q(`${d.name}.${audience}.${period}`)}, ${value}, 'MD', '${scope}', ${priority},
           ${q(d.category.name)}, ${q(d.category.description)}, ${d.category.sortOrder}, ${q(d.subCategory.name)}, ${q(d.subCategory.description)}, 0,
           ${q(`${audience}-${period}`)}, ${q(`${scope} ${period}`)});`,
      );
    });
  });
  return out.join('\n');
}

export const m003 = {
  version: 3,
  name: 'common',
  sql: `
CREATE TABLE plans (
  id uuid PRIMARY KEY,
  key text NOT NULL UNIQUE,
  name text NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now()
);

-- A subscription without a row here is on the plan with key 'default'.
CREATE TABLE subscription_plans (
  subscription_id uuid PRIMARY KEY REFERENCES subscriptions(id),
  plan_id uuid NOT NULL REFERENCES plans(id)
);

CREATE TABLE plan_dimensions (
  plan_id uuid NOT NULL REFERENCES plans(id),
  name text NOT NULL,
  display_name text NOT NULL,
  groups text[] NOT NULL DEFAULT '{}',
  price_per_unit double precision,
  sort_order integer NOT NULL DEFAULT 0,
  PRIMARY KEY (plan_id, name)
);

-- One limit entry of spec 2.9; value -1 is unlimited.
CREATE TABLE plan_limits (
  id uuid PRIMARY KEY,
  plan_id uuid NOT NULL,
  dimension text NOT NULL,
  audience text NOT NULL CHECK (audience IN ('subscription', 'user')),
  period text NOT NULL CHECK (period IN ('monthly', 'yearly')),
  key text NOT NULL,
  value bigint NOT NULL,
  application text NOT NULL,
  scope_id uuid,
  scope_name text NOT NULL,
  scope_priority integer NOT NULL DEFAULT 0,
  category_id uuid,
  category_name text NOT NULL DEFAULT '',
  category_description text NOT NULL DEFAULT '',
  category_sort_order integer NOT NULL DEFAULT 0,
  sub_category_id uuid,
  sub_category_name text NOT NULL DEFAULT '',
  sub_category_description text NOT NULL DEFAULT '',
  sub_category_sort_order integer NOT NULL DEFAULT 0,
  group_key text NOT NULL DEFAULT '',
  group_name text NOT NULL DEFAULT '',
  FOREIGN KEY (plan_id, dimension) REFERENCES plan_dimensions(plan_id, name)
);
CREATE INDEX plan_limits_plan ON plan_limits(plan_id, dimension);

-- A subscription's negotiated value for one limit; the plan's value stays its defaultValue.
CREATE TABLE subscription_limit_overrides (
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  limit_id uuid NOT NULL REFERENCES plan_limits(id),
  value bigint NOT NULL,
  PRIMARY KEY (subscription_id, limit_id)
);

CREATE TABLE user_contacts (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  name text NOT NULL,
  email text NOT NULL,
  shared_with_account boolean NOT NULL DEFAULT false,
  created_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_contacts_subscription ON user_contacts(subscription_id, owner_id);

CREATE TABLE folders (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  last_modified_user_id uuid NOT NULL,
  name text NOT NULL,
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX folders_subscription ON folders(subscription_id, created_date);

-- A signature template is an envelope with status Template (spec 3).
CREATE TABLE envelopes (
  id uuid PRIMARY KEY,
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  owner_id uuid NOT NULL,
  name text NOT NULL,
  status text NOT NULL,
  send_date timestamptz,
  expiration_date timestamptz,
  created_date timestamptz NOT NULL DEFAULT now(),
  last_modified_date timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX envelopes_subscription ON envelopes(subscription_id, owner_id, status);

CREATE TABLE envelope_documents (
  id uuid PRIMARY KEY,
  envelope_id uuid NOT NULL REFERENCES envelopes(id),
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  name text NOT NULL,
  file_format text NOT NULL DEFAULT '',
  sort_order integer NOT NULL DEFAULT 0
);
CREATE INDEX envelope_documents_envelope ON envelope_documents(envelope_id);

CREATE TABLE envelope_sign_groups (
  id uuid PRIMARY KEY,
  envelope_id uuid NOT NULL REFERENCES envelopes(id),
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  name text NOT NULL,
  sort_order integer NOT NULL DEFAULT 0
);
CREATE INDEX envelope_sign_groups_envelope ON envelope_sign_groups(envelope_id);

CREATE TABLE envelope_recipients (
  id uuid PRIMARY KEY,
  envelope_id uuid NOT NULL REFERENCES envelopes(id),
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  sign_group_id uuid REFERENCES envelope_sign_groups(id),
  user_id uuid,
  name text NOT NULL,
  email text NOT NULL,
  status text NOT NULL DEFAULT 'Pending',
  action text NOT NULL DEFAULT '',
  action_date timestamptz,
  sort_order integer NOT NULL DEFAULT 0
);
CREATE INDEX envelope_recipients_envelope ON envelope_recipients(envelope_id);
CREATE INDEX envelope_recipients_person ON envelope_recipients(subscription_id, lower(email));

CREATE TABLE envelope_fields (
  id uuid PRIMARY KEY,
  envelope_id uuid NOT NULL REFERENCES envelopes(id),
  subscription_id uuid NOT NULL REFERENCES subscriptions(id),
  document_id uuid REFERENCES envelope_documents(id),
  recipient_id uuid REFERENCES envelope_recipients(id),
  type text NOT NULL,
  page integer NOT NULL DEFAULT 1,
  x double precision NOT NULL DEFAULT 0,
  y double precision NOT NULL DEFAULT 0,
  value text NOT NULL DEFAULT ''
);
CREATE INDEX envelope_fields_envelope ON envelope_fields(envelope_id);

${seed()}
`,
};

// Rate limits every API process shares (issue 36, section 2): one token bucket per scope (the subscription
// limit, the public routes, failed authentications) and key (a subscription id, a client address), taken
// with one UPSERT (store/rate-buckets.ts). Times are the database's clock, so processes on machines with
// different clocks count alike. Buckets that have refilled are deleted now and then: they carry nothing.
export const m011 = {
  version: 11,
  name: 'rate-buckets',
  sql: `
CREATE TABLE rate_buckets (
  scope text NOT NULL,
  key text NOT NULL,
  tokens double precision NOT NULL,
  at_ms double precision NOT NULL,
  granted boolean NOT NULL,
  PRIMARY KEY (scope, key)
);
`,
};

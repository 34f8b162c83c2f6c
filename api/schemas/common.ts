// Common utilities (spec 4.1, 2.7 - 2.10): limits, summaries, user contacts, folders, the client and service
// tokens (5.2, 5.3), and the connections of the drives and the CRM (extension).
import Type, { type TSchema } from 'typebox';
import { CONNECTION_KINDS } from '../../connectors/registry.ts';
import { DASHBOARD_LIST_SIZE, EXPIRING_DAYS } from '../../store/common/envelopes.ts';
import { FOLDER_SORT } from '../../store/common/folders.ts';
import { component, stringEnum } from './components.ts';
import { errorResponses, successEnvelope } from './envelopes.ts';
import * as examples from './examples.ts';
import { UuidParam } from './records.ts';

const TAG = 'Common';

export const SCOPES = ['Global', 'User', 'Subscription', 'Account'] as const;
export const APPLICATIONS = ['MDS', 'MD', 'MCLM', 'MHCW', 'MH'] as const;
export const SUMMARY_TYPES = ['dashboard', 'self-service'] as const;

const CREDENTIALS_NOTE =
  'Credential failures answer 401 UNAUTHORIZED in the error envelope, as section 5.1 says for every operation (section 7 also mentions VALIDATION_ERROR bodies for 401/403 of summary and contacts; this service uses the 5.1 codes everywhere).';

// ---- limits (2.9) ----

const Category = Type.Object({
  id: Type.Optional(Type.String({ format: 'uuid', description: 'Omitted when empty' })),
  name: Type.String(),
  description: Type.String(),
  sortOrder: Type.Optional(Type.Integer({ description: 'Omitted when 0' })),
});
const LimitEntry = Type.Object({
  id: Type.String({ format: 'uuid' }),
  key: Type.String({ description: 'e.g. pages-generated.subscription.monthly' }),
  value: Type.String({ description: 'The effective limit as a string (semantically an integer); "-1" is unlimited' }),
  defaultValue: Type.String({ description: "The plan's value, before any subscription-specific override" }),
  meta: Type.Object({
    application: Type.String(),
    scope: Type.Object({
      id: Type.Optional(Type.String({ format: 'uuid', description: 'Omitted when empty' })),
      name: Type.String({ description: 'Subscription for subscriptionLimits, User for userLimits in the default plan' }),
      priority: Type.Optional(Type.Integer({ description: 'Omitted when 0' })),
    }),
    category: Category,
    subCategory: Category,
    group: Type.Object({ key: Type.String(), name: Type.String() }),
  }),
});
const Periods = Type.Object({ monthly: Type.Array(LimitEntry), yearly: Type.Array(LimitEntry) });

export const MeteredDimensionSetting = component(
  'MeteredDimensionSetting',
  Type.Object({
    name: Type.String({ description: 'Raw dimension name, e.g. pages-generated' }),
    allocatedResources: Type.String({
      description:
        'Display text, not a number: the subscription\'s monthly limit (e.g. "1,000 per month"), else its yearly one ("12,000 per year"), else "Unlimited"',
    }),
    displayName: Type.String(),
    groups: Type.String({ description: 'Comma-joined group names' }),
    pricePerUnit: Type.Optional(Type.Number({ description: 'Omitted when the dimension has no price' })),
    subscriptionLimits: Periods,
    userLimits: Periods,
  }),
);

export const getLimits = {
  operationId: 'getLimits',
  tags: [TAG],
  summary: 'Get the metered-dimension limits',
  description: [
    "Lists every metered dimension of the subscription's plan (pages-generated, documents-generated, pages-managed, documents-managed) with its subscription and user limits, monthly and yearly, read from the plan tables (the embedded default plan is seeded by the migrations; a subscription-specific override changes `value`, the plan's value stays `defaultValue`).",
    '`scope` (Global, User, Subscription, Account) and `application` (MDS, MD, MCLM, MHCW, MH), case-insensitive, keep only the limit entries whose meta.scope.name / meta.application match; the dimensions are listed whatever the filter. In the default plan subscription limits have scope Subscription, user limits scope User, and every entry application MD, so Global or Account, or another application, give empty limit arrays.',
    'Unknown scope: 400 INVALID_SCOPE_VALUE; unknown application: 400 INVALID_APPLICATION_VALUE.',
    "`subscriptionId` must be the caller's own subscription (a caller belongs to exactly one): any other value, existing or not, gives 403 AUTHORIZATION_ERROR, so the answer never reveals whether another subscription exists; a non-uuid gives 400 VALIDATION_ERROR.",
  ].join(' '),
  querystring: Type.Object({
    scope: Type.Optional(Type.String({ maxLength: 100, description: `${SCOPES.join(', ')} (case-insensitive)` })),
    application: Type.Optional(Type.String({ maxLength: 100, description: `${APPLICATIONS.join(', ')} (case-insensitive)` })),
    subscriptionId: Type.Optional(Type.String({ format: 'uuid', description: "The caller's own subscription" })),
  }),
  response: { 200: successEnvelope(Type.Object({ settings: Type.Array(MeteredDimensionSetting) })), ...errorResponses(400, 401, 403, 500) },
};

// ---- summary (2.10 and the self-service extension) ----

export const DashboardSummary = component(
  'DashboardSummary',
  Type.Object(
    {
      todo: Type.Integer({ description: 'Sent envelopes where the caller is a recipient who has not acted yet' }),
      pending: Type.Integer({ description: "The caller's sent envelopes still waiting for another recipient" }),
      inbox: Type.Integer({ description: 'Envelopes the caller received (any status except Draft and Template)' }),
      expiring: Type.Integer({ description: `The caller's own or received sent envelopes expiring within ${EXPIRING_DAYS} days` }),
      completed: Type.Integer({ description: "The caller's own or received completed envelopes" }),
      recentEnvelopes: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String(), status: Type.String() }), {
        description: `The ${DASHBOARD_LIST_SIZE} most recently modified envelopes (own, or received), templates excluded`,
      }),
      oldestTodoEnvelopes: Type.Array(
        Type.Object({
          id: Type.String({ format: 'uuid' }),
          name: Type.String(),
          sendDate: Type.String({ format: 'date-time' }),
          userName: Type.String({ description: 'The sender' }),
          tid: Type.String({ format: 'uuid', description: 'The subscription (tenant) of the envelope' }),
        }),
        { description: `The ${DASHBOARD_LIST_SIZE} oldest to-do envelopes, oldest first` },
      ),
      latestPendingEnvelopes: Type.Array(
        Type.Object({
          id: Type.String({ format: 'uuid' }),
          name: Type.String(),
          action: Type.String({ description: 'The latest recipient action, e.g. Viewed; Sent when no recipient has acted yet' }),
          timestamp: Type.String({ format: 'date-time' }),
          person: Type.String({ description: 'Who acted (the sender for Sent)' }),
        }),
        { description: `The ${DASHBOARD_LIST_SIZE} pending envelopes with the latest activity, latest first` },
      ),
    },
    { description: 'Dashboard (2.10), computed from the envelopes of the caller' },
  ),
);

const NullableInt = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });
const Usage = Type.Object({
  used: Type.Integer({ description: 'Consumed by the whole subscription in the period' }),
  userUsed: Type.Integer({ description: 'Consumed by the caller in the period' }),
  limit: NullableInt('The subscription limit of the period; null when unlimited'),
  remaining: NullableInt('limit - used, at least 0; null when unlimited'),
  userLimit: NullableInt('The per-user limit of the period; null when unlimited'),
  userRemaining: NullableInt('userLimit - userUsed, at least 0; null when unlimited'),
});
const Period = Type.Object({
  start: Type.String({ format: 'date-time' }),
  end: Type.String({ format: 'date-time', description: 'Exclusive' }),
});

export const SelfServiceSummary = component(
  'SelfServiceSummary',
  Type.Object(
    {
      month: Period,
      year: Period,
      dimensions: Type.Array(Type.Object({ name: Type.String(), displayName: Type.String(), monthly: Usage, yearly: Usage })),
    },
    {
      description:
        'Self-service (extension; the spec does not show its fields): consumption of every metered dimension in the current UTC calendar month and year, for the subscription and for the caller, against the limits of GET /common/limits/get.',
    },
  ),
);

export const getSummary = {
  operationId: 'getSummary',
  tags: [TAG],
  summary: 'Get the dashboard or self-service summary',
  description: `\`type\` is required: dashboard or self-service, case-insensitive; missing or unknown gives 400 INVALID_SUMMARY_TYPE. dashboard answers the shape of 2.10 computed from the caller's envelopes (see POST /signatures/envelope/create); self-service answers the consumption shape described on its schema. ${CREDENTIALS_NOTE}`,
  querystring: Type.Object({
    type: Type.Optional(
      Type.String({ maxLength: 100, description: 'dashboard or self-service (case-insensitive)', examples: ['dashboard'] }),
    ),
  }),
  response: { 200: successEnvelope(Type.Union([DashboardSummary, SelfServiceSummary])), ...errorResponses(400, 401, 500) },
};

// ---- contacts (2.7) ----

export const UserContact = component(
  'UserContact',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    email: Type.String(),
    sharedWithAccount: Type.Boolean({ description: 'Visible to every user of the subscription, not only its owner' }),
    subscriptionUserGuid: Type.String({ format: 'uuid', description: 'The user the contact belongs to' }),
  }),
);

export const UserContactInput = component(
  'UserContactInput',
  Type.Object({
    name: Type.Optional(Type.String({ maxLength: 500, description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
    email: Type.String({ maxLength: 320, examples: ['ada@example.com'] }),
    sharedWithAccount: Type.Optional(Type.Boolean({ description: 'Default false' })),
  }),
);

const oneContact = successEnvelope(Type.Object({ userContact: UserContact }));

export const createUserContact = {
  operationId: 'createUserContact',
  tags: [TAG],
  summary: 'Create a user contact (extension)',
  description:
    'The spec shows no way to create contacts; this one does. Body `{userContact: {name, email, sharedWithAccount?}}`. `name` is required (400 DATA_NAME_REQUIRED); `email` must be one e-mail address (400 VALIDATION_ERROR). The contact belongs to the caller (subscriptionUserGuid); shared with the account, every user of the subscription sees it. Answers 201 with result.data.userContact.',
  body: Type.Object({ userContact: UserContactInput }),
  response: { 201: oneContact, ...errorResponses(400, 401, 500) },
};

export const listUserContacts = {
  operationId: 'listUserContacts',
  tags: [TAG],
  summary: 'List the user contacts',
  description: `The whole list in one response, no paging, sorting or filtering (spec 8): the caller's own contacts and those other users of the subscription shared with the account, by name. ${CREDENTIALS_NOTE}`,
  response: { 200: successEnvelope(Type.Object({ userContacts: Type.Array(UserContact) })), ...errorResponses(400, 401, 500) },
};

export const getUserContact = {
  operationId: 'getUserContact',
  tags: [TAG],
  summary: 'Get a user contact',
  description: `A non-uuid userContactId gives 400 VALIDATION_ERROR naming it; an unknown contact, another user's unshared contact or another subscription's gives 404 NOT_FOUND_BY_ID. ${CREDENTIALS_NOTE}`,
  params: Type.Object({ userContactId: UuidParam('The contact') }),
  response: { 200: oneContact, ...errorResponses(400, 401, 404, 500) },
};

// ---- folders (2.8) ----

export const Folder = component('Folder', Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }));
const FolderParams = Type.Object({ folderId: UuidParam('The folder') });
const FolderBody = Type.Object({
  folder: Type.Object({
    name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED', examples: ['Invoices'] })),
  }),
});
const FOLDER_ERRORS =
  "Errors use the error envelope. An unknown folder, or another subscription's, gives 400 ENVELOPE_ID_INVALID with the spec's message `Envelope not found.` (section 7 names that code for folder operations with an unknown id); a non-uuid folderId gives 400 VALIDATION_ERROR.";

export const createFolder = {
  operationId: 'createFolder',
  tags: [TAG],
  summary: 'Create a folder (extension)',
  description: `The spec shows no way to create folders; this one does. Body \`{folder: {name}}\` like update; \`name\` is required (400 DATA_NAME_REQUIRED). Answers 201 with the folder operations' own body \`{folder: {id, name}}\`, no success envelope (spec 2.1). Folders are shared by the users of a subscription. ${FOLDER_ERRORS}`,
  body: FolderBody,
  response: { 201: Type.Object({ folder: Folder }), ...errorResponses(400, 401, 500) },
};

export const listFolders = {
  operationId: 'listFolders',
  tags: [TAG],
  summary: 'List folders',
  description: `Body \`{folder: [{id, name}]}\`, no success envelope (spec 2.1). \`top\` page size (default 100, at most 1000), \`skip\` folders to skip, \`sort\` one of ${Object.keys(FOLDER_SORT).join(', ')} (case-insensitive, default Name), \`order\` ASC or DESC (case-insensitive, default ASC). An unknown sort column or order gives 400 VALIDATION_ERROR. ${FOLDER_ERRORS}`,
  querystring: Type.Object({
    top: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 100)' })),
    skip: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Folders to skip' })),
    sort: Type.Optional(Type.String({ maxLength: 100, description: `${Object.keys(FOLDER_SORT).join(', ')}` })),
    order: Type.Optional(Type.String({ maxLength: 10, description: 'ASC or DESC' })),
  }),
  response: { 200: Type.Object({ folder: Type.Array(Folder) }), ...errorResponses(400, 401, 500) },
};

export const getFolder = {
  operationId: 'getFolder',
  tags: [TAG],
  summary: 'Get a folder',
  description: `Body \`{folder: {id, name}}\`, no success envelope (spec 2.1). ${FOLDER_ERRORS}`,
  params: FolderParams,
  response: { 200: Type.Object({ folder: Folder }), ...errorResponses(400, 401, 500) },
};

export const updateFolder = {
  operationId: 'updateFolder',
  tags: [TAG],
  summary: 'Rename a folder',
  description: `Body \`{folder: {name}}\`; \`name\` is required (400 DATA_NAME_REQUIRED). Answers \`{folder: {id, message}}\`, no success envelope (spec 2.1). ${FOLDER_ERRORS}`,
  params: FolderParams,
  body: FolderBody,
  response: {
    200: Type.Object({ folder: Type.Object({ id: Type.String({ format: 'uuid' }), message: Type.String() }) }),
    ...errorResponses(400, 401, 500),
  },
};

// ---- client and service tokens (5.2, 5.3) ----

const claim = (description: string, example?: string) =>
  Type.String({ minLength: 1, maxLength: 4096, description, ...(example ? { examples: [example] } : {}) });

export const ClientClaims = component(
  'ClientClaims',
  Type.Object(
    {
      sub: claim('Access token the service presents to the callback endpoint (Authorization: Bearer <sub>)', examples.clientClaims.sub),
      iss: claim('Base URL of the callback service (http or https)', examples.clientClaims.iss),
      dest: claim('Route of the callback endpoint; the callback URL is iss joined with dest', examples.clientClaims.dest),
      oid: Type.Optional(claim('Identifier of the callback service')),
      client_id: Type.Optional(claim('Identifier of the calling client')),
      full_name: Type.Optional(claim("Caller's name")),
      email: Type.Optional(claim("Caller's e-mail address")),
      locale: Type.Optional(claim("Caller's locale")),
      zoneinfo: Type.Optional(claim("Caller's time zone")),
    },
    {
      additionalProperties: false,
      description: 'Timing claims (iat, exp) are set by the service and cannot be sent.',
      examples: [examples.clientClaims],
    },
  ),
);

export const ClientToken = component(
  'ClientToken',
  Type.Object({
    token: Type.String({ description: 'Value for the X-Client-Authorization header' }),
    webhookSecret: Type.String({
      description: 'Extension: Standard Webhooks secret of the callbacks',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
    expiresAt: Type.String({ format: 'date-time', description: 'Extension: when the token stops being accepted by new requests' }),
  }),
);

export const ServiceClaims = component(
  'ServiceClaims',
  Type.Object(
    {
      sub: Type.String({
        format: 'uuid',
        description:
          "The user's id in this subscription (a UUID): recorded as the owner of what the user's manage requests write. A new UUID becomes a user of the subscription with its first token; another subscription's user id or the nil UUID is a 400",
      }),
      email: claim("The user's e-mail address (name@domain, as the X-Email header of manage)", 'ada@example.com'),
      full_name: Type.Optional(claim("The user's name", 'Ada Lovelace')),
    },
    { additionalProperties: false, description: 'Timing claims (iat, exp) are set by the service and cannot be sent.' },
  ),
);

export const ServiceToken = component(
  'ServiceToken',
  Type.Object({
    token: Type.String({ description: 'Value for the X-Service-Authorization header of manage' }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the token stops being accepted' }),
  }),
);

export const createClientToken = {
  operationId: 'createClientToken',
  tags: [TAG],
  summary: 'Create the client-authorization token',
  description: [
    'Validates the claims, signs them (JWS ES256 with the service key) and encrypts the result (JWE dir + A256GCM), returning the value to send in the `X-Client-Authorization` header of `POST /documents/document/generate/async`.',
    'The callback of an async generate is a POST to iss joined with dest, with `Authorization: Bearer <sub>` and the Standard Webhooks headers `webhook-id` (stable across retries: deduplicate on it), `webhook-timestamp` and `webhook-signature`.',
    'The callback target must be reachable by the service: a loopback, private, link-local or cloud-metadata address, or a name that resolves to one or to nothing, is refused with 400 X_CLIENT_AUTH_ERROR unless the OUTBOUND_ALLOW setting lists it (the same rule applies when an async generate is requested and when the callback is delivered).',
    'Extension: `webhookSecret` (`whsec_<base64 key>`) verifies those signatures: `webhook-signature` is `v1,` followed by base64(HMAC-SHA256(base64-decoded key, "<webhook-id>.<webhook-timestamp>.<raw body>")); any Standard Webhooks library does this. The secret is the same for every token of the subscription (until the service key rotates).',
  ].join('\n\n'),
  body: ClientClaims,
  response: { 200: successEnvelope(ClientToken), ...errorResponses(400, 401) },
};

export const createServiceToken = {
  operationId: 'createServiceToken',
  tags: [TAG],
  summary: 'Create a service-authorization token (extension)',
  description: [
    "Extension (spec 5.2 names the header, not how its value is made). For a user who has no account at the identity provider but may use the subscription: the subscription's backend vouches for the user with this token and sends it in the `X-Service-Authorization` header of `POST /documents/document/manage`; the user (sub) then acts: owner of the document record, metered user, user in the workflow summary.",
    "The user (sub) is a user of the subscription: the first token made for a new UUID registers it (a user without an API key or bearer token of its own), later tokens name the same user. The id of another subscription's user and the nil UUID answer 400 VALIDATION_ERROR naming sub; an email that is not an e-mail address, 400 naming email. A manage whose token names a user the subscription does not know answers 401.",
    'Format: the claims (sub, email, full_name, sid = the subscription, iat, exp) signed as a JWS (ES256, typ `docgen-service+jwt`, the service signing key) inside a JWE (`dir` + `A256GCM`, kid = the signing key) whose key is derived from the service key under a label of its own. Lifetime: CLIENT_TOKEN_TTL_SECONDS.',
  ].join('\n\n'),
  body: ServiceClaims,
  response: { 200: successEnvelope(ServiceToken), ...errorResponses(400, 401) },
};

// ---- connections (extension) ----

const CONNECTION_TAG = 'Connections';
/** The kinds the registered locations need (connectors/registry.ts). */
export const KIND_NAMES = [...CONNECTION_KINDS.keys()];

export const Connection = component(
  'Connection',
  Type.Object({
    id: Type.String({ format: 'uuid', description: 'Stays the same when the connection is replaced' }),
    kind: stringEnum(KIND_NAMES),
    settings: Type.Object({}, { additionalProperties: true, description: 'What was sent, without the secrets' }),
    secrets: Type.Array(Type.String(), { description: 'Names of the stored secrets (their values are never returned)' }),
    createdDate: Type.String({ format: 'date-time' }),
    lastModifiedDate: Type.String({ format: 'date-time' }),
    lastModifiedUserGuid: Type.String({ format: 'uuid' }),
  }),
);

const KindParam = Type.Object({ kind: Type.String({ maxLength: 40, description: KIND_NAMES.join(', ') }) });
const oneConnection = successEnvelope(Type.Object({ connection: Connection }));

/** PUT /common/connection/{name}: one operation per kind, each documenting its own body. */
export function putConnection(name: string, method: string, body: TSchema) {
  const fields = Object.keys((body as { properties?: Record<string, unknown> }).properties ?? {});
  return {
    operationId: `putConnection${name[0]?.toUpperCase()}${name.slice(1)}`,
    tags: [CONNECTION_TAG],
    summary: `Connect ${method} (extension)`,
    description: [
      `Creates or replaces the subscription's ${name} connection; body \`{connection: {...}}\`. Answers 201 when created, 200 when replaced (the id stays).`,
      `${(body as { description?: string }).description ?? ''}. Fields: ${fields.join(', ')}.`,
      'Secrets (client secrets, private keys, refresh tokens) are sealed with the service key at rest, never returned, never logged and never put into a workflow: a generate or manage carries the connection id and the step that talks to the drive opens it. Endpoints are service settings (DRIVEA_GRAPH_URL, DRIVEA_LOGIN_URL, DRIVEB_API_URL, DRIVEB_TOKEN_URL, CRM_LOGIN_HOSTS), never values of a connection.',
      'A missing or malformed field answers 400 VALIDATION_ERROR naming it (`connection.<field>`).',
    ].join('\n\n'),
    // Every kind's body is an object; its fields are the kind's parser's to check.
    body: Type.Object({ connection: Type.Unsafe<Record<string, unknown>>(body) }),
    response: { 200: oneConnection, 201: oneConnection, ...errorResponses(400, 401, 500) },
  };
}

export const listConnections = {
  operationId: 'listConnections',
  tags: [CONNECTION_TAG],
  summary: "List the subscription's connections (extension)",
  description: "Every connection of the caller's subscription, by kind, with its settings and the names (never the values) of its secrets.",
  response: { 200: successEnvelope(Type.Object({ connections: Type.Array(Connection) })), ...errorResponses(400, 401, 500) },
};

export const getConnection = {
  operationId: 'getConnection',
  tags: [CONNECTION_TAG],
  summary: 'Get a connection (extension)',
  description: 'The connection of that kind, without its secrets; 404 NOT_FOUND_BY_ID when the subscription has none.',
  params: KindParam,
  response: { 200: oneConnection, ...errorResponses(400, 401, 404, 500) },
};

export const deleteConnection = {
  operationId: 'deleteConnection',
  tags: [CONNECTION_TAG],
  summary: 'Delete a connection (extension)',
  description:
    'Removes the connection and its sealed secrets. Requests that need it answer 400 CONNECTION_MISSING from then on; a generate or manage already queued with it fails with CONNECTION_MISSING at its next step that needs the drive. 404 NOT_FOUND_BY_ID when there was none.',
  params: KindParam,
  response: {
    200: successEnvelope(Type.Object({ kind: stringEnum(KIND_NAMES), deleted: Type.Boolean() })),
    ...errorResponses(400, 401, 404, 500),
  },
};

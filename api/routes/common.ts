// Common utilities (spec 4.1): metered-dimension limits, dashboard and self-service summaries, user
// contacts and folders. The client token lives in client-token.ts. Unexpected failures answer 500
// FUNCTION_EXECUTION_ERROR (the API-wide handler), as spec 7 gives for common operations.
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import { createContact, getContact, listContacts } from '../../store/common/contacts.ts';
import { DASHBOARD_LIST_SIZE, EXPIRING_DAYS, getDashboard } from '../../store/common/envelopes.ts';
import { createFolder, FOLDER_SORT, type FolderSort, getFolder, listFolders, renameFolder } from '../../store/common/folders.ts';
import { getSelfService, getSettings } from '../../store/common/limits.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import { success } from '../envelope.ts';
import { checkEmailList, pageNumber, requireName, UuidParam } from '../lists.ts';
import { errorResponses, successEnvelope } from '../schemas.ts';

const TAG = 'Common';

export const SCOPES = ['Global', 'User', 'Subscription', 'Account'] as const;
export const APPLICATIONS = ['MDS', 'MD', 'MCLM', 'MHCW', 'MH'] as const;
export const SUMMARY_TYPES = ['dashboard', 'self-service'] as const;

/** The canonical spelling of a case-insensitive value, or undefined. */
function canonical<T extends string>(values: readonly T[], raw: string): T | undefined {
  return values.find((v) => v.toLowerCase() === raw.trim().toLowerCase());
}

const quote = (s: string) => JSON.stringify(s.slice(0, 80));

const CREDENTIALS_NOTE =
  'Credential failures answer 401 UNAUTHORIZED in the error envelope, as section 5.1 says for every operation (section 7 also mentions VALIDATION_ERROR bodies for 401/403 of summary and contacts; this service uses the 5.1 codes everywhere).';

// --- limits (2.9) ---

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
export const Setting = Type.Object({
  name: Type.String({ description: 'Raw dimension name, e.g. pages-generated' }),
  allocatedResources: Type.String({
    description: "Display text, not a number: the subscription's monthly limit (e.g. \"1,000 per month\"), else its yearly one (\"12,000 per year\"), else \"Unlimited\"",
  }),
  displayName: Type.String(),
  groups: Type.String({ description: 'Comma-joined group names' }),
  pricePerUnit: Type.Optional(Type.Number({ description: 'Omitted when the dimension has no price' })),
  subscriptionLimits: Periods,
  userLimits: Periods,
});

// --- summary (2.10 and the self-service extension) ---

export const Dashboard = Type.Object(
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
        action: Type.String({ description: "The latest recipient action, e.g. Viewed; Sent when no recipient has acted yet" }),
        timestamp: Type.String({ format: 'date-time' }),
        person: Type.String({ description: 'Who acted (the sender for Sent)' }),
      }),
      { description: `The ${DASHBOARD_LIST_SIZE} pending envelopes with the latest activity, latest first` },
    ),
  },
  { description: 'Dashboard (2.10), computed from the envelopes of the caller' },
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
const Period = Type.Object({ start: Type.String({ format: 'date-time' }), end: Type.String({ format: 'date-time', description: 'Exclusive' }) });
const SelfService = Type.Object(
  {
    month: Period,
    year: Period,
    dimensions: Type.Array(Type.Object({ name: Type.String(), displayName: Type.String(), monthly: Usage, yearly: Usage })),
  },
  {
    description:
      'Self-service (extension; the spec does not show its fields): consumption of every metered dimension in the current UTC calendar month and year, for the subscription and for the caller, against the limits of GET /common/limits/get.',
  },
);

// --- contacts (2.7) and folders (2.8) ---

export const Contact = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  email: Type.String(),
  sharedWithAccount: Type.Boolean({ description: 'Visible to every user of the subscription, not only its owner' }),
  subscriptionUserGuid: Type.String({ format: 'uuid', description: 'The user the contact belongs to' }),
});
export const Folder = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() });
const FolderParams = Type.Object({ folderId: UuidParam('The folder') });
const FolderBody = Type.Object({ folder: Type.Object({ name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })) }) });
const FOLDER_NOT_FOUND = 'Envelope not found.';
const FOLDER_ERRORS =
  "Errors use the error envelope. An unknown folder, or another subscription's, gives 400 ENVELOPE_ID_INVALID with the spec's message `Envelope not found.` (section 7 names that code for folder operations with an unknown id); a non-uuid folderId gives 400 VALIDATION_ERROR.";

export default async function commonRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;

  app.get(
    '/common/limits/get',
    {
      schema: {
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
        response: { 200: successEnvelope(Type.Object({ settings: Type.Array(Setting) })), ...errorResponses(400, 401, 403, 500) },
      },
    },
    async (request) => {
      const q = request.query as { scope?: string; application?: string; subscriptionId?: string };
      let scope: string | undefined;
      let application: string | undefined;
      if (q.scope !== undefined && q.scope.trim() !== '') {
        scope = canonical(SCOPES, q.scope);
        if (!scope) throw new ApiError('INVALID_SCOPE_VALUE', `scope: ${quote(q.scope)} is not one of ${SCOPES.join(', ')}`);
      }
      if (q.application !== undefined && q.application.trim() !== '') {
        application = canonical(APPLICATIONS, q.application);
        if (!application) throw new ApiError('INVALID_APPLICATION_VALUE', `application: ${quote(q.application)} is not one of ${APPLICATIONS.join(', ')}`);
      }
      if (q.subscriptionId !== undefined && q.subscriptionId.toLowerCase() !== request.auth.subscriptionId.toLowerCase()) {
        throw new ApiError('AUTHORIZATION_ERROR', 'subscriptionId: the caller does not belong to this subscription');
      }
      const settings = await getSettings(db, request.auth.subscriptionId, { scope, application });
      return success(request, 200, { settings });
    },
  );

  app.get(
    '/common/summary',
    {
      schema: {
        tags: [TAG],
        summary: 'Get the dashboard or self-service summary',
        description: `\`type\` is required: dashboard or self-service, case-insensitive; missing or unknown gives 400 INVALID_SUMMARY_TYPE. dashboard answers the shape of 2.10 computed from the caller's envelopes (see POST /signatures/envelope/create); self-service answers the consumption shape described on its schema. ${CREDENTIALS_NOTE}`,
        querystring: Type.Object({ type: Type.Optional(Type.String({ maxLength: 100, description: 'dashboard or self-service (case-insensitive)' })) }),
        response: { 200: successEnvelope(Type.Union([Dashboard, SelfService])), ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const { type } = request.query as { type?: string };
      const t = type === undefined ? undefined : canonical(SUMMARY_TYPES, type);
      if (!t) {
        throw new ApiError('INVALID_SUMMARY_TYPE', type === undefined ? 'type: is required (dashboard or self-service)' : `type: ${quote(type)} is not dashboard or self-service`);
      }
      const { subscriptionId, userId } = request.auth;
      const data = t === 'dashboard' ? await getDashboard(db, subscriptionId, userId) : await getSelfService(db, subscriptionId, userId);
      return success(request, 200, data as unknown as Record<string, unknown>);
    },
  );

  app.post(
    '/common/user/contact/create',
    {
      schema: {
        tags: [TAG],
        summary: 'Create a user contact (extension)',
        description:
          'The spec shows no way to create contacts; this one does. Body `{userContact: {name, email, sharedWithAccount?}}`. `name` is required (400 DATA_NAME_REQUIRED); `email` must be one e-mail address (400 VALIDATION_ERROR). The contact belongs to the caller (subscriptionUserGuid); shared with the account, every user of the subscription sees it. Answers 201 with result.data.userContact.',
        body: Type.Object({
          userContact: Type.Object({
            name: Type.Optional(Type.String({ maxLength: 500 })),
            email: Type.String({ maxLength: 320 }),
            sharedWithAccount: Type.Optional(Type.Boolean({ description: 'Default false' })),
          }),
        }),
        response: { 201: successEnvelope(Type.Object({ userContact: Contact })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request, reply) => {
      const { userContact: c } = request.body as { userContact: { name?: string; email: string; sharedWithAccount?: boolean } };
      const name = requireName(c.name, 'userContact.');
      const email = c.email.trim();
      if (email === '' || email.includes(',')) throw new ApiError('VALIDATION_ERROR', 'userContact.email: one e-mail address is required');
      checkEmailList(email, 'userContact.email');
      const created = await createContact(db, request.auth.subscriptionId, request.auth.userId, { name, email, sharedWithAccount: c.sharedWithAccount === true });
      return reply.code(201).send(success(request, 201, { userContact: created }));
    },
  );

  app.get(
    '/common/user/contact/list',
    {
      schema: {
        tags: [TAG],
        summary: 'List the user contacts',
        description: `The whole list in one response, no paging, sorting or filtering (spec 8): the caller's own contacts and those other users of the subscription shared with the account, by name. ${CREDENTIALS_NOTE}`,
        response: { 200: successEnvelope(Type.Object({ userContacts: Type.Array(Contact) })), ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => success(request, 200, { userContacts: await listContacts(db, request.auth.subscriptionId, request.auth.userId) }),
  );

  app.get(
    '/common/user/contact/:userContactId/get',
    {
      schema: {
        tags: [TAG],
        summary: 'Get a user contact',
        description: `A non-uuid userContactId gives 400 VALIDATION_ERROR naming it; an unknown contact, another user's unshared contact or another subscription's gives 404 NOT_FOUND_BY_ID. ${CREDENTIALS_NOTE}`,
        params: Type.Object({ userContactId: UuidParam('The contact') }),
        response: { 200: successEnvelope(Type.Object({ userContact: Contact })), ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const { userContactId: id } = request.params as { userContactId: string };
      const c = await getContact(db, request.auth.subscriptionId, request.auth.userId, id);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `no user contact ${id}`);
      return success(request, 200, { userContact: c });
    },
  );

  app.post(
    '/common/folder/create',
    {
      schema: {
        tags: [TAG],
        summary: 'Create a folder (extension)',
        description: `The spec shows no way to create folders; this one does. Body \`{folder: {name}}\` like update; \`name\` is required (400 DATA_NAME_REQUIRED). Answers 201 with the folder operations' own body \`{folder: {id, name}}\`, no success envelope (spec 2.1). Folders are shared by the users of a subscription. ${FOLDER_ERRORS}`,
        body: FolderBody,
        response: { 201: Type.Object({ folder: Folder }), ...errorResponses(400, 401, 500) },
      },
    },
    async (request, reply) => {
      const { folder } = request.body as { folder: { name?: string } };
      const created = await createFolder(db, request.auth.subscriptionId, request.auth.userId, requireName(folder.name, 'folder.'));
      return reply.code(201).send({ folder: created });
    },
  );

  app.get(
    '/common/folder/list',
    {
      schema: {
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
      },
    },
    async (request) => {
      const q = request.query as { top?: number; skip?: number; sort?: string; order?: string };
      const sortKeys = Object.keys(FOLDER_SORT) as FolderSort[];
      let sort: FolderSort = 'Name';
      if (q.sort !== undefined && q.sort.trim() !== '') {
        const s = canonical(sortKeys, q.sort);
        if (!s) throw new ApiError('VALIDATION_ERROR', `sort: unknown column ${quote(q.sort)}; known columns: ${sortKeys.join(', ')}`);
        sort = s;
      }
      let order: 'ASC' | 'DESC' = 'ASC';
      if (q.order !== undefined && q.order.trim() !== '') {
        const o = canonical(['ASC', 'DESC'] as const, q.order);
        if (!o) throw new ApiError('VALIDATION_ERROR', `order: ${quote(q.order)} must be ASC or DESC`);
        order = o;
      }
      return { folder: await listFolders(db, request.auth.subscriptionId, { top: pageNumber('top', q.top, 100, 1, 1000), skip: pageNumber('skip', q.skip, 0, 0, 1_000_000_000), sort, order }) };
    },
  );

  app.get(
    '/common/folder/:folderId/get',
    {
      schema: {
        tags: [TAG],
        summary: 'Get a folder',
        description: `Body \`{folder: {id, name}}\`, no success envelope (spec 2.1). ${FOLDER_ERRORS}`,
        params: FolderParams,
        response: { 200: Type.Object({ folder: Folder }), ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const { folderId: id } = request.params as { folderId: string };
      const f = isUuid(id) ? await getFolder(db, request.auth.subscriptionId, id) : undefined;
      if (!f) throw new ApiError('ENVELOPE_ID_INVALID', FOLDER_NOT_FOUND);
      return { folder: f };
    },
  );

  app.put(
    '/common/folder/:folderId/update',
    {
      schema: {
        tags: [TAG],
        summary: 'Rename a folder',
        description: `Body \`{folder: {name}}\`; \`name\` is required (400 DATA_NAME_REQUIRED). Answers \`{folder: {id, message}}\`, no success envelope (spec 2.1). ${FOLDER_ERRORS}`,
        params: FolderParams,
        body: FolderBody,
        response: { 200: Type.Object({ folder: Type.Object({ id: Type.String({ format: 'uuid' }), message: Type.String() }) }), ...errorResponses(400, 401, 500) },
      },
    },
    async (request) => {
      const { folderId: id } = request.params as { folderId: string };
      const { folder } = request.body as { folder: { name?: string } };
      const name = requireName(folder.name, 'folder.');
      const f = await renameFolder(db, request.auth.subscriptionId, request.auth.userId, id, name);
      if (!f) throw new ApiError('ENVELOPE_ID_INVALID', FOLDER_NOT_FOUND);
      return { folder: { id: f.id, message: 'Folder updated.' } };
    },
  );
}

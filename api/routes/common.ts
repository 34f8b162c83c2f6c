// Common utilities (spec 4.1): metered-dimension limits, dashboard and self-service summaries, user
// contacts and folders. The client token lives in client-token.ts. Unexpected failures answer 500
// FUNCTION_EXECUTION_ERROR (the API-wide handler), as spec 7 gives for common operations. The schemas and
// their prose are in api/schemas/common.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../core/errors.ts';
import { createContact, getContact, listContacts } from '../../store/common/contacts.ts';
import { getDashboard } from '../../store/common/envelopes.ts';
import { createFolder, FOLDER_SORT, type FolderSort, getFolder, listFolders, renameFolder } from '../../store/common/folders.ts';
import { getSelfService, getSettings } from '../../store/common/limits.ts';
import type { Db } from '../../store/db.ts';
import { isUuid } from '../../store/files.ts';
import { success } from '../envelope.ts';
import { checkEmailList, pageNumber, requireName } from '../lists.ts';
import * as S from '../schemas/common.ts';
import { APPLICATIONS, SCOPES, SUMMARY_TYPES } from '../schemas/common.ts';

/** The canonical spelling of a case-insensitive value, or undefined. */
function canonical<T extends string>(values: readonly T[], raw: string): T | undefined {
  return values.find((v) => v.toLowerCase() === raw.trim().toLowerCase());
}

const quote = (s: string) => JSON.stringify(s.slice(0, 80));

const FOLDER_NOT_FOUND = 'Envelope not found.';

const commonRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;

  app.get(
    '/common/limits/get',
    {
      schema: S.getLimits,
    },
    async (request) => {
      const q = request.query;
      let scope: string | undefined;
      let application: string | undefined;
      if (q.scope !== undefined && q.scope.trim() !== '') {
        scope = canonical(SCOPES, q.scope);
        if (!scope) throw new ApiError('INVALID_SCOPE_VALUE', `scope: ${quote(q.scope)} is not one of ${SCOPES.join(', ')}`);
      }
      if (q.application !== undefined && q.application.trim() !== '') {
        application = canonical(APPLICATIONS, q.application);
        if (!application)
          throw new ApiError('INVALID_APPLICATION_VALUE', `application: ${quote(q.application)} is not one of ${APPLICATIONS.join(', ')}`);
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
      schema: S.getSummary,
    },
    async (request) => {
      const { type } = request.query;
      const t = type === undefined ? undefined : canonical(SUMMARY_TYPES, type);
      if (!t) {
        throw new ApiError(
          'INVALID_SUMMARY_TYPE',
          type === undefined ? 'type: is required (dashboard or self-service)' : `type: ${quote(type)} is not dashboard or self-service`,
        );
      }
      const { subscriptionId, userId } = request.auth;
      const data = t === 'dashboard' ? await getDashboard(db, subscriptionId, userId) : await getSelfService(db, subscriptionId, userId);
      return success(request, 200, data);
    },
  );

  app.post(
    '/common/user/contact/create',
    {
      schema: S.createUserContact,
    },
    async (request, reply) => {
      const { userContact: c } = request.body;
      const name = requireName(c.name, 'userContact.');
      const email = c.email.trim();
      if (email === '' || email.includes(',')) throw new ApiError('VALIDATION_ERROR', 'userContact.email: one e-mail address is required');
      checkEmailList(email, 'userContact.email');
      const created = await createContact(db, request.auth.subscriptionId, request.auth.userId, {
        name,
        email,
        sharedWithAccount: c.sharedWithAccount === true,
      });
      return reply.code(201).send(success(request, 201, { userContact: created }));
    },
  );

  app.get(
    '/common/user/contact/list',
    {
      schema: S.listUserContacts,
    },
    async (request) => success(request, 200, { userContacts: await listContacts(db, request.auth.subscriptionId, request.auth.userId) }),
  );

  app.get(
    '/common/user/contact/:userContactId/get',
    {
      schema: S.getUserContact,
    },
    async (request) => {
      const { userContactId: id } = request.params;
      const c = await getContact(db, request.auth.subscriptionId, request.auth.userId, id);
      if (!c) throw new ApiError('NOT_FOUND_BY_ID', `no user contact ${id}`);
      return success(request, 200, { userContact: c });
    },
  );

  app.post(
    '/common/folder/create',
    {
      schema: S.createFolder,
    },
    async (request, reply) => {
      const { folder } = request.body;
      const created = await createFolder(db, request.auth.subscriptionId, request.auth.userId, requireName(folder.name, 'folder.'));
      return reply.code(201).send({ folder: created });
    },
  );

  app.get(
    '/common/folder/list',
    {
      schema: S.listFolders,
    },
    async (request) => {
      const q = request.query;
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
      return {
        folder: await listFolders(db, request.auth.subscriptionId, {
          top: pageNumber('top', q.top, 100, 1, 1000),
          skip: pageNumber('skip', q.skip, 0, 0, 1_000_000_000),
          sort,
          order,
        }),
      };
    },
  );

  app.get(
    '/common/folder/:folderId/get',
    {
      schema: S.getFolder,
    },
    async (request) => {
      const { folderId: id } = request.params;
      const f = isUuid(id) ? await getFolder(db, request.auth.subscriptionId, id) : undefined;
      if (!f) throw new ApiError('ENVELOPE_ID_INVALID', FOLDER_NOT_FOUND);
      return { folder: f };
    },
  );

  app.put(
    '/common/folder/:folderId/update',
    {
      schema: S.updateFolder,
    },
    async (request) => {
      const { folderId: id } = request.params;
      const { folder } = request.body;
      const name = requireName(folder.name, 'folder.');
      const f = await renameFolder(db, request.auth.subscriptionId, request.auth.userId, id, name);
      if (!f) throw new ApiError('ENVELOPE_ID_INVALID', FOLDER_NOT_FOUND);
      return { folder: { id: f.id, message: 'Folder updated.' } };
    },
  );
};

export default commonRoutes;

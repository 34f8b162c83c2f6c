// Data sources (spec 4.5): create with best-effort linking and the Id spelling, list with the Guid
// spelling, soft delete, and the strict add-link with its empty 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { clause, expectError, expectOk, filterQuery, UNKNOWN_ID } from './helpers.ts';

describe('data sources', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  let solution: { id: string };

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    other = client(await stack.credentials('other'));
    solution = expectOk(
      await api.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'CRM', description: 'crm docs' } } }),
      201,
    ).documentSolution;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const createRes = (dataSource: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    api.call('POST', '/documents/datasource/create', { json: { dataSource, ...extra } });
  const create = async (dataSource: Record<string, unknown>) => expectOk(await createRes(dataSource), 201).dataSource;
  const members = async (id: string) =>
    expectOk(await api.call('GET', `/documents/solution/${id}/get`)).documentSolution.dataSources.map((d: any) => d.id);

  describe('4.5 create', () => {
    it('201 in the Id spelling with owner names, linked solutions and externalContext', async () => {
      const res = await createRes(
        {
          name: 'Customers',
          loadMethod: 'GraphQL',
          description: 'd',
          urn: 'https://api.example.com/graphql',
          query: '{ customers { name } }',
          variables: '{"n":1}',
          documentSolutions: [{ id: solution.id }],
        },
        { externalContext: { trace: 'x' } },
      );
      const d = expectOk(res, 201).dataSource;
      expect(res.body.externalContext).toEqual({ trace: 'x' });
      expect(d).toMatchObject({
        name: 'Customers',
        loadMethod: 'GraphQL',
        query: '{ customers { name } }',
        variables: '{"n":1}',
        subscriptionId: creds.subscriptionId,
        ownerId: creds.userId,
        lastModifiedUserId: creds.userId,
        ownerName: 'default developer',
        lastModifiedUserName: 'default developer',
        documentSolutions: [{ id: solution.id, name: 'CRM', description: 'crm docs' }],
      });
      expect(Object.keys(d).sort()).toEqual(
        [
          'id',
          'subscriptionId',
          'ownerId',
          'lastModifiedUserId',
          'name',
          'description',
          'urn',
          'loadMethod',
          'query',
          'variables',
          'documentSolutions',
          'ownerName',
          'lastModifiedUserName',
          'createdDate',
          'lastModifiedDate',
        ].sort(),
      );
      expect(await members(solution.id)).toContain(d.id);
    });

    it('keeps query and variables only for GraphQL', async () => {
      const d = await create({ name: 'file', loadMethod: 'storage', urn: UNKNOWN_ID, query: '{ ignored }', variables: '{}' });
      expect(d).toMatchObject({ loadMethod: 'Storage', query: '', variables: '' });
    });

    it('linking on create is best-effort: unknown and foreign solutions skipped', async () => {
      const foreign = expectOk(
        await other.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'theirs' } } }),
        201,
      ).documentSolution;
      const d = await create({
        name: 'best effort',
        loadMethod: 'Storage',
        documentSolutions: [{ id: UNKNOWN_ID }, { id: foreign.id }, { id: 'bad' }],
      });
      expect(d.documentSolutions).toEqual([]);
    });

    it('ignores server-managed fields', async () => {
      const d = await create({
        name: 'managed',
        loadMethod: 'Storage',
        id: UNKNOWN_ID,
        ownerId: UNKNOWN_ID,
        isDeleted: true,
        createdDate: '2000-01-01T00:00:00.000Z',
      });
      expect(d.id).not.toBe(UNKNOWN_ID);
      expect(d.ownerId).toBe(creds.userId);
      expect(d.createdDate.startsWith('2000')).toBe(false);
    });

    it('DATA_NAME_REQUIRED without name; VALIDATION_ERROR for missing or unknown loadMethod', async () => {
      expectError(await createRes({ loadMethod: 'Storage' }), 400, 'DATA_NAME_REQUIRED');
      expectError(await createRes({ name: 'x' }), 400, 'VALIDATION_ERROR', 'loadMethod');
      expectError(await createRes({ name: 'x', loadMethod: 'Telepathy' }), 400, 'VALIDATION_ERROR', 'Telepathy');
    });
  });

  describe('4.5 list', () => {
    it('lists in the Guid spelling with isDeleted, pages and filters with rowCount', async () => {
      const mine = client(await stack.credentials('ds-lists'));
      for (const [name, loadMethod] of [
        ['Orders', 'Storage'],
        ['orders archive', 'GraphQL'],
        ['Stock', 'Storage'],
      ]) {
        expectOk(await mine.call('POST', '/documents/datasource/create', { json: { dataSource: { name, loadMethod } } }), 201);
      }
      const all = expectOk(await mine.call('GET', '/documents/datasource/list'));
      expect(all.rowCount).toBe(3);
      const item = all.dataSources[0];
      expect(Object.keys(item).sort()).toEqual(
        [
          'dataSourceGuid',
          'subscriptionGuid',
          'ownerGuid',
          'lastModifiedUserGuid',
          'name',
          'description',
          'urn',
          'loadMethod',
          'query',
          'variables',
          'createdDate',
          'lastModifiedDate',
          'isDeleted',
        ].sort(),
      );
      expect(item.isDeleted).toBe(false);
      const filtered = expectOk(
        await mine.call(
          'GET',
          `/documents/datasource/list?${filterQuery([clause('Name', 'CONTAINS', 'ORDERS')])}&orderby=Name|ASC&top=1&skip=1`,
        ),
      );
      expect(filtered.rowCount).toBe(2);
      expect(filtered.dataSources.map((d: any) => d.name)).toEqual(['orders archive']);
      expect(
        expectOk(await mine.call('GET', `/documents/datasource/list?${filterQuery([clause('LoadMethod', 'EQUALS', 'graphql')])}`)).rowCount,
      ).toBe(1);
    });

    it('rejects unknown columns and injection attempts with 400 in the envelope', async () => {
      expectError(
        await api.call('GET', `/documents/datasource/list?orderby=${encodeURIComponent('Name;DROP TABLE data_sources|ASC')}`),
        400,
        'VALIDATION_ERROR',
        'unknown column',
      );
      expectError(
        await api.call('GET', `/documents/datasource/list?${filterQuery([clause('1=1); DELETE FROM data_sources; --', 'EQUALS', 'x')])}`),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await api.call('GET', '/documents/datasource/list?orderby=Name|UP'), 400, 'VALIDATION_ERROR', 'UP');
      expect(expectOk(await api.call('GET', '/documents/datasource/list')).rowCount).toBeGreaterThan(0);
    });

    it("another subscription's list does not show them", async () => {
      await create({ name: 'secret source', loadMethod: 'Storage' });
      const theirs = expectOk(await other.call('GET', '/documents/datasource/list'));
      expect(theirs.dataSources.map((d: any) => d.name)).not.toContain('secret source');
      expect(theirs.dataSources.every((d: any) => d.subscriptionGuid !== creds.subscriptionId)).toBe(true);
    });
  });

  describe('4.5 delete', () => {
    it('soft-deletes: 200 {dataSourceGuid, message}, gone from list and solutions, row kept', async () => {
      const d = await create({ name: 'doomed source', loadMethod: 'Storage', documentSolutions: [{ id: solution.id }] });
      expectError(await other.call('DELETE', `/documents/datasource/${d.id}/delete`), 404, 'NOT_FOUND_BY_ID');
      expect(expectOk(await api.call('DELETE', `/documents/datasource/${d.id}/delete`))).toEqual({
        dataSourceGuid: d.id,
        message: expect.any(String),
      });
      expect(
        expectOk(await api.call('GET', `/documents/datasource/list?${filterQuery([clause('Name', 'EQUALS', 'doomed source')])}`)).rowCount,
      ).toBe(0);
      expect(await members(solution.id)).not.toContain(d.id);
      expectError(await api.call('DELETE', `/documents/datasource/${d.id}/delete`), 404, 'NOT_FOUND_BY_ID');
      const row = await stack.service.db.query<{ is_deleted: boolean }>('SELECT is_deleted FROM data_sources WHERE id = $1', [d.id]);
      expect(row.rows[0]?.is_deleted).toBe(true);
    });

    it('400 VALIDATION_ERROR naming a non-uuid id', async () => {
      expectError(await api.call('DELETE', '/documents/datasource/xyz/delete'), 400, 'VALIDATION_ERROR', 'dataSourceGuid');
    });
  });

  describe('4.5 add to solution (strict)', () => {
    it('links an existing data source: 200 {documentSolutionId, dataSourceId, message}; twice is harmless', async () => {
      const sol = expectOk(
        await api.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'Strict' } } }),
        201,
      ).documentSolution;
      const d = await create({ name: 'attach me', loadMethod: 'Storage', urn: 'u' });
      const path = `/documents/solution/${sol.id}/datasource/${d.id}/add`;
      expect(expectOk(await api.call('POST', path))).toEqual({
        documentSolutionId: sol.id,
        dataSourceId: d.id,
        message: expect.any(String),
      });
      expect(expectOk(await api.call('POST', path)).dataSourceId).toBe(d.id);
      expect(await members(sol.id)).toEqual([d.id]);
      // Attaching does not modify the data source.
      const listed = expectOk(
        await api.call('GET', `/documents/datasource/list?${filterQuery([clause('DataSourceGuid', 'EQUALS', d.id)])}`),
      ).dataSources[0];
      expect(listed.lastModifiedDate).toBe(d.lastModifiedDate);
    });

    it('404 with an empty body when either id is missing, deleted or foreign; nothing changes', async () => {
      const sol = expectOk(
        await api.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'Strict 2' } } }),
        201,
      ).documentSolution;
      const d = await create({ name: 'strict source', loadMethod: 'Storage' });
      const gone = await create({ name: 'gone', loadMethod: 'Storage' });
      expectOk(await api.call('DELETE', `/documents/datasource/${gone.id}/delete`));
      const theirSol = expectOk(
        await other.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'x' } } }),
        201,
      ).documentSolution;
      const cases: [ReturnType<typeof client>, string, string][] = [
        [api, UNKNOWN_ID, d.id],
        [api, sol.id, UNKNOWN_ID],
        [api, sol.id, gone.id],
        [api, theirSol.id, d.id],
        [other, theirSol.id, d.id],
      ];
      for (const [caller, s, ds] of cases) {
        const res = await caller.call('POST', `/documents/solution/${s}/datasource/${ds}/add`);
        expect(res.status).toBe(404);
        expect(res.body).toBeUndefined();
      }
      expect(await members(sol.id)).toEqual([]);
      const links = await stack.service.db.query('SELECT 1 FROM solution_data_sources WHERE data_source_id = $1', [d.id]);
      expect(links.rows).toEqual([]);
    });

    it('400 VALIDATION_ERROR naming a non-uuid id', async () => {
      expectError(
        await api.call('POST', `/documents/solution/nope/datasource/${UNKNOWN_ID}/add`),
        400,
        'VALIDATION_ERROR',
        'documentSolutionId',
      );
      expectError(await api.call('POST', `/documents/solution/${UNKNOWN_ID}/datasource/nope/add`), 400, 'VALIDATION_ERROR', 'dataSourceId');
    });
  });
  describe('unexpected failures (500 with the code of section 7 and an eventId)', () => {
    // A table that disappears under the service stands in for a database failure; restored afterwards.
    async function withoutTable(table: string, fn: () => Promise<void>) {
      await stack.service.db.exec(`ALTER TABLE ${table} RENAME TO ${table}_away`);
      try {
        await fn();
      } finally {
        await stack.service.db.exec(`ALTER TABLE ${table}_away RENAME TO ${table}`);
      }
    }

    it('create: CREATE_DATA_SOURCE_ERROR; list: GET_DATA_SOURCE_ERROR; add-link: ADD_DATA_SOURCE_TO_SOLUTION_ERROR', async () => {
      const d = await create({ name: 'before failure', loadMethod: 'Storage' });
      await withoutTable('data_sources', async () => {
        for (const [res, code] of [
          [await createRes({ name: 'x', loadMethod: 'Storage' }), 'CREATE_DATA_SOURCE_ERROR'],
          [await api.call('GET', '/documents/datasource/list'), 'GET_DATA_SOURCE_ERROR'],
          [await api.call('POST', `/documents/solution/${solution.id}/datasource/${d.id}/add`), 'ADD_DATA_SOURCE_TO_SOLUTION_ERROR'],
        ] as const) {
          expectError(res, 500, code);
          expect(res.body.error.innerErrors[0].eventId).toMatch(/^[0-9a-f-]{36}$/);
          expect(JSON.stringify(res.body)).not.toContain('data_sources');
        }
      });
      expect(expectOk(await api.call('GET', '/documents/datasource/list')).rowCount).toBeGreaterThan(0);
    });

    it('template create: CREATE_DOCUMENT_TEMPLATE_ERROR', async () => {
      await withoutTable('document_templates', async () => {
        const res = await api.call('POST', '/documents/template/create', {
          json: { documentTemplate: { name: 'x', url: 'https://x.example/t.docx' } },
        });
        expectError(res, 500, 'CREATE_DOCUMENT_TEMPLATE_ERROR');
        expect(res.body.error.innerErrors[0].eventId).toBeTruthy();
      });
    });

    it('configuration get and list: bare {code, message, eventId} with GET_DATA_SOURCE_ERROR', async () => {
      await withoutTable('solution_configurations', async () => {
        for (const res of [
          await api.call('GET', '/documents/configuration/list'),
          await api.call('GET', `/documents/configuration/${UNKNOWN_ID}/get`),
        ]) {
          expect(res.status).toBe(500);
          expect(res.body).toEqual({
            code: 'GET_DATA_SOURCE_ERROR',
            message: expect.any(String),
            eventId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          });
        }
      });
    });
  });
});

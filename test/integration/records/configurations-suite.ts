// Configuration operations (spec 4.3) and the list parameters (4.9), as one suite run on PGlite
// (configurations.test.ts) and on PostgreSQL (configurations.postgres.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { clause, expectError, expectOk, filterQuery, UNKNOWN_ID } from './helpers.ts';

const FULL = {
  name: 'Invoices',
  description: 'Monthly invoices',
  title: 'Invoice',
  fileFormat: 'pdf',
  processingType: 'STANDARD',
  deliveryMethod: 'Email',
  path: 'root/invoices',
  pdfConformanceLevel: 'PdfA2B',
  pdfVersion: '1.7',
  language: 'en',
  locale: 'en-US',
  timeZone: 'Europe/Paris',
  embeddedData: '{"customer":"ACME"}',
  viewAnonymous: true,
  editAnonymous: false,
  viewOrganization: true,
  editOrganization: false,
  viewUser: true,
  editUser: true,
  viewUserEmailList: 'a@example.com, b@example.com',
  editUserEmailList: 'c@example.com',
};

export function configurationSuite(database: 'pglite' | 'postgres') {
  describe(`document solution configurations and lists (${database})`, () => {
    let stack: Stack;
    let creds: Credentials;
    let api: ReturnType<typeof client>;
    let other: ReturnType<typeof client>;

    beforeAll(async () => {
      stack = await startStack({}, { database });
      creds = await stack.credentials();
      api = client(creds);
      other = client(await stack.credentials('other'));
    });
    afterAll(async () => {
      await stack?.stop();
    });

    const create = async (body: Record<string, unknown>) =>
      expectOk(await api.call('POST', '/documents/configuration/create', { json: body })).documentSolutionConfiguration;

    describe('4.3 create', () => {
      it('stores every field of 2.2 and returns it with server-assigned ids and dates (200)', async () => {
        const before = Date.now();
        const c = await create(FULL);
        expect(c).toMatchObject(FULL);
        expect(c.documentSolutionConfigurationGuid).toMatch(/^[0-9a-f-]{36}$/);
        expect(c).toMatchObject({
          subscriptionGuid: creds.subscriptionId,
          ownerGuid: creds.userId,
          lastModifiedUserGuid: creds.userId,
          isDeleted: false,
          documentSolutionGuid: null,
        });
        expect(Date.parse(c.createdDate)).toBeGreaterThanOrEqual(before - 5000);
        expect(c.createdDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(Object.keys(c).sort()).toEqual(
          [
            ...Object.keys(FULL),
            'documentSolutionConfigurationGuid',
            'documentSolutionGuid',
            'subscriptionGuid',
            'ownerGuid',
            'lastModifiedUserGuid',
            'createdDate',
            'lastModifiedDate',
            'isDeleted',
          ].sort(),
        );
      });

      it('ignores server-managed fields sent in the request', async () => {
        const c = await create({
          name: 'sneaky',
          documentSolutionConfigurationGuid: UNKNOWN_ID,
          subscriptionGuid: UNKNOWN_ID,
          ownerGuid: UNKNOWN_ID,
          createdDate: '2000-01-01T00:00:00.000Z',
          isDeleted: true,
        });
        expect(c.documentSolutionConfigurationGuid).not.toBe(UNKNOWN_ID);
        expect(c.subscriptionGuid).toBe(creds.subscriptionId);
        expect(c.ownerGuid).toBe(creds.userId);
        expect(c.createdDate).not.toBe('2000-01-01T00:00:00.000Z');
        expect(c.isDeleted).toBe(false);
        expect(c.description).toBe('');
        expect(c.viewAnonymous).toBe(false);
      });

      it('DATA_NAME_REQUIRED when name is missing or blank', async () => {
        expectError(await api.call('POST', '/documents/configuration/create', { json: { title: 'x' } }), 400, 'DATA_NAME_REQUIRED');
        expectError(await api.call('POST', '/documents/configuration/create', { json: { name: '   ' } }), 400, 'DATA_NAME_REQUIRED');
      });

      it('VALIDATION_ERROR naming the field for a wrong type, bad JSON text, bad time zone or e-mail list', async () => {
        expectError(
          await api.call('POST', '/documents/configuration/create', { json: { name: 'x', viewUser: 'perhaps' } }),
          400,
          'VALIDATION_ERROR',
          'viewUser',
        );
        expectError(
          await api.call('POST', '/documents/configuration/create', { json: { name: 'x', embeddedData: '{nope' } }),
          400,
          'VALIDATION_ERROR',
          'embeddedData',
        );
        expectError(
          await api.call('POST', '/documents/configuration/create', { json: { name: 'x', timeZone: 'Mars/Olympus' } }),
          400,
          'VALIDATION_ERROR',
          'timeZone',
        );
        expectError(
          await api.call('POST', '/documents/configuration/create', { json: { name: 'x', editUserEmailList: 'a@b.c, nobody' } }),
          400,
          'VALIDATION_ERROR',
          'editUserEmailList',
        );
        expectError(
          await api.call('POST', '/documents/configuration/create', { json: { name: 'x', documentSolutionGuid: UNKNOWN_ID } }),
          400,
          'VALIDATION_ERROR',
          'documentSolutionGuid',
        );
      });

      it('links to a document solution of the caller through documentSolutionGuid', async () => {
        const sol = expectOk(
          await api.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'Billing' } } }),
          201,
        ).documentSolution;
        const c = await create({ name: 'with solution', documentSolutionGuid: sol.id });
        expect(c.documentSolutionGuid).toBe(sol.id);
        // Another subscription cannot borrow it.
        expectError(
          await other.call('POST', '/documents/configuration/create', { json: { name: 'x', documentSolutionGuid: sol.id } }),
          400,
          'VALIDATION_ERROR',
        );
      });

      it('401 in the error envelope without credentials', async () => {
        const res = await fetch(`${creds.baseUrl}/documents/configuration/create`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"name":"x"}',
        });
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error.innerErrors[0].code).toBe('UNAUTHORIZED');
      });
    });

    describe('4.3 update', () => {
      it('replaces the fields, keeps ids and creation, bumps lastModifiedDate', async () => {
        const c = await create(FULL);
        await new Promise((r) => setTimeout(r, 10));
        const u = expectOk(
          await api.call('PUT', `/documents/configuration/${c.documentSolutionConfigurationGuid}/update`, {
            json: { name: 'Renamed', fileFormat: 'docx', createdDate: '2000-01-01T00:00:00.000Z' },
          }),
        ).documentSolutionConfiguration;
        expect(u).toMatchObject({
          documentSolutionConfigurationGuid: c.documentSolutionConfigurationGuid,
          name: 'Renamed',
          fileFormat: 'docx',
          description: '',
          viewUser: false,
          createdDate: c.createdDate,
        });
        expect(Date.parse(u.lastModifiedDate)).toBeGreaterThan(Date.parse(c.lastModifiedDate));
        const got = expectOk(
          await api.call('GET', `/documents/configuration/${c.documentSolutionConfigurationGuid}/get`),
        ).documentSolutionConfiguration;
        expect(got).toEqual(u);
      });

      it('DATA_NAME_REQUIRED, 404 NOT_FOUND_BY_ID for unknown or foreign ids, 400 for a non-uuid id', async () => {
        const c = await create({ name: 'mine' });
        const path = `/documents/configuration/${c.documentSolutionConfigurationGuid}/update`;
        expectError(await api.call('PUT', path, { json: { description: 'no name' } }), 400, 'DATA_NAME_REQUIRED');
        expectError(
          await api.call('PUT', `/documents/configuration/${UNKNOWN_ID}/update`, { json: { name: 'x' } }),
          404,
          'NOT_FOUND_BY_ID',
        );
        expectError(await other.call('PUT', path, { json: { name: 'hijack' } }), 404, 'NOT_FOUND_BY_ID');
        expectError(
          await api.call('PUT', '/documents/configuration/not-a-uuid/update', { json: { name: 'x' } }),
          400,
          'VALIDATION_ERROR',
          'documentSolutionConfigurationGuid',
        );
        expect(
          expectOk(await api.call('GET', `/documents/configuration/${c.documentSolutionConfigurationGuid}/get`))
            .documentSolutionConfiguration.name,
        ).toBe('mine');
      });
    });

    describe('4.3 get (failures as a bare {code, message} body)', () => {
      it('returns the configuration', async () => {
        const c = await create({ name: 'get me' });
        expect(
          expectOk(await api.call('GET', `/documents/configuration/${c.documentSolutionConfigurationGuid}/get`))
            .documentSolutionConfiguration,
        ).toEqual(c);
      });

      it('404 NOT_FOUND_BY_ID as a bare body, also for another subscription', async () => {
        const c = await create({ name: 'private' });
        for (const res of [
          await api.call('GET', `/documents/configuration/${UNKNOWN_ID}/get`),
          await other.call('GET', `/documents/configuration/${c.documentSolutionConfigurationGuid}/get`),
        ]) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ code: 'NOT_FOUND_BY_ID', message: expect.any(String) });
        }
      });

      it('400 VALIDATION_ERROR naming the parameter as a bare body', async () => {
        const res = await api.call('GET', '/documents/configuration/12345/get');
        expect(res.status).toBe(400);
        expect(res.body.code).toBe('VALIDATION_ERROR');
        expect(res.body.message).toContain('documentSolutionConfigurationGuid');
        expect(res.body.error).toBeUndefined();
      });

      it('401 keeps the error envelope', async () => {
        const res = await fetch(`${creds.baseUrl}/documents/configuration/${UNKNOWN_ID}/get`);
        expect(res.status).toBe(401);
        expect(((await res.json()) as any).error.innerErrors[0].code).toBe('UNAUTHORIZED');
      });
    });

    describe('4.3 list with the parameters of 4.9', () => {
      // A subscription of its own, so the counts below are exact.
      let lists: ReturnType<typeof client>;
      const names = ['Alpha report', 'beta REPORT', 'Gamma letter', 'Delta letter', 'Epsilon memo', '50%_off'];
      beforeAll(async () => {
        lists = client(await stack.credentials('lists'));
        for (const [i, name] of names.entries()) {
          expectOk(
            await lists.call('POST', '/documents/configuration/create', {
              json: { name, fileFormat: i % 2 ? 'pdf' : 'docx', viewUser: i < 2 },
            }),
          );
        }
      });
      const list = async (query: string) => expectOk(await lists.call('GET', `/documents/configuration/list?${query}`));

      it('lists everything newest first with rowCount', async () => {
        const d = await list('');
        expect(d.rowCount).toBe(names.length);
        expect(d.documentSolutionConfigurations.map((c: any) => c.name)).toEqual([...names].reverse());
        expect(d.documentSolutionConfigurations[0]).toHaveProperty('documentSolutionConfigurationGuid');
      });

      it('pages with top and skip; rowCount stays the total', async () => {
        const p1 = await list('top=2&skip=0&orderby=Name|ASC');
        const p2 = await list('top=2&skip=2&orderby=Name|ASC');
        const p4 = await list('top=2&skip=6&orderby=Name|ASC');
        expect(p1.documentSolutionConfigurations.map((c: any) => c.name)).toEqual(['50%_off', 'Alpha report']);
        expect(p2.documentSolutionConfigurations.map((c: any) => c.name)).toEqual(['beta REPORT', 'Delta letter']);
        expect(p4.documentSolutionConfigurations).toEqual([]);
        expect([p1.rowCount, p2.rowCount, p4.rowCount]).toEqual([6, 6, 6]);
      });

      it('orders by Column|DIRECTION, case-insensitively', async () => {
        const d = await list(`orderby=${encodeURIComponent('name|desc')}`);
        expect(d.documentSolutionConfigurations.map((c: any) => c.name)).toEqual([
          'Gamma letter',
          'Epsilon memo',
          'Delta letter',
          'beta REPORT',
          'Alpha report',
          '50%_off',
        ]);
        const byDate = await list('orderby=CreatedDate|ASC');
        expect(byDate.documentSolutionConfigurations.map((c: any) => c.name)).toEqual(names);
      });

      it('filters with CONTAINS case-insensitively; rowCount counts the matches', async () => {
        const d = await list(`${filterQuery([clause('Name', 'CONTAINS', 'report')])}&top=1`);
        expect(d.rowCount).toBe(2);
        expect(d.documentSolutionConfigurations).toHaveLength(1);
      });

      it('treats LIKE wildcards in values literally', async () => {
        expect((await list(filterQuery([clause('Name', 'CONTAINS', '%')]))).rowCount).toBe(1);
        expect((await list(filterQuery([clause('Name', 'CONTAINS', '_')]))).rowCount).toBe(1);
      });

      it('supports the other conditions and combines clauses with AND', async () => {
        const count = async (clauses: unknown[]) => (await list(filterQuery(clauses))).rowCount;
        expect(await count([clause('Name', 'STARTS_WITH', 'gamma')])).toBe(1);
        expect(await count([clause('Name', 'ENDS_WITH', 'LETTER')])).toBe(2);
        expect(await count([clause('Name', 'EQUALS', 'epsilon MEMO')])).toBe(1);
        expect(await count([clause('Name', 'NOT_EQUALS', 'Epsilon memo')])).toBe(5);
        expect(await count([clause('FileFormat', 'EQUALS', 'pdf'), clause('Name', 'CONTAINS', 'letter')])).toBe(1);
        expect(await count([clause('ViewUser', 'EQUALS', true)])).toBe(2);
        expect(await count([clause('CreatedDate', 'GREATER_THAN', '2000-01-01T00:00:00Z')])).toBe(6);
        expect(await count([clause('CreatedDate', 'LESS_THAN', '2000-01-01T00:00:00Z')])).toBe(0);
        expect(await count([clause('Name', 'GREATER_THAN', 'delta')])).toBe(3);
      });

      it('accepts a filter encoded twice', async () => {
        const twice = encodeURIComponent(encodeURIComponent(JSON.stringify([clause('Name', 'CONTAINS', 'memo')])));
        expect((await list(`filter=${twice}`)).rowCount).toBe(1);
      });

      it('rejects unknown columns, conditions and directions with a bare 400 naming them', async () => {
        const bad = async (query: string, part: string) => {
          const res = await lists.call('GET', `/documents/configuration/list?${query}`);
          expect(res.status, JSON.stringify(res.body)).toBe(400);
          expect(res.body.code).toBe('VALIDATION_ERROR');
          expect(res.body.message).toContain(part);
        };
        await bad('orderby=Colour|ASC', 'Colour');
        await bad('orderby=Name|SIDEWAYS', 'SIDEWAYS');
        await bad(filterQuery([clause('Colour', 'CONTAINS', 'x')]), 'Colour');
        await bad(filterQuery([clause('Name', 'LIKE', 'x')]), 'LIKE');
        await bad(filterQuery([clause('CreatedDate', 'CONTAINS', '2020')]), 'CONTAINS');
        await bad(filterQuery([clause('CreatedDate', 'GREATER_THAN', 'yesterday')]), 'yesterday');
        await bad(filterQuery([clause('ViewUser', 'EQUALS', 'maybe')]), 'ViewUser');
        await bad(filterQuery({ column: 'Name' }), 'array');
        await bad('filter=%7Bnot%20json', 'filter');
        await bad('top=0', 'top');
        await bad('top=abc', 'top');
        await bad('skip=-1', 'skip');
      });

      it('never runs SQL from orderby or filter', async () => {
        const attempts = [
          `orderby=${encodeURIComponent('Name;DROP TABLE solution_configurations|ASC')}`,
          `orderby=${encodeURIComponent('Name|ASC;DROP TABLE solution_configurations')}`,
          `orderby=${encodeURIComponent('(SELECT 1)|ASC')}`,
          filterQuery([clause('Name = Name OR 1=1 --', 'EQUALS', 'x')]),
          filterQuery([clause('Name', 'EQUALS', "x' OR '1'='1")]),
        ];
        for (const q of attempts) {
          const res = await lists.call('GET', `/documents/configuration/list?${q}`);
          if (res.status === 200) expect(res.body.result.data.rowCount).toBe(0);
          else expect(res.body.code).toBe('VALIDATION_ERROR');
        }
        expect((await lists.call('GET', `/documents/configuration/list?${attempts[0]}`)).status).toBe(400);
        expect((await list('')).rowCount).toBe(names.length);
      });

      it("never shows another subscription's configurations", async () => {
        const d = expectOk(await other.call('GET', '/documents/configuration/list'));
        expect(d.documentSolutionConfigurations.every((c: any) => c.subscriptionGuid !== creds.subscriptionId)).toBe(true);
        const fresh = client(await stack.credentials('empty-tenant'));
        expect(expectOk(await fresh.call('GET', '/documents/configuration/list'))).toEqual({
          documentSolutionConfigurations: [],
          rowCount: 0,
        });
      });
    });
  });
}

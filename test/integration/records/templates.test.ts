// Document templates (spec 4.4: create rules 1-5, soft delete; update/get/list extensions) and document
// solutions (extension), over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { makeDocx } from '../../support/office.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { clause, expectError, expectOk, filterQuery, UNKNOWN_ID } from './helpers.ts';

describe('document templates and solutions', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  let solution: { id: string; name: string; description: string };

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    other = client(await stack.credentials('other'));
    solution = expectOk(
      await api.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'Billing', description: 'Invoices' } } }),
      201,
    ).documentSolution;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const createRes = (documentTemplate: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    api.call('POST', '/documents/template/create', { json: { documentTemplate, ...extra } });
  const create = async (documentTemplate: Record<string, unknown>) => expectOk(await createRes(documentTemplate), 201).documentTemplate;
  const storage = { urn: UNKNOWN_ID, loadMethod: 'Storage', fileFormat: 'docx' };

  describe('solutions (extension)', () => {
    it('creates, gets and lists a solution', async () => {
      expect(solution).toMatchObject({
        name: 'Billing',
        description: 'Invoices',
        subscriptionId: creds.subscriptionId,
        ownerId: creds.userId,
      });
      const got = expectOk(await api.call('GET', `/documents/solution/${solution.id}/get`)).documentSolution;
      expect(got).toMatchObject({ id: solution.id, name: 'Billing', dataSources: [], documentTemplates: [] });
      const list = expectOk(await api.call('GET', `/documents/solution/list?${filterQuery([clause('Name', 'EQUALS', 'billing')])}`));
      expect(list.rowCount).toBe(1);
      expect(list.documentSolutions[0].id).toBe(solution.id);
    });

    it('DATA_NAME_REQUIRED, and 404 for another subscription', async () => {
      expectError(await api.call('POST', '/documents/solution/create', { json: { documentSolution: {} } }), 400, 'DATA_NAME_REQUIRED');
      expectError(await other.call('GET', `/documents/solution/${solution.id}/get`), 404, 'NOT_FOUND_BY_ID');
      expect(expectOk(await other.call('GET', '/documents/solution/list')).rowCount).toBe(0);
    });
  });

  describe('4.4 create', () => {
    it('201 with every field of 2.3, server-assigned fields, externalContext echoed', async () => {
      const res = await createRes(
        { name: 'Letter', description: 'd', title: 't', ...storage, documentSolutions: [{ id: solution.id }] },
        { externalContext: { ticket: 42 } },
      );
      const t = expectOk(res, 201).documentTemplate;
      expect(res.body.externalContext).toEqual({ ticket: 42 });
      expect(t).toMatchObject({
        name: 'Letter',
        description: 'd',
        title: 't',
        urn: UNKNOWN_ID,
        url: '',
        fileFormat: 'docx',
        loadMethod: 'Storage',
        path: '',
        subscriptionId: creds.subscriptionId,
        ownerId: creds.userId,
        lastModifiedUserId: creds.userId,
        ownerName: 'default developer',
        lastModifiedUserName: 'default developer',
        documentSolutions: [{ id: solution.id, name: 'Billing', description: 'Invoices' }],
      });
      expect(Object.keys(t).sort()).toEqual(
        [
          'id',
          'subscriptionId',
          'ownerId',
          'lastModifiedUserId',
          'name',
          'description',
          'title',
          'urn',
          'url',
          'fileFormat',
          'loadMethod',
          'path',
          'documentSolutions',
          'ownerName',
          'lastModifiedUserName',
          'createdDate',
          'lastModifiedDate',
        ].sort(),
      );
    });

    it('rule 1: urn with loadMethod, or url alone, never both, never neither', async () => {
      const byUrl = await create({ name: 'by url', url: 'https://files.example.com/t.docx', fileFormat: 'docx' });
      expect(byUrl).toMatchObject({ url: 'https://files.example.com/t.docx', urn: '', loadMethod: '' });
      expectError(await createRes({ name: 'both', ...storage, url: 'https://x.example/t.docx' }), 400, 'VALIDATION_ERROR', 'not both');
      expectError(
        await createRes({ name: 'url+method', url: 'https://x.example/t.docx', loadMethod: 'Storage' }),
        400,
        'VALIDATION_ERROR',
        'not both',
      );
      expectError(await createRes({ name: 'urn only', urn: UNKNOWN_ID }), 400, 'VALIDATION_ERROR', 'loadMethod');
      expectError(await createRes({ name: 'method only', loadMethod: 'Storage' }), 400, 'VALIDATION_ERROR', 'urn');
      expectError(await createRes({ name: 'neither' }), 400, 'VALIDATION_ERROR');
      expectError(await createRes({ name: 'ftp', url: 'ftp://x.example/t.docx' }), 400, 'VALIDATION_ERROR', 'url');
    });

    it('rule 2: fileFormat agrees with loadMethod', async () => {
      expect((await create({ name: 'gdoc', urn: 'drive-file-1', loadMethod: 'DriveB', fileFormat: 'gdoc' })).fileFormat).toBe('gdoc');
      expect((await create({ name: 'xlsx on A', urn: 'drive-file-2', loadMethod: 'drivea', fileFormat: 'XLSX' })).loadMethod).toBe(
        'DriveA',
      );
      expectError(await createRes({ name: 'x', urn: 'f', loadMethod: 'Storage', fileFormat: 'gsheet' }), 400, 'VALIDATION_ERROR', 'DriveB');
      expectError(
        await createRes({ name: 'x', urn: 'f', loadMethod: 'DriveB', fileFormat: 'pptx' }),
        400,
        'VALIDATION_ERROR',
        'Storage or DriveA',
      );
      expectError(await createRes({ name: 'x', urn: 'f', loadMethod: 'Ftp', fileFormat: 'docx' }), 400, 'VALIDATION_ERROR', 'loadMethod');
      expectError(
        await createRes({ name: 'x', urn: 'f', loadMethod: 'Storage', fileFormat: 'pdf' }),
        400,
        'VALIDATION_ERROR',
        'fileFormat',
      );
    });

    it('rule 3: linking is best-effort; unknown, foreign and malformed solution ids are skipped', async () => {
      const foreign = expectOk(
        await other.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'theirs' } } }),
        201,
      ).documentSolution;
      const t = await create({
        name: 'links',
        ...storage,
        documentSolutions: [{ id: UNKNOWN_ID }, { id: solution.id }, { id: foreign.id }, { id: 'nope' }, { id: solution.id }],
      });
      expect(t.documentSolutions.map((s: any) => s.id)).toEqual([solution.id]);
      const members = expectOk(await api.call('GET', `/documents/solution/${solution.id}/get`)).documentSolution.documentTemplates;
      expect(members.map((m: any) => m.id)).toContain(t.id);
    });

    it('rule 4: ids, ownership, path and timestamps sent are ignored', async () => {
      const t = await create({
        name: 'ignored',
        ...storage,
        id: UNKNOWN_ID,
        ownerId: UNKNOWN_ID,
        subscriptionId: UNKNOWN_ID,
        path: 'root/elsewhere',
        createdDate: '2000-01-01T00:00:00.000Z',
      });
      expect(t.id).not.toBe(UNKNOWN_ID);
      expect(t).toMatchObject({ ownerId: creds.userId, subscriptionId: creds.subscriptionId, path: '' });
      expect(t.createdDate.startsWith('2000')).toBe(false);
    });

    it('rule 5: a Storage urn is a reference; the record survives without the file', async () => {
      const up = expectOk(await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['x']) }]), 201).files[0];
      const t = await create({ name: 'uploaded', urn: up.id, loadMethod: 'Storage', fileFormat: 'docx' });
      await stack.service.db.query('UPDATE stored_files SET removed_date = now() WHERE id = $1', [up.id]);
      expect(expectOk(await api.call('GET', `/documents/template/${t.id}/get`)).documentTemplate.urn).toBe(up.id);
    });

    it('DATA_NAME_REQUIRED when name is missing; VALIDATION_ERROR without documentTemplate', async () => {
      expectError(await createRes({ ...storage }), 400, 'DATA_NAME_REQUIRED');
      expectError(
        await api.call('POST', '/documents/template/create', { json: { externalContext: { a: 1 } } }),
        400,
        'VALIDATION_ERROR',
        'documentTemplate',
      );
    });
  });

  describe('update, get, list (extensions) and delete', () => {
    it('update replaces fields, replaces links only when sent, checks the rules', async () => {
      const t = await create({ name: 'v1', description: 'first', ...storage, documentSolutions: [{ id: solution.id }] });
      const path = `/documents/template/${t.id}/update`;
      const u = expectOk(
        await api.call('PUT', path, { json: { documentTemplate: { name: 'v2', url: 'https://x.example/t.pptx', fileFormat: 'pptx' } } }),
      ).documentTemplate;
      expect(u).toMatchObject({
        id: t.id,
        name: 'v2',
        description: '',
        urn: '',
        loadMethod: '',
        url: 'https://x.example/t.pptx',
        createdDate: t.createdDate,
      });
      expect(u.documentSolutions.map((s: any) => s.id)).toEqual([solution.id]);
      const unlinked = expectOk(
        await api.call('PUT', path, { json: { documentTemplate: { name: 'v3', ...storage, documentSolutions: [] } } }),
      ).documentTemplate;
      expect(unlinked.documentSolutions).toEqual([]);
      expectError(await api.call('PUT', path, { json: { documentTemplate: { ...storage } } }), 400, 'DATA_NAME_REQUIRED');
      expectError(
        await api.call('PUT', path, { json: { documentTemplate: { name: 'x', urn: 'f', loadMethod: 'DriveB', fileFormat: 'docx' } } }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await other.call('PUT', path, { json: { documentTemplate: { name: 'hijack', ...storage } } }), 404, 'NOT_FOUND_BY_ID');
      expectError(
        await api.call('PUT', `/documents/template/${UNKNOWN_ID}/update`, { json: { documentTemplate: { name: 'x', ...storage } } }),
        404,
        'NOT_FOUND_BY_ID',
      );
    });

    it('get: 404 for unknown and foreign ids, 400 naming a non-uuid id', async () => {
      const t = await create({ name: 'gettable', ...storage });
      expect(expectOk(await api.call('GET', `/documents/template/${t.id}/get`)).documentTemplate).toEqual(t);
      expectError(await api.call('GET', `/documents/template/${UNKNOWN_ID}/get`), 404, 'NOT_FOUND_BY_ID');
      expectError(await other.call('GET', `/documents/template/${t.id}/get`), 404, 'NOT_FOUND_BY_ID');
      expectError(await api.call('GET', '/documents/template/abc/get'), 400, 'VALIDATION_ERROR', 'documentTemplateGuid');
    });

    it('delete is soft: 200 with documentTemplateGuid and message, then gone from get, list and solution', async () => {
      const t = await create({ name: 'doomed template', ...storage, documentSolutions: [{ id: solution.id }] });
      expectError(await other.call('DELETE', `/documents/template/${t.id}/delete`), 404, 'NOT_FOUND_BY_ID');
      const d = expectOk(await api.call('DELETE', `/documents/template/${t.id}/delete`));
      expect(d).toEqual({ documentTemplateGuid: t.id, message: expect.any(String) });
      expectError(await api.call('GET', `/documents/template/${t.id}/get`), 404, 'NOT_FOUND_BY_ID');
      expect(
        expectOk(await api.call('GET', `/documents/template/list?${filterQuery([clause('Name', 'EQUALS', 'doomed template')])}`)).rowCount,
      ).toBe(0);
      const members = expectOk(await api.call('GET', `/documents/solution/${solution.id}/get`)).documentSolution.documentTemplates;
      expect(members.map((m: any) => m.id)).not.toContain(t.id);
      expectError(await api.call('DELETE', `/documents/template/${t.id}/delete`), 404, 'NOT_FOUND_BY_ID');
      const row = await stack.service.db.query<{ is_deleted: boolean }>('SELECT is_deleted FROM document_templates WHERE id = $1', [t.id]);
      expect(row.rows[0]?.is_deleted).toBe(true);
    });

    it('list pages, filters and orders; another subscription sees none', async () => {
      const mine = client(await stack.credentials('template-lists'));
      for (const name of ['Zeta', 'eta', 'Theta']) {
        expectOk(await mine.call('POST', '/documents/template/create', { json: { documentTemplate: { name, ...storage } } }), 201);
      }
      const page = expectOk(await mine.call('GET', '/documents/template/list?orderby=Name|DESC&top=2'));
      expect(page.rowCount).toBe(3);
      expect(page.documentTemplates.map((t: any) => t.name)).toEqual(['Zeta', 'Theta']);
      expect(
        expectOk(await mine.call('GET', `/documents/template/list?${filterQuery([clause('name', 'contains', 'ETA')])}`)).rowCount,
      ).toBe(3);
      expect(
        expectOk(await mine.call('GET', `/documents/template/list?${filterQuery([clause('LoadMethod', 'EQUALS', 'DriveB')])}`)).rowCount,
      ).toBe(0);
      expectError(
        await mine.call('GET', `/documents/template/list?orderby=${encodeURIComponent('Name;DROP TABLE document_templates|ASC')}`),
        400,
        'VALIDATION_ERROR',
        'unknown column',
      );
      expect(expectOk(await other.call('GET', '/documents/template/list')).documentTemplates.map((t: any) => t.name)).not.toContain('Zeta');
    });
  });

  it('documents every record route in the OpenAPI description, extensions marked', async () => {
    const doc = (await (await fetch(`${creds.baseUrl}/openapi.json`)).json()) as any;
    const expected: [string, string, boolean][] = [
      ['post', '/v1/documents/configuration/create', false],
      ['put', '/v1/documents/configuration/{documentSolutionConfigurationGuid}/update', false],
      ['get', '/v1/documents/configuration/{documentSolutionConfigurationGuid}/get', false],
      ['get', '/v1/documents/configuration/list', false],
      ['post', '/v1/documents/template/create', false],
      ['delete', '/v1/documents/template/{documentTemplateGuid}/delete', false],
      ['put', '/v1/documents/template/{documentTemplateGuid}/update', true],
      ['get', '/v1/documents/template/{documentTemplateGuid}/get', true],
      ['get', '/v1/documents/template/list', true],
      ['post', '/v1/documents/solution/create', true],
      ['get', '/v1/documents/solution/{documentSolutionId}/get', true],
      ['get', '/v1/documents/solution/list', true],
      ['post', '/v1/documents/datasource/create', false],
      ['get', '/v1/documents/datasource/list', false],
      ['delete', '/v1/documents/datasource/{dataSourceGuid}/delete', false],
      ['post', '/v1/documents/solution/{documentSolutionId}/datasource/{dataSourceId}/add', false],
      ['post', '/v1/documents/option/{entityType}/{entityId}/create', false],
      ['put', '/v1/documents/option/{entityType}/{entityId}/replace', false],
      ['get', '/v1/documents/option/{entityType}/{entityId}/list', true],
      ['put', '/v1/documents/option/{optionValueGuid}/update', false],
      ['delete', '/v1/documents/option/{optionValueGuid}/delete', false],
      ['put', '/v1/documents/document/{documentGuid}/update', false],
      ['get', '/v1/documents/document/{documentGuid}/get', true],
      ['get', '/v1/documents/document/list', true],
    ];
    for (const [method, path, extension] of expected) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeTruthy();
      expect(op.tags.length).toBeGreaterThan(0);
      expect(op.summary.includes('(extension)'), `${method} ${path}: ${op.summary}`).toBe(extension);
      expect(Object.keys(op.responses)).toContain('401');
    }
    // Listed items in the Guid spelling: the named schema the list's answer refers to (the answer itself is
    // a named response schema); create answers the Id spelling (spec 4.5).
    const named = (s: { $ref?: string }) => (s.$ref ? doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] : s);
    const listed = named(doc.paths['/v1/documents/datasource/list'].get.responses['200'].content['application/json'].schema);
    expect(listed.properties.result.properties.data.properties.dataSources.items).toEqual({
      $ref: '#/components/schemas/ListedDataSource',
    });
    const common = ['name', 'description', 'urn', 'loadMethod', 'query', 'variables'];
    expect(Object.keys(doc.components.schemas.ListedDataSource.properties)).toEqual([
      ...['dataSourceGuid', 'subscriptionGuid', 'ownerGuid', 'lastModifiedUserGuid'],
      ...common,
      ...['createdDate', 'lastModifiedDate', 'isDeleted'],
    ]);
    expect(Object.keys(doc.components.schemas.DataSource.properties)).toEqual([
      ...['id', 'subscriptionId', 'ownerId', 'lastModifiedUserId'],
      ...common,
      ...['documentSolutions', 'ownerName', 'lastModifiedUserName', 'createdDate', 'lastModifiedDate'],
    ]);
    expect(doc.paths['/v1/documents/configuration/list'].get.description).toContain('bare body');
  });
});

// Option values (spec 4.6) and the document record (4.7 update; get and list extensions), over real HTTP.
// The document record comes from a real synchronous generate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { recordDocument } from '../../../store/records/documents.ts';
import { makeDocx } from '../../support/office.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { clause, expectError, expectOk, filterQuery, UNKNOWN_ID } from './helpers.ts';

describe('option values and document records', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  let configId: string;
  let templateId: string;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
    other = client(await stack.credentials('other'));
    configId = expectOk(await api.call('POST', '/documents/configuration/create', { json: { name: 'owner of options' } }))
      .documentSolutionConfiguration.documentSolutionConfigurationGuid;
    templateId = expectOk(
      await api.call('POST', '/documents/template/create', {
        json: { documentTemplate: { name: 't', urn: UNKNOWN_ID, loadMethod: 'Storage', fileFormat: 'docx' } },
      }),
      201,
    ).documentTemplate.id;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const createOption = (entityType: string, entityId: string, body: unknown, caller = api) =>
    caller.call('POST', `/documents/option/${entityType}/${entityId}/create`, { json: body });

  describe('4.6 create', () => {
    it('a custom option: optionDefinitionId is an empty string in the response', async () => {
      const o = expectOk(
        await createOption('DocumentSolutionConfiguration', configId, { customKey: 'watermark', customGroup: 'branding', value: 'DRAFT' }),
      ).optionValue;
      expect(o).toMatchObject({
        entityType: 'DocumentSolutionConfiguration',
        entityId: configId,
        optionDefinitionId: '',
        customKey: 'watermark',
        customGroup: 'branding',
        value: 'DRAFT',
        effectiveKey: 'watermark',
        effectiveGroup: 'branding',
        systemType: 'Custom',
      });
      expect(Object.keys(o).sort()).toEqual(
        [
          'optionValueGuid',
          'entityType',
          'entityId',
          'optionDefinitionId',
          'customKey',
          'customGroup',
          'value',
          'effectiveKey',
          'effectiveGroup',
          'systemType',
          'createdDate',
          'lastModifiedDate',
        ].sort(),
      );
    });

    it('a system option: integer optionDefinitionId, effective key and group from the definition', async () => {
      const o = expectOk(
        await createOption('documenttemplate', templateId, { optionDefinitionId: 5, value: '{"strict":true}' }),
      ).optionValue;
      expect(o).toMatchObject({
        entityType: 'DocumentTemplate',
        optionDefinitionId: 5,
        customKey: '',
        customGroup: '',
        effectiveKey: 'docxLoadOptions',
        effectiveGroup: 'Template',
        systemType: 'Json',
      });
    });

    it('OPTION_VALUE_MISSING_DEFINITION_OR_KEY with neither; VALIDATION_ERROR with both or a bad definition or value', async () => {
      expectError(await createOption('DocumentTemplate', templateId, { value: 'x' }), 400, 'OPTION_VALUE_MISSING_DEFINITION_OR_KEY');
      expectError(
        await createOption('DocumentTemplate', templateId, { customKey: '  ', optionDefinitionId: '' }),
        400,
        'OPTION_VALUE_MISSING_DEFINITION_OR_KEY',
      );
      expectError(
        await createOption('DocumentTemplate', templateId, { optionDefinitionId: 1, customKey: 'k', value: '{}' }),
        400,
        'VALIDATION_ERROR',
        'not both',
      );
      expectError(
        await createOption('DocumentTemplate', templateId, { optionDefinitionId: 999 }),
        400,
        'VALIDATION_ERROR',
        'optionDefinitionId',
      );
      expectError(
        await createOption('DocumentTemplate', templateId, { optionDefinitionId: 8, value: 'yes' }),
        400,
        'VALIDATION_ERROR',
        'true or false',
      );
      expectError(
        await createOption('DocumentTemplate', templateId, { optionDefinitionId: 1, value: '{bad' }),
        400,
        'VALIDATION_ERROR',
        'JSON',
      );
    });

    it('one value per key: a second value for the same key is refused', async () => {
      expectOk(await createOption('DocumentTemplate', templateId, { customKey: 'once', value: '1' }));
      expectError(
        await createOption('DocumentTemplate', templateId, { customKey: 'once', value: '2' }),
        400,
        'VALIDATION_ERROR',
        'already',
      );
    });

    it('unknown entity type 400, unknown or foreign entity 404, non-uuid entity id 400', async () => {
      expectError(await createOption('Spaceship', templateId, { customKey: 'k' }), 400, 'VALIDATION_ERROR', 'entityType');
      expectError(await createOption('DocumentTemplate', UNKNOWN_ID, { customKey: 'k' }), 404, 'NOT_FOUND_BY_ID');
      expectError(await createOption('DocumentTemplate', templateId, { customKey: 'k' }, other), 404, 'NOT_FOUND_BY_ID');
      expectError(await createOption('DocumentTemplate', 'nope', { customKey: 'k' }), 400, 'VALIDATION_ERROR', 'entityId');
    });
  });

  describe('4.6 replace, update, delete', () => {
    it('replace sets the complete new set: 200 {entityId, entityType, message}', async () => {
      const sol = expectOk(
        await api.call('POST', '/documents/solution/create', { json: { documentSolution: { name: 'opts' } } }),
        201,
      ).documentSolution;
      expectOk(await createOption('DocumentSolution', sol.id, { customKey: 'old', value: 'x' }));
      const res = expectOk(
        await api.call('PUT', `/documents/option/DocumentSolution/${sol.id}/replace`, {
          json: [
            { customKey: 'a', value: '1' },
            { optionDefinitionId: 9, value: 'true' },
          ],
        }),
      );
      expect(res).toEqual({ entityId: sol.id, entityType: 'DocumentSolution', message: expect.any(String) });
      const listed = expectOk(await api.call('GET', `/documents/option/DocumentSolution/${sol.id}/list`)).optionValues;
      expect(listed.map((o: any) => o.effectiveKey)).toEqual(['a', 'nativeImageMergeEnabled']);
      expectOk(await api.call('PUT', `/documents/option/DocumentSolution/${sol.id}/replace`, { json: [] }));
      expect(expectOk(await api.call('GET', `/documents/option/DocumentSolution/${sol.id}/list`)).optionValues).toEqual([]);
    });

    it('replace validates every item, names its position, and changes nothing on failure', async () => {
      const ds = expectOk(
        await api.call('POST', '/documents/datasource/create', { json: { dataSource: { name: 'd', loadMethod: 'Storage' } } }),
        201,
      ).dataSource;
      expectOk(await createOption('DataSource', ds.id, { customKey: 'keep', value: 'x' }));
      const path = `/documents/option/DataSource/${ds.id}/replace`;
      expectError(
        await api.call('PUT', path, { json: [{ customKey: 'ok' }, { value: 'no key' }] }),
        400,
        'OPTION_VALUE_MISSING_DEFINITION_OR_KEY',
        '[1]',
      );
      expectError(await api.call('PUT', path, { json: [{ customKey: 'dup' }, { customKey: 'dup' }] }), 400, 'VALIDATION_ERROR', '[1]');
      expectError(await api.call('PUT', path, { json: { customKey: 'not an array' } }), 400, 'VALIDATION_ERROR');
      expectError(await other.call('PUT', path, { json: [] }), 404, 'NOT_FOUND_BY_ID');
      expect(
        expectOk(await api.call('GET', `/documents/option/DataSource/${ds.id}/list`)).optionValues.map((o: any) => o.customKey),
      ).toEqual(['keep']);
    });

    it('update changes the value (and a custom key), keeps the identity; ignores optionDefinitionId', async () => {
      const o = expectOk(
        await createOption('DocumentSolutionConfiguration', configId, { customKey: 'color', customGroup: 'ui', value: 'red' }),
      ).optionValue;
      const u = expectOk(
        await api.call('PUT', `/documents/option/${o.optionValueGuid}/update`, {
          json: { value: 'blue', customKey: 'colour', optionDefinitionId: 3, entityId: UNKNOWN_ID },
        }),
      ).optionValue;
      expect(u).toMatchObject({
        optionValueGuid: o.optionValueGuid,
        entityId: configId,
        value: 'blue',
        customKey: 'colour',
        customGroup: 'ui',
        optionDefinitionId: '',
        createdDate: o.createdDate,
      });
      expectError(
        await api.call('PUT', `/documents/option/${o.optionValueGuid}/update`, { json: { customKey: '' } }),
        400,
        'OPTION_VALUE_MISSING_DEFINITION_OR_KEY',
      );
      const sys = expectOk(
        await createOption('DocumentSolutionConfiguration', configId, { optionDefinitionId: 8, value: 'true' }),
      ).optionValue;
      expectError(
        await api.call('PUT', `/documents/option/${sys.optionValueGuid}/update`, { json: { value: 'maybe' } }),
        400,
        'VALIDATION_ERROR',
      );
      expect(
        expectOk(await api.call('PUT', `/documents/option/${sys.optionValueGuid}/update`, { json: { value: 'false' } })).optionValue,
      ).toMatchObject({ optionDefinitionId: 8, value: 'false' });
      expectError(
        await other.call('PUT', `/documents/option/${o.optionValueGuid}/update`, { json: { value: 'x' } }),
        404,
        'NOT_FOUND_BY_ID',
      );
      expectError(
        await api.call('PUT', '/documents/option/zzz/update', { json: { value: 'x' } }),
        400,
        'VALIDATION_ERROR',
        'optionValueGuid',
      );
    });

    it('delete is soft: 200 {optionValueGuid, message}, then 404', async () => {
      const o = expectOk(await createOption('DocumentSolutionConfiguration', configId, { customKey: 'temp', value: '1' })).optionValue;
      expectError(await other.call('DELETE', `/documents/option/${o.optionValueGuid}/delete`), 404, 'NOT_FOUND_BY_ID');
      expect(expectOk(await api.call('DELETE', `/documents/option/${o.optionValueGuid}/delete`))).toEqual({
        optionValueGuid: o.optionValueGuid,
        message: expect.any(String),
      });
      expectError(await api.call('DELETE', `/documents/option/${o.optionValueGuid}/delete`), 404, 'NOT_FOUND_BY_ID');
      expectError(await api.call('PUT', `/documents/option/${o.optionValueGuid}/update`, { json: { value: '2' } }), 404, 'NOT_FOUND_BY_ID');
      const listed = expectOk(await api.call('GET', `/documents/option/DocumentSolutionConfiguration/${configId}/list`)).optionValues;
      expect(listed.map((x: any) => x.optionValueGuid)).not.toContain(o.optionValueGuid);
    });
  });

  describe('4.7 document record', () => {
    let documentGuid: string;
    let urn: string;

    beforeAll(async () => {
      const t = expectOk(await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {name}']) }]), 201).files[0].id;
      const d = expectOk(await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'World' }) }]), 201).files[0].id;
      const gen = expectOk(await api.call('POST', '/documents/document/generate', { json: generateBody(t, d) }), 201).document;
      documentGuid = gen.documentGuid;
      urn = gen.urn;
    });

    it('get (extension) returns the record a generate wrote, with every field of 2.5', async () => {
      const doc = expectOk(await api.call('GET', `/documents/document/${documentGuid}/get`)).document;
      expect(doc).toMatchObject({
        documentGuid,
        urn,
        subscriptionGuid: creds.subscriptionId,
        ownerGuid: creds.userId,
        fileFormat: 'docx',
        deliveryMethod: 'Storage',
        viewAnonymousLink: '',
        isDeleted: false,
      });
      expect(Object.keys(doc).sort()).toEqual(
        [
          'documentGuid',
          'subscriptionGuid',
          'ownerGuid',
          'lastModifiedUserGuid',
          'title',
          'urn',
          'url',
          'path',
          'fileFormat',
          'deliveryMethod',
          'viewAnonymousLink',
          'editAnonymousLink',
          'viewUserLink',
          'editUserLink',
          'viewOrganizationLink',
          'editOrganizationLink',
          'succeededViewUserEmailList',
          'succeededEditUserEmailList',
          'failedViewUserEmailList',
          'failedEditUserEmailList',
          'createdDate',
          'lastModifiedDate',
          'isDeleted',
          // Extension: manage's X-Email (spec 5.2), empty for a generate.
          'initiatorEmail',
        ].sort(),
      );
      expect(doc.initiatorEmail).toBe('');
    });

    it('list (extension) finds it by urn; rowCount; another subscription sees none', async () => {
      const found = expectOk(await api.call('GET', `/documents/document/list?${filterQuery([clause('Urn', 'EQUALS', urn)])}`));
      expect(found.rowCount).toBe(1);
      expect(found.documents[0].documentGuid).toBe(documentGuid);
      expect(expectOk(await other.call('GET', '/documents/document/list'))).toEqual({ documents: [], rowCount: 0 });
      expectError(await api.call('GET', '/documents/document/list?orderby=Secret|ASC'), 400, 'VALIDATION_ERROR', 'Secret');
    });

    it('list pages with top and skip', async () => {
      const mine = await stack.credentials('doc-pages');
      for (let i = 0; i < 5; i++) {
        await recordDocument(stack.service.db, {
          subscriptionId: mine.subscriptionId,
          userId: mine.userId,
          operationId: `op-${i}`,
          title: `doc ${i}`,
          urn: `u${i}`,
          path: 'root',
          fileFormat: 'pdf',
          deliveryMethod: 'Storage',
        });
      }
      const page = expectOk(await client(mine).call('GET', '/documents/document/list?orderby=Title|ASC&top=2&skip=3'));
      expect(page.rowCount).toBe(5);
      expect(page.documents.map((d: any) => d.title)).toEqual(['doc 3', 'doc 4']);
    });

    it('update changes only the fields sent; server-managed fields are ignored', async () => {
      const before = expectOk(await api.call('GET', `/documents/document/${documentGuid}/get`)).document;
      const u = expectOk(
        await api.call('PUT', `/documents/document/${documentGuid}/update`, {
          json: {
            title: 'Renamed',
            succeededViewUserEmailList: 'a@example.com,b@example.com',
            viewAnonymousLink: 'https://evil.example',
            documentGuid: UNKNOWN_ID,
            isDeleted: true,
          },
        }),
      ).document;
      expect(u).toMatchObject({
        documentGuid,
        title: 'Renamed',
        succeededViewUserEmailList: 'a@example.com,b@example.com',
        urn: before.urn,
        path: before.path,
        viewAnonymousLink: '',
        isDeleted: false,
      });
      expect(Date.parse(u.lastModifiedDate)).toBeGreaterThanOrEqual(Date.parse(before.lastModifiedDate));
      expect(expectOk(await api.call('GET', `/documents/document/${documentGuid}/get`)).document).toEqual(u);
    });

    it('update errors: bad e-mail list 400, unknown or foreign 404, non-uuid 400', async () => {
      expectError(
        await api.call('PUT', `/documents/document/${documentGuid}/update`, { json: { failedEditUserEmailList: 'not-an-address' } }),
        400,
        'VALIDATION_ERROR',
        'failedEditUserEmailList',
      );
      expectError(await api.call('PUT', `/documents/document/${UNKNOWN_ID}/update`, { json: { title: 'x' } }), 404, 'NOT_FOUND_BY_ID');
      expectError(await other.call('PUT', `/documents/document/${documentGuid}/update`, { json: { title: 'x' } }), 404, 'NOT_FOUND_BY_ID');
      expectError(await other.call('GET', `/documents/document/${documentGuid}/get`), 404, 'NOT_FOUND_BY_ID');
      expectError(
        await api.call('PUT', '/documents/document/123/update', { json: { title: 'x' } }),
        400,
        'VALIDATION_ERROR',
        'documentGuid',
      );
    });

    it('a soft-deleted record disappears from get, list and update', async () => {
      const mine = await stack.credentials('doc-deleted');
      const id = await recordDocument(stack.service.db, {
        subscriptionId: mine.subscriptionId,
        userId: mine.userId,
        operationId: 'gone',
        title: 'gone',
        urn: 'g',
        path: 'root',
        fileFormat: 'pdf',
        deliveryMethod: 'Storage',
      });
      await stack.service.db.query('UPDATE documents SET is_deleted = true WHERE document_guid = $1', [id]);
      const c = client(mine);
      expectError(await c.call('GET', `/documents/document/${id}/get`), 404, 'NOT_FOUND_BY_ID');
      expectError(await c.call('PUT', `/documents/document/${id}/update`, { json: { title: 'back' } }), 404, 'NOT_FOUND_BY_ID');
      expect(expectOk(await c.call('GET', '/documents/document/list')).rowCount).toBe(0);
    });
  });
});

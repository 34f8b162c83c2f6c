// The record declarations (store/records/fields.ts) and what the repositories derive from them: the list
// columns are the SQL a list filters and orders by (the OpenAPI document shows their names only), so they
// are pinned here as they were written out by hand before the declarations; and a row reads back in the
// record's spelling.
import { describe, expect, it } from 'vitest';
import { CONFIGURATION, CONFIGURATION_COLUMNS } from '../../store/records/configurations.ts';
import { DATA_SOURCE, DATA_SOURCE_COLUMNS } from '../../store/records/datasources.ts';
import { DOCUMENT_COLUMNS, DOCUMENT_UPDATABLE, LINK_FIELDS } from '../../store/records/documents.ts';
import { fromRow, listedSpelling, selectList } from '../../store/records/fields.ts';
import { SOLUTION_COLUMNS } from '../../store/records/solutions.ts';
import { TEMPLATE, TEMPLATE_COLUMNS } from '../../store/records/templates.ts';

const text = (name: string, sql: string) => ({ name, sql, type: 'text' });
const date = (name: string, sql: string) => ({ name, sql, type: 'date' });
const dates = (a: string) => [date('CreatedDate', `${a}.created_date`), date('LastModifiedDate', `${a}.last_modified_date`)];

describe('record declarations', () => {
  it('derive the list columns each list filtered and ordered by', () => {
    expect(TEMPLATE_COLUMNS).toEqual([
      text('Id', 't.id::text'),
      ...['Name', 'Description', 'Title', 'Urn', 'Url'].map((n) => text(n, `t.${n.toLowerCase()}`)),
      text('FileFormat', 't.file_format'),
      text('LoadMethod', 't.load_method'),
      text('OwnerName', "coalesce(o.name, '')"),
      ...dates('t'),
    ]);
    expect(DATA_SOURCE_COLUMNS).toEqual([
      text('DataSourceGuid', 'd.id::text'),
      text('Name', 'd.name'),
      text('Description', 'd.description'),
      text('Urn', 'd.urn'),
      text('LoadMethod', 'd.load_method'),
      ...dates('d'),
    ]);
    expect(SOLUTION_COLUMNS).toEqual([
      text('Id', 's.id::text'),
      text('Name', 's.name'),
      text('Description', 's.description'),
      ...dates('s'),
    ]);
    expect(CONFIGURATION_COLUMNS.slice(0, 3)).toEqual([
      text('DocumentSolutionConfigurationGuid', 'c.id::text'),
      text('DocumentSolutionGuid', "coalesce(c.document_solution_id::text, '')"),
      text('Name', 'c.name'),
    ]);
    expect(CONFIGURATION_COLUMNS.filter((c) => c.type === 'boolean').map((c) => c.sql)).toEqual([
      'c.view_anonymous',
      'c.edit_anonymous',
      'c.view_organization',
      'c.edit_organization',
      'c.view_user',
      'c.edit_user',
    ]);
    expect(CONFIGURATION_COLUMNS).toHaveLength(2 + 15 + 6 + 2);
    expect(DOCUMENT_COLUMNS.map((c) => c.name)).toEqual([
      'DocumentGuid',
      ...DOCUMENT_UPDATABLE.map(([f]) => f[0]?.toUpperCase() + f.slice(1)),
      'InitiatorEmail',
      'CreatedDate',
      'LastModifiedDate',
    ]);
    expect(DOCUMENT_COLUMNS[0]).toEqual(text('DocumentGuid', 'd.document_guid::text'));
  });

  it('keep the sharing links out of the document update and in the record', () => {
    expect(LINK_FIELDS.map(([f]) => f)).toEqual([
      'viewAnonymousLink',
      'editAnonymousLink',
      'viewUserLink',
      'editUserLink',
      'viewOrganizationLink',
      'editOrganizationLink',
    ]);
    expect(DOCUMENT_UPDATABLE.map(([f]) => f)).not.toContain('viewAnonymousLink');
    expect(DOCUMENT_UPDATABLE).toContainEqual(['succeededViewUserEmailList', 'succeeded_view_user_email_list']);
  });

  it('select joined fields under their column names and read rows back in the record spelling', () => {
    expect(selectList(TEMPLATE)).toContain('o.name AS owner_name');
    const created = new Date('2026-01-02T03:04:05Z');
    const row = {
      id: 'i',
      subscription_id: 's',
      owner_id: 'o',
      last_modified_user_id: 'm',
      name: 'n',
      description: '',
      urn: 'u',
      load_method: 'Storage',
      query: '',
    };
    const ds = fromRow(DATA_SOURCE, {
      ...row,
      variables: '',
      owner_name: null,
      last_modified_user_name: 'M',
      created_date: created,
      last_modified_date: created,
      is_deleted: false,
    });
    expect(ds.ownerName).toBe('');
    expect(ds.createdDate).toBe('2026-01-02T03:04:05.000Z');
    const listed = listedSpelling(DATA_SOURCE, ds);
    expect(Object.keys(listed)).toEqual([
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
    ]);
    expect(listed.dataSourceGuid).toBe('i');
    // A configuration without an owning solution says null, not ''.
    expect(
      fromRow(CONFIGURATION, { document_solution_id: null, created_date: created, last_modified_date: created }).documentSolutionGuid,
    ).toBeNull();
  });
});

// core/target.ts, core/generate.ts, core/manage.ts: the request rules of spec 4.8, pure, against the
// catalog the registered locations make (connectors/registry.ts).
import { describe, expect, it } from 'vitest';
import { LOCATION_CATALOG } from '../../../connectors/registry.ts';
import { type GenerateRequest, parseGenerateRequest } from '../../../core/generate.ts';
import { methodsFor } from '../../../core/locations.ts';
import { type ManageRequest, parseManageRequest } from '../../../core/manage.ts';
import { parseTarget, type TargetRequest } from '../../../core/target.ts';

const catalog = LOCATION_CATALOG;
const target = (t: Partial<TargetRequest>, request: 'generate' | 'manage' = 'generate') =>
  parseTarget(
    { name: 'report', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', ...t },
    { field: request === 'generate' ? 'document' : 'targetDocument', request },
    catalog,
  );
const messages = (r: { problems: { message: string }[] }) => r.problems.map((p) => p.message);

describe('the location catalog', () => {
  it('holds spec 4.8 rules 1 and 3 as the locations registered them', () => {
    expect(methodsFor(catalog, 'generate', 'readTemplate')).toEqual(['Storage', 'DriveA', 'DriveB']);
    for (const f of ['docx', 'xlsx', 'pptx']) expect(methodsFor(catalog, 'generate', 'readTemplate', f)).toEqual(['Storage', 'DriveA']);
    for (const f of ['gdoc', 'gsheet', 'gslide']) {
      expect(methodsFor(catalog, 'generate', 'readTemplate', f)).toEqual(['DriveB']);
      expect(methodsFor(catalog, 'generate', 'write', f)).toEqual(['DriveB']);
    }
    expect(methodsFor(catalog, 'generate', 'write', 'docx')).toEqual(['Storage', 'DriveA']);
    expect(methodsFor(catalog, 'manage', 'write', 'docx')).toEqual(['Storage', 'DriveA', 'crm']);
    expect(methodsFor(catalog, 'generate', 'write', 'pdf')).toEqual(['Storage', 'DriveA', 'DriveB']);
    expect(methodsFor(catalog, 'manage', 'readDocument')).toEqual(['Storage', 'DriveA', 'DriveB', 'crm']);
    expect(methodsFor(catalog, 'generate', 'readData')).toEqual(['Storage', 'DriveA', 'DriveB']);
    expect(catalog.filter((e) => e.transfer === 'local').map((e) => e.method)).toEqual(['Storage', 'url']);
    expect(catalog.flatMap((e) => (e.connection ? [`${e.method}:${e.connection}`] : []))).toEqual([
      'DriveA:driveA',
      'DriveB:driveB',
      'crm:crm',
    ]);
  });
});

describe('parseTarget: one parser for generate and manage', () => {
  it('a valid target, and what it asks of its location', () => {
    expect(target({ fileFormat: 'pdf', options: { pdfSaveOptions: '{"pdfConformanceLevel":"PdfA2B"}' } })).toEqual({
      target: {
        name: 'report',
        fileFormat: 'pdf',
        deliveryMethod: 'Storage',
        path: 'root',
        saveOptions: { pdf: { conformance: 'PdfA2B' } },
      },
      needs: [
        {
          method: 'Storage',
          capability: 'write',
          field: 'document.deliveryMethod',
          fileFormat: 'pdf',
          target: { name: 'report', path: 'root', field: 'document' },
        },
      ],
      problems: [],
    });
  });

  it("the same rules for both operations, named in each operation's field, every problem at once", () => {
    const bad = { name: 'a/b', fileFormat: 'xlsx', deliveryMethod: 'DriveB', path: 'x', options: { pdfSaveOptions: 'nope' } };
    expect(messages(target({ ...bad, fileFormat: 'csv', options: { csvSaveOptions: { sheet: 0 } } }))).toEqual([
      'document.name must be a file name without slashes or control characters (1-255 characters)',
      'document.options.csvSaveOptions.sheet must be a sheet name or a sheet number from 1 (1 is the first sheet)',
    ]);
    expect(messages(target(bad))).toEqual([
      'document.fileFormat xlsx can be delivered to Storage or DriveA, not DriveB',
      'document.name must be a file name without slashes or control characters (1-255 characters)',
    ]);
    expect(messages(target(bad, 'manage'))).toEqual([
      'targetDocument.fileFormat xlsx can be delivered to Storage or DriveA or crm, not DriveB',
      'targetDocument.name must be a file name without slashes or control characters (1-255 characters)',
    ]);
    expect(messages(target({ deliveryMethod: 'Storage', path: 'letters' }, 'manage'))).toEqual([
      "targetDocument.path must be 'root' or start with 'root/' for Storage",
    ]);
    expect(messages(target({ deliveryMethod: 'DriveA', path: 'letters' }))).toEqual([]);
  });

  it('crm is a target of manage only, and reads its own options', () => {
    expect(messages(target({ deliveryMethod: 'crm' }))).toEqual(['document.deliveryMethod must be one of Storage, DriveA, DriveB']);
    const crm = target(
      {
        deliveryMethod: 'crm',
        options: { crm: { fileParentId: '001000000000001AAA', fileType: 'WORD_X' }, driveA: { viewAnonymous: 'yes' } },
      },
      'manage',
    );
    expect(crm.problems).toEqual([]);
    expect(crm.target.options).toEqual({ crm: { fileParentId: '001000000000001AAA', fileType: 'WORD_X' } });
    expect(messages(target({ deliveryMethod: 'crm', options: { crm: { fileType: 'PDF', ownerId: 'x' } } }, 'manage'))).toEqual([
      'targetDocument.options.crm.fileType PDF does not match targetDocument.fileFormat docx (give docx or WORD_X, or leave it out)',
      'targetDocument.options.crm.ownerId must be a Salesforce record id (15 or 18 letters and digits)',
    ]);
  });

  it("reads only the options of the target's own drive, and sharing asks the drive to share", () => {
    const a = target({
      deliveryMethod: 'DriveA',
      path: '',
      options: { driveA: { viewUsers: 'ada@example.com', conflictBehavior: 'replace' }, driveB: { viewAnonymous: 'yes' } },
    });
    expect(a.problems).toEqual([]);
    expect(a.target).toMatchObject({ sharing: { viewUsers: ['ada@example.com'] }, conflict: 'replace' });
    expect(a.needs).toEqual([
      {
        method: 'DriveA',
        capability: 'write',
        field: 'document.deliveryMethod',
        fileFormat: 'docx',
        target: { name: 'report', path: '', field: 'document' },
      },
      { method: 'DriveA', capability: 'share', field: 'document.options.driveA' },
    ]);
    expect(messages(target({ deliveryMethod: 'DriveB', fileFormat: 'pdf', options: { driveB: { viewAnonymous: 'yes' } } }))).toEqual([
      'document.options.driveB.viewAnonymous must be true or false',
    ]);
    // Storage has no options object of its own: a drive's is ignored.
    expect(target({ options: { driveA: { viewAnonymous: 'yes' } } }).problems).toEqual([]);
  });
});

const generate = (over: { template?: object; data?: object; document?: object } = {}): GenerateRequest => ({
  template: { urn: 't', loadMethod: 'Storage', fileFormat: 'docx', ...over.template },
  data: { urn: 'd', loadMethod: 'Storage', ...over.data },
  document: {
    name: 'n',
    fileFormat: 'docx',
    deliveryMethod: 'Storage',
    path: 'root',
    timezone: 'Europe/Paris',
    locale: 'fr-FR',
    ...over.document,
  },
});

describe('parseGenerateRequest', () => {
  it('a valid request: the workflow input and what it asks of each location', () => {
    const r = parseGenerateRequest(
      generate({ template: { relatedItems: [{ name: 'footer', urn: 'f' }] }, data: { loadMethod: 'DriveA' } }),
      catalog,
    );
    expect(r.problems).toEqual([]);
    expect(r.input.template.relatedItems).toEqual([{ name: 'footer', urn: 'f', loadMethod: 'Storage', fileFormat: 'docx' }]);
    expect(r.input.document).toEqual({
      name: 'n',
      fileFormat: 'docx',
      deliveryMethod: 'Storage',
      path: 'root',
      locale: 'fr-FR',
      timezone: 'Europe/Paris',
    });
    expect(r.needs.map((n) => `${n.capability} ${n.method} (${n.field})`)).toEqual([
      'readTemplate Storage (template.loadMethod)',
      'readTemplate Storage (template.relatedItems[0].loadMethod)',
      'readData DriveA (data.loadMethod)',
      'write Storage (document.deliveryMethod)',
    ]);
  });

  it('every problem at once: the template, rules 1 to 3, the target, the data, the included templates', () => {
    const r = parseGenerateRequest(
      generate({
        template: { loadMethod: 'Storage', fileFormat: 'gdoc', relatedItems: [{ name: ' ', urn: 'x', fileFormat: 'odt' }] },
        data: { loadMethod: 'Ftp', embedded: '[1]' },
        document: {
          fileFormat: 'docx',
          deliveryMethod: 'Storage',
          path: 'nowhere',
          timezone: 'Mars/Olympus',
          options: { csvSaveOptions: { sheet: 0 } },
        },
      }),
      catalog,
    );
    expect(messages(r)).toEqual([
      'template.fileFormat gdoc loads only from DriveB (template.loadMethod is Storage)',
      "document.path must be 'root' or start with 'root/' for Storage",
      'document.fileFormat must equal template.fileFormat (gdoc), or be pdf',
      'document.timezone "Mars/Olympus" is not an IANA time zone',
      'data.loadMethod must be one of Storage, DriveA, DriveB, GraphQL',
      'data.embedded must be JSON text of an object',
      'template.relatedItems[0].name is required (the name the include directive uses)',
      'template.relatedItems[0].fileFormat must be docx, xlsx or pptx',
    ]);
  });

  it('reads native merge once, and refuses it where it cannot run', () => {
    const native = generate({
      template: { loadMethod: 'DriveB', fileFormat: 'gdoc' },
      document: { fileFormat: 'gdoc', deliveryMethod: 'DriveB', path: '', options: { driveBGenerate: '{"nativeMergeEnabled":"true"}' } },
    });
    expect(parseGenerateRequest(native, catalog).input.document.nativeMerge).toEqual({ images: false });
    const wrong = generate({ document: { options: { driveBGenerate: { nativeMergeEnabled: true } } } });
    expect(messages(parseGenerateRequest(wrong, catalog))).toEqual([
      'document.options.driveBGenerate.nativeMergeEnabled merges a gdoc, gsheet or gslide template loaded from DriveB in place (template is docx from Storage)',
    ]);
  });

  it('template.url instead of urn + loadMethod; both, or neither, refused', () => {
    expect(
      parseGenerateRequest(generate({ template: { urn: undefined, loadMethod: undefined, url: 'https://example.com/t.docx' } }), catalog)
        .needs[0],
    ).toEqual({
      method: 'url',
      capability: 'readTemplate',
      field: 'template.url',
    });
    expect(
      parseGenerateRequest(generate({ template: { url: 'https://example.com/t.docx' } }), catalog).problems.map((p) => p.code),
    ).toEqual(['VALIDATION_ERROR']);
    expect(
      parseGenerateRequest(generate({ template: { urn: undefined, loadMethod: undefined } }), catalog).problems.map((p) => p.code),
    ).toEqual(['TEMPLATE_NOT_FOUND']);
  });
});

const manage = (body: Partial<ManageRequest>): ManageRequest => ({
  sourceDocument: { urn: 's', fileFormat: 'docx', loadMethod: 'Storage' },
  ...body,
});
const to = (t: Partial<TargetRequest>) => ({ name: 'copy', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', ...t });

describe('parseManageRequest', () => {
  it("spec 4.8's table: the payload chooses the operation", () => {
    expect(parseManageRequest(manage({ targetDocument: to({}) }), catalog).input.operation).toBe('copy');
    expect(
      parseManageRequest(
        manage({ sourceDocument: { urn: 's', fileFormat: 'docx', loadMethod: 'Storage', remove: 'delete' }, targetDocument: to({}) }),
        catalog,
      ).input.operation,
    ).toBe('move');
    expect(parseManageRequest(manage({ targetDocument: to({ fileFormat: 'pdf' }) }), catalog).input).toMatchObject({
      operation: 'convert',
      target: { fileFormat: 'pdf' },
    });
    const del = parseManageRequest(
      manage({ sourceDocument: { urn: 's', fileFormat: 'docx', loadMethod: 'DriveA', remove: 'permanentDelete' } }),
      catalog,
    );
    expect(del.input.operation).toBe('delete');
    expect(del.needs).toEqual([{ method: 'DriveA', capability: 'delete', field: 'sourceDocument.loadMethod' }]);
  });

  it('every problem at once, the target named targetDocument', () => {
    const r = parseManageRequest(
      manage({
        sourceDocument: { urn: 's', fileFormat: 'pdf', loadMethod: 'crm', remove: 'permanentDelete' },
        targetDocument: to({ fileFormat: 'docx', name: '', options: { csvSaveOptions: { sheet: 0 } } }),
        data: { embedded: 'nope' },
      }),
      catalog,
    );
    expect(messages(r)).toEqual([
      "sourceDocument.remove permanentDelete is not available for crm: Salesforce keeps a deleted file in the org's recycle bin; use remove delete",
      'data.embedded must be JSON text of an object',
      'targetDocument.name must be a file name without slashes or control characters (1-255 characters)',
      'Convert from pdf to docx is not possible: docx, xlsx and pptx convert to pdf, and xlsx to csv',
    ]);
    expect(
      messages(
        parseManageRequest(manage({ targetDocument: to({ fileFormat: 'csv', options: { csvSaveOptions: '{"sheet":0}' } }) }), catalog),
      ),
    ).toEqual([
      'targetDocument.options.csvSaveOptions.sheet must be a sheet name or a sheet number from 1 (1 is the first sheet)',
      'Convert from docx to csv is not possible: docx, xlsx and pptx convert to pdf, and xlsx to csv',
    ]);
  });
});

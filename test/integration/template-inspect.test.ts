// POST /documents/template/inspect (extension): tags with locations, problems with locations, the JSON Schema
// of the data and sample data, over real HTTP; the sample generates through the API without a missing value.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocgenClient } from '../../client/index.ts';
import { inspect } from '../../engine/index.ts';
import { client, generateBody } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { type Stack, startStack } from '../support/stack.ts';

const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples');

describe('POST /documents/template/inspect', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    api = client(await stack.credentials());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const send = (name: string, bytes: Uint8Array | string, field = 'file') => {
    const form = new FormData();
    form.append(field, new Blob([typeof bytes === 'string' ? bytes : Buffer.from(bytes)]), name);
    return api.call('POST', '/documents/template/inspect', { form });
  };

  it('answers the tags, problems, schema and sample of a template in the success envelope', async () => {
    const bytes = readFileSync(path.join(examples, 'invoice.docx'));
    const r = await send('invoice.docx', bytes);
    expect(r.status).toBe(200);
    expect(r.body.result).toMatchObject({ statusCode: 200, message: 'OK' });
    expect(r.body.origin).toMatch(/^POST http:\/\/.*\/v1\/documents\/template\/inspect$/);
    const data = r.body.result.data;
    expect(data).toMatchObject({ fileName: 'invoice.docx', format: 'docx', problems: [], includes: [] });
    expect(data.tags).toHaveLength(inspect(bytes).tags.length);
    expect(data.tags.find((t: { source: string }) => t.source === 'customer.name')).toMatchObject({
      kind: 'field',
      location: { part: 'word/document.xml', where: expect.stringMatching(/^word\/document\.xml, paragraph \d+$/) },
    });
    const validate = new Ajv2020({ strict: true, allowUnionTypes: true }).compile(data.schema);
    expect(validate(data.sample)).toBe(true);
    expect(validate(JSON.parse(readFileSync(path.join(examples, 'invoice.json'), 'utf8')))).toBe(true);
    expect(data.schema.properties.items.type).toBe('array');

    // The sample generates through the API, every tag filled.
    const generate = async (json: unknown) => {
      const ids = await api.uploadPair(bytes, json);
      return api.call('POST', '/documents/document/generate', {
        json: generateBody(ids.templateUrn, ids.dataUrn, { document: { name: 'sample' } }),
      });
    };
    const g = await generate(data.sample);
    expect(g.status).toBe(201);
    // The generate lists tags left empty for want of data (result.data.warnings, only when there are some).
    expect(g.body.result.data.warnings).toBeUndefined();
    const { number: _dropped, ...lacking } = data.sample as Record<string, unknown>;
    const g2 = await generate(lacking);
    expect(g2.status).toBe(201);
    expect(g2.body.result.data.warnings.map((w: { code: string; tag: string }) => [w.code, w.tag])).toEqual([
      ['MISSING_VALUE', 'number'],
      ['MISSING_VALUE', 'number'],
    ]);
  });

  it("is the SDK's templates.inspect", async () => {
    const creds = await stack.credentials();
    const docgen = new DocgenClient({ baseUrl: creds.baseUrl, apiKey: creds.apiKey, accessToken: creds.accessToken });
    const r = await docgen.templates.inspect({ name: 'products.pptx', content: readFileSync(path.join(examples, 'products.pptx')) });
    expect(r.format).toBe('pptx');
    expect(r.tags[0]).toMatchObject({
      kind: 'slide',
      source: ':products',
      location: { part: expect.stringMatching(/^ppt\/slides\/slide\d+\.xml$/) },
    });
    expect(Object.keys((r.schema as { properties: object }).properties)).toEqual(['products']);
  });

  it('lists problems with their locations (sheet and cell in a workbook)', async () => {
    const r = await send('broken.docx', makeDocx(['Hello {name}', '{#items}{sku}', 'no close']));
    expect(r.status).toBe(200);
    const problems = r.body.result.data.problems as { code: string; location?: { part: string; where: string } }[];
    expect(problems.map((p) => p.code)).toContain('unclosed_loop');
    expect(problems[0]?.location?.where).toMatch(/word\/document\.xml, paragraph 2/);
    const book = await send('monthly-report.xlsx', readFileSync(path.join(examples, 'monthly-report.xlsx')));
    expect(book.status).toBe(200);
    expect(book.body.result.data.tags[0].location).toMatchObject({ sheet: expect.any(String), cell: expect.stringMatching(/^[A-Z]+\d+$/) });
  });

  it("inspects a stored template upload by its urn, without consuming it; another subscription's is not found", async () => {
    const bytes = readFileSync(path.join(examples, 'reminder.docx'));
    const up = await api.upload('template', [{ name: 'reminder.docx', bytes }]);
    expect(up.status).toBe(201);
    const urn: string = up.body.result.data.files[0].id;
    const byUrn = () => api.call('POST', '/documents/template/inspect', { json: { template: { urn, loadMethod: 'Storage' } } });
    const first = await byUrn();
    expect(first.status).toBe(200);
    expect(first.body.result.data).toMatchObject({ fileName: 'reminder.docx', format: 'docx' });
    expect(first.body.result.data.tags).toHaveLength(inspect(bytes).tags.length);
    expect((await byUrn()).status).toBe(200);
    const other = client(await stack.credentials('other'));
    const stolen = await other.call('POST', '/documents/template/inspect', { json: { template: { urn, loadMethod: 'Storage' } } });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error.innerErrors[0]).toMatchObject({
      code: 'TEMPLATE_NOT_FOUND',
      message: expect.stringContaining('template.urn'),
    });
    const drive = await api.call('POST', '/documents/template/inspect', { json: { template: { urn, loadMethod: 'DriveA' } } });
    expect(drive.status).toBe(400);
    expect(drive.body.error.innerErrors[0].message).toContain('template.loadMethod');
  });

  it('serves the studio page, but no development credentials outside `docgen start` on embedded defaults', async () => {
    const origin = new URL(stack.service.baseUrl).origin;
    expect((await fetch(`${origin}/studio`)).status).toBe(200);
    const creds = await fetch(`${origin}/studio/dev-credentials`);
    expect(creds.status).toBe(404);
    expect(((await creds.json()) as { error: { innerErrors: { code: string }[] } }).error.innerErrors[0]?.code).toBe('NOT_FOUND_BY_ID');
  });

  it('refuses what is not a template in the error envelope, naming the file and field', async () => {
    const txt = await send('notes.txt', 'hello', 'upload');
    expect(txt.status).toBe(400);
    expect(txt.body.error.innerErrors[0]).toMatchObject({
      code: 'INVALID_TEMPLATE_FORMAT',
      message: expect.stringContaining('"notes.txt" (field upload)'),
    });
    const fake = await send('fake.docx', 'not a zip at all');
    expect(fake.status).toBe(400);
    expect(fake.body.error.innerErrors[0]).toMatchObject({
      code: 'INVALID_TEMPLATE_FORMAT',
      message: expect.stringContaining('"fake.docx"'),
    });
    const none = await api.call('POST', '/documents/template/inspect', { json: {} });
    expect(none.status).toBe(400);
    expect(none.body.error.innerErrors[0]).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('template.urn is missing'),
    });
  });
});

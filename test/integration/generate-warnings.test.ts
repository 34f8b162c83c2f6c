// Missing data through the real API (issue 26): a tag the data has no value for renders empty and the 201
// lists it in result.data.warnings, located as `docgen inspect` locates tags; with document.options.strict
// the generate fails with a TEMPLATE_ERROR per missing tag and delivers nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { inspect } from '../../engine/index.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { row, xlsx } from '../unit/engine/helpers.ts';

describe('missing data in a generate', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    creds = await stack.credentials();
    api = client(creds);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const generate = (json: unknown) => api.call('POST', '/documents/document/generate', { json });
  async function upload(kind: 'template' | 'data', name: string, bytes: Uint8Array | string): Promise<string> {
    const r = await api.upload(kind, [{ name, bytes }]);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.result.data.files[0].id as string;
  }
  /** Where inspect locates a tag of the template: the warnings must say the same. */
  const located = (template: Uint8Array, source: string) => inspect(template).tags.find((t) => t.source === source)?.location;
  async function delivered(): Promise<{ records: number; files: number; blobs: number }> {
    const count = async (sql: string) =>
      Number((await stack.service.db.query<{ n: string | number }>(sql, [creds.subscriptionId])).rows[0]?.n);
    return {
      records: await count('SELECT count(*) AS n FROM documents WHERE subscription_guid = $1'),
      files: await count("SELECT count(*) AS n FROM stored_files WHERE kind = 'document' AND subscription_id = $1"),
      blobs: (await stack.blobs.list(`subscriptions/${creds.subscriptionId}/documents/`)).length,
    };
  }

  const letter = makeDocx(['Hello {customer}, your rep is {rep.name}.', '{#items}{sku}: {price} {/items}', 'Thanks']);
  const letterData = { customer: 'ACME', items: [{ sku: 'a' }, { sku: 'b' }, { sku: 'c', price: 3 }] };

  it('201 lists each tag that rendered empty once, with the location inspect gives (docx: part and paragraph)', async () => {
    const res = await generate(
      generateBody(await upload('template', 'letter.docx', letter), await upload('data', 'd.json', JSON.stringify(letterData))),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.warnings).toEqual([
      {
        code: 'MISSING_VALUE',
        message: 'no value for tag "rep.name" (word/document.xml, paragraph 1)',
        tag: 'rep.name',
        location: located(letter, 'rep.name'),
      },
      {
        code: 'MISSING_VALUE',
        message: 'no value for tag "price" (word/document.xml, paragraph 2)',
        tag: 'price',
        location: located(letter, 'price'),
      },
    ]);
    expect(res.body.result.data.warnings[0].location).toMatchObject({ part: 'word/document.xml', paragraph: 1 });
    expect(res.body.result.data.warningsOmitted).toBeUndefined();
    // The document went out as before: the tags empty.
    const file = await api.download(res.body.result.data.document.urn);
    expect(docxParagraphs(file.bytes)).toEqual(['Hello ACME, your rep is .', 'a:  b:  c: 3 ', 'Thanks']);
  });

  it('a workbook: the sheet and cell of each tag', async () => {
    const book = xlsx({
      strings: ['{total}', '{#rows}{name}', '{qty}{/rows}'],
      rows:
        row(1, [['A1', 's:0']]) +
        row(2, [
          ['A2', 's:1'],
          ['B2', 's:2'],
        ]),
    });
    const template = await upload('template', 'report.xlsx', book);
    const data = await upload('data', 'd.json', JSON.stringify({ rows: [{ name: 'x', qty: 1 }, { name: 'y' }] }));
    const res = await generate(generateBody(template, data, { template: { fileFormat: 'xlsx' }, document: { fileFormat: 'xlsx' } }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.warnings).toEqual([
      {
        code: 'MISSING_VALUE',
        message: 'no value for tag "total" (sheet "Data Sheet", cell A1)',
        tag: 'total',
        location: located(book, 'total'),
      },
      {
        code: 'MISSING_VALUE',
        message: 'no value for tag "qty" (sheet "Data Sheet", cell B2)',
        tag: 'qty',
        location: located(book, 'qty'),
      },
    ]);
    expect(res.body.result.data.warnings[1].location).toMatchObject({ sheet: 'Data Sheet', cell: 'B2' });
  });

  it('lists the first 100 and counts the rest in warningsOmitted', async () => {
    const many = makeDocx(Array.from({ length: 103 }, (_, i) => `{field${i + 1}}`));
    const res = await generate(generateBody(await upload('template', 'many.docx', many), await upload('data', 'd.json', '{}')));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { warnings, warningsOmitted } = res.body.result.data;
    expect(warnings).toHaveLength(100);
    expect(warnings.map((w: any) => w.tag)).toEqual(Array.from({ length: 100 }, (_, i) => `field${i + 1}`));
    expect(warnings[99].location).toMatchObject({ part: 'word/document.xml', paragraph: 100 });
    expect(warningsOmitted).toBe(3);
  });

  it('no warnings field when every tag had its value', async () => {
    const res = await generate(
      generateBody(
        await upload('template', 'letter.docx', makeDocx(['Hello {name}'])),
        await upload('data', 'd.json', JSON.stringify({ name: 'Ada' })),
      ),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(Object.keys(res.body.result.data)).toEqual(['document']);
  });

  it('strict: 400 TEMPLATE_ERROR naming every missing tag and where it is; nothing delivered; the uploads consumed', async () => {
    const before = await delivered();
    const template = await upload('template', 'letter.docx', letter);
    const data = await upload('data', 'd.json', JSON.stringify({ items: [{ sku: 'a' }] }));
    const res = await generate(generateBody(template, data, { document: { options: { strict: true } } }));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors.map((e: any) => [e.code, e.message, e.eventId])).toEqual([
      ['TEMPLATE_ERROR', 'no value for tag "customer" (word/document.xml, paragraph 1)', 'missing_value'],
      ['TEMPLATE_ERROR', 'no value for tag "rep.name" (word/document.xml, paragraph 1)', 'missing_value'],
      ['TEMPLATE_ERROR', 'no value for tag "price" (word/document.xml, paragraph 2)', 'missing_value'],
    ]);
    // Nothing written, nothing recorded.
    expect(await delivered()).toEqual(before);
    // The run consumed its uploads, as any failed run does (spec 3).
    const again = await generate(generateBody(template, data));
    expect(again.status).toBe(400);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
  });

  it('strict with every value present: 201 as usual; strict that is not a boolean: 400 naming the field', async () => {
    const template = await upload('template', 'letter.docx', makeDocx(['Hello {name}']));
    const data = await upload('data', 'd.json', JSON.stringify({ name: 'Ada' }));
    const bad = await generate(generateBody(template, data, { document: { options: { strict: 'yes' } } }));
    expect(bad.status).toBe(400);
    expect(bad.body.error.innerErrors[0]).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('document.options.strict'),
    });
    const ok = await generate(generateBody(template, data, { document: { options: { strict: true } } }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(docxParagraphs((await api.download(ok.body.result.data.document.urn)).bytes)).toEqual(['Hello Ada']);
  });
});

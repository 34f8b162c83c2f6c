// template.relatedItems reach the merge: the include directive ({>name}) renders the related template,
// read from its location like the main template; a related item that does not resolve fails the generate
// with TEMPLATE_NOT_FOUND naming the item.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, generateBody } from '../support/http.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('template.relatedItems', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack();
    api = client(await stack.credentials());
  });
  afterAll(async () => stack?.stop());

  async function upload(bytes: Uint8Array, name: string): Promise<string> {
    const r = await api.upload('template', [{ name, bytes }]);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.result.data.files[0].id as string;
  }

  it('an included template from Storage is merged with the same data', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Dear {name},', '{>footer}', 'Bye']), {
      name: 'Ada',
      company: 'Analytical Engines',
    });
    const footer = await upload(makeDocx(['{company} - footer']), 'footer.docx');
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, {
        template: { relatedItems: [{ name: 'footer', urn: footer, loadMethod: 'Storage', fileFormat: 'docx' }] },
      }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = await api.download(res.body.result.data.document.urn);
    expect(docxParagraphs(doc.bytes)).toEqual(['Dear Ada,', 'Analytical Engines - footer', 'Bye']);
    // Spec 3: the request consumed the uploads it named, the included template too.
    const again = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, {
        template: { relatedItems: [{ name: 'footer', urn: footer, loadMethod: 'Storage', fileFormat: 'docx' }] },
      }),
    });
    expect(again.status).toBe(400);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const other = await api.uploadPair(makeDocx(['{>footer}']), { company: 'x' });
    const footerGone = await api.call('POST', '/documents/document/generate', {
      json: generateBody(other.templateUrn, other.dataUrn, {
        template: { relatedItems: [{ name: 'footer', urn: footer, loadMethod: 'Storage' }] },
      }),
    });
    expect(footerGone.status).toBe(400);
    expect(footerGone.body.error.innerErrors[0].message).toContain(footer);
  });

  it('a related item that does not resolve: 400 TEMPLATE_NOT_FOUND naming it', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['{>footer}']), { name: 'x' });
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, {
        template: { relatedItems: [{ name: 'footer', urn: '00000000-0000-4000-8000-000000000000', loadMethod: 'Storage' }] },
      }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
  });

  it('malformed related items are refused before queueing, naming the field', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair();
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, {
        template: {
          relatedItems: [
            { name: 'a', urn: 'u1' },
            { name: 'a', urn: 'u2' },
            { name: 'b', fileFormat: 'gdoc', loadMethod: 'Storage' },
          ],
        },
      }),
    });
    expect(res.status).toBe(400);
    const messages = res.body.error.innerErrors.map((e: any) => e.message).join('\n');
    expect(messages).toContain('template.relatedItems[1].name "a" is given twice');
    expect(messages).toContain('template.relatedItems[2].urn is required');
    expect(messages).toContain('template.relatedItems[2].fileFormat must be docx, xlsx or pptx');
  });
});

// A service without LibreOffice (issue 39, finding 6): the README promises that docx, xlsx and pptx
// generation works without a converter, pages metered by the document's own statistic (PAGE_COUNT=auto);
// only a conversion needs one, and it answers 400 NOT_SUPPORTED saying how to enable one. The machine here
// has an executable that is there but cannot start (a broken or partial install: the probe finds it, the
// pool cannot start an instance); a missing executable already worked (the probe, cached per process, says
// so and the worker has no converter).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, generateBody } from '../support/http.ts';
import { docxParagraphs, makeDocx } from '../support/office.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('generate on a service whose LibreOffice cannot start', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack({ soffice: '/bin/false', pageCount: 'auto' });
    api = client(await stack.credentials());
  });
  afterAll(async () => stack?.stop());

  it('generates docx to docx, counting pages by the document statistic', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'Ada' });
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { name: 'plain', fileFormat: 'docx' } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    const doc = await api.download(res.body.result.data.document.urn);
    expect(docxParagraphs(doc.bytes)).toEqual(['Hello Ada']);
  });

  it('a conversion answers 400 NOT_SUPPORTED naming the missing converter', async () => {
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Hello {name}']), { name: 'Ada' });
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(templateUrn, dataUrn, { document: { name: 'converted', fileFormat: 'pdf' } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('NOT_SUPPORTED');
    expect(res.body.error.innerErrors[0].message).toMatch(
      /no converter available: LibreOffice instance 0 failed to start.*install LibreOffice/,
    );
  });
});

// PAGE_COUNT=document: docx/xlsx pages are the document's own statistic, and nothing is converted to count
// them, though this stack has LibreOffice (with PAGE_COUNT=auto the same letter meters its rendition's
// pages: generate-convert.test.ts). Its own file: the converter is process-wide.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { converterStatus } from '../../converter/index.ts';
import { makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('PAGE_COUNT=document', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack({ pageCount: 'document' });
    api = client(await stack.credentials());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('meters the statistic of a docx whose merge ran over several pages', async () => {
    // The same letter generate-convert.test.ts meters by its rendition (several pages); the template has no
    // docProps/app.xml <Pages>, so its statistic is 1.
    const template = makeDocx(['Dear {name},', '{#lines}', 'Line {.} of a long letter that fills page after page.', '{/lines}']);
    const { templateUrn, dataUrn } = await api.uploadPair(template, { name: 'Ada', lines: Array.from({ length: 160 }, (_, i) => i) });
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(templateUrn, dataUrn) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    // Nothing was converted to count them.
    expect(converterStatus()?.instances.reduce((n, i) => n + i.conversions, 0)).toBe(0);
  });
});

// A generate counts its pages once (issue 40): a pdf's pages come from the conversion that made it (the
// write step reads no file to count them), and a docx delivered as merged has its count started by the
// prepare step and taken by the write step (activities/groups.ts CountsAhead), not counted a second time.
// Read from the worker's step metric (docgen_activity_duration_seconds{activity="measure"}).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDocx } from '../support/office.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

/** How many measure steps the worker ran to the end (ok or not). */
async function measures(stack: Stack): Promise<number> {
  const text = await (await fetch(`${stack.service.metricsUrl!}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^docgen_activity_duration_seconds_count\{activity="measure",outcome="[^"]+"\} (\S+)$/gm))
    n += Number(m[1]);
  return n;
}

describe('a generate counts its pages once', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    stack = await startStack({ metricsPort: 0 });
    api = client(await stack.credentials());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function generate(fileFormat: 'docx' | 'pdf'): Promise<number> {
    // Three pages: the count is LibreOffice's layout (docx) or the PDF's own (pdf), not the template's statistic.
    const paragraphs = ['Invoice {n}', ...Array.from({ length: 120 }, (_, i) => `Line ${i + 1} of a long invoice for {who}.`)];
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(paragraphs) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ n: 7, who: 'Zed' }) }]);
    const res = await api.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat } }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.consumption.find((c: { dimension: string }) => c.dimension === 'pages-generated').value;
  }

  it('a pdf: metered by its conversion, no count step', async () => {
    const before = await measures(stack);
    const pages = await generate('pdf');
    expect(pages).toBeGreaterThan(1);
    expect(await measures(stack)).toBe(before);
  });

  it('a docx: one count, started ahead and taken by the write step, the same pages as the pdf', async () => {
    const pdfPages = await generate('pdf');
    const before = await measures(stack);
    expect(await generate('docx')).toBe(pdfPages);
    expect(await measures(stack)).toBe(before + 1);
  });
});

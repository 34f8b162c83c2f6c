// The converter budget's 429 (issue 36, section 2) carries a Retry-After header, like the API's rate
// limits: a subscription past CONVERTER_SUBSCRIPTION_BUDGET_MS while another used the converter gets
// 429 TOO_MANY_REQUESTS naming the setting, and Retry-After in whole seconds within the budget window.
// Real service in-process, real Temporal dev server, real LibreOffice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDocx, para } from '../convert/fixtures.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';

async function pdfGenerate(api: ReturnType<typeof client>) {
  const t = await api.upload('template', [{ name: 'a.docx', bytes: makeDocx(para('Hello {name}')) }]);
  const d = await api.upload('data', [{ name: 'a.json', bytes: JSON.stringify({ name: 'A' }) }]);
  return api.call('POST', '/documents/document/generate', {
    json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: 'pdf' } }),
  });
}

describe('the converter budget over the API', () => {
  let stack: Stack;
  beforeAll(async () => {
    // A budget any conversion uses up, in a window of 60 s.
    stack = await startStack({ converterPoolSize: 1, converterSubscriptionBudgetMs: 1, converterBudgetWindowMs: 60_000 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 429 TOO_MANY_REQUESTS with Retry-After once the subscription used its budget while another converted', async () => {
    const a = client(await stack.credentials('tenant-a'));
    const b = client(await stack.credentials('tenant-b'));
    expect((await pdfGenerate(a)).status).toBe(201);
    expect((await pdfGenerate(b)).status).toBe(201);
    const refused = await pdfGenerate(b);
    expect(refused.status, JSON.stringify(refused.body)).toBe(429);
    expect(refused.body.error.innerErrors[0]).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      message: expect.stringMatching(/CONVERTER_SUBSCRIPTION_BUDGET_MS/),
    });
    const retryAfter = refused.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
  }, 180_000);
});

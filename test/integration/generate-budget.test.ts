// A synchronous generate's LibreOffice work does not outlive its caller (issue 11, section 2): with
// GENERATE_TIMEOUT_MS at 2 s and a document whose page-count rendition takes LibreOffice far longer, the
// caller gets 504 and the instance is free again at once (the rendition got the caller's remaining time,
// not the pool's 120 s), and nothing is retried for that caller afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDefaultConverter, LibreOfficePool } from '../../converter/index.ts';
import { longDocx } from './convert/fixtures.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

const TIMEOUT_MS = 2_000;

describe('a sync generate whose conversion outlasts GENERATE_TIMEOUT_MS', () => {
  let stack: Stack;
  let pool: LibreOfficePool;

  beforeAll(async () => {
    // The document below is estimated at ~2 400 pages, past the default TEMPLATE_MAX_PAGES that would
    // refuse it before any conversion (test/integration/generate-cost.test.ts): raised here, so that the
    // conversion runs and outlasts the caller.
    stack = await startStack({ generateTimeoutMs: TIMEOUT_MS, converterPoolSize: 1, templateMaxPages: 5_000 });
    const c = getDefaultConverter();
    if (!(c instanceof LibreOfficePool)) throw new Error(`expected the LibreOffice pool, got ${c.kind}`);
    pool = c;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 504 and leaves no conversion running or queued for the caller that left', async () => {
    const api = client(await stack.credentials());
    // ~2,200 pages of text: LibreOffice needs well over 2 s to lay it out for the page count (about 2 s
    // per 450 pages here, counting without a PDF export).
    const t = await api.upload('template', [{ name: 'long.docx', bytes: longDocx(60_000) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: '{}' }]);
    const res = await api.call('POST', '/documents/document/generate', { json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id) });
    expect(res.status, JSON.stringify(res.body)).toBe(504);
    expect(res.body.error.innerErrors[0].code).toBe('GENERATION_TIMEOUT');
    // The rendition had the caller's remaining time: the instance is free within seconds, not 120 s.
    const deadline = Date.now() + 10_000;
    while ((pool.status().running > 0 || pool.status().queued > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(pool.status()).toMatchObject({ running: 0, queued: 0 });
    // And stays free: no retry of the step for a caller who has gone.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(pool.status()).toMatchObject({ running: 0, queued: 0 });
  });
});

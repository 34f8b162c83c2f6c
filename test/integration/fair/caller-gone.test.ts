// A synchronous caller that stopped waiting leaves nothing queued ahead of its next request (issue 36,
// section 1): the run's conversion, still queued for the converter when GENERATE_TIMEOUT_MS passes, is not
// run. One LibreOffice instance held by another subscription's long conversion (no slice, no spare, so it
// holds it); A's sync generate answers 504 and its conversion never starts.
// Real service in-process, real Temporal dev server, real LibreOffice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDefaultConverter, LibreOfficePool } from '../../../converter/index.ts';
import { longDocx, makeDocx, para } from '../convert/fixtures.ts';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';

async function pdfGenerate(api: ReturnType<typeof client>, template: Uint8Array) {
  const t = await api.upload('template', [{ name: 'a.docx', bytes: template }]);
  const d = await api.upload('data', [{ name: 'a.json', bytes: '{}' }]);
  return api.call('POST', '/documents/document/generate', {
    json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: 'pdf' } }),
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a sync caller that stopped waiting', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      converterPoolSize: 1,
      converterSpareInstances: 0,
      converterSliceMs: 600_000,
      converterContendedTimeoutMs: 600_000,
      converterTimeoutMs: 600_000,
      generateTimeoutMs: 4_000,
    });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers 504 and its conversion, still queued, never runs', async () => {
    const pool = getDefaultConverter();
    if (!(pool instanceof LibreOfficePool)) throw new Error(`expected the LibreOffice pool, got ${pool.kind}`);
    const aCreds = await stack.credentials('tenant-a');
    const bCreds = await stack.credentials('tenant-b');
    // B's sync generate of a long document holds the only instance (its own 504 comes, its conversion runs on).
    const b = pdfGenerate(client(bCreds), longDocx(45_000));
    const deadline = Date.now() + 60_000;
    while (pool.subscriptionUsage(bCreds.subscriptionId).running === 0 && Date.now() < deadline) await sleep(50);
    expect(pool.subscriptionUsage(bCreds.subscriptionId).running).toBe(1);
    const a = await pdfGenerate(client(aCreds), makeDocx(para('small')));
    expect(a.status, JSON.stringify(a.body)).toBe(504);
    // Past its caller's wait, A's conversion left the queue without starting, while B's still runs.
    while (pool.subscriptionUsage(aCreds.subscriptionId).queued > 0 && Date.now() < deadline) await sleep(50);
    expect(pool.subscriptionUsage(aCreds.subscriptionId)).toMatchObject({ queued: 0, running: 0, started: 0 });
    expect(pool.subscriptionUsage(bCreds.subscriptionId).running).toBe(1);
    await b;
  }, 180_000);
});

// One tenant must never take the service down (issue 11, sections 1 and 2). Each hostile file is built
// here; each case asserts the answer (400 TEMPLATE_TOO_COMPLEX naming the limit and its value, or the
// failure reported through the async callback) and that another tenant's requests are served meanwhile
// by the same process. Real service in-process (API + worker + merge threads), real Temporal dev server.
//
// The limits are lowered for this stack so that the hostile files stay small enough for a shared test
// machine; the defaults (engine/limits.ts, config/env.ts) are the same checks with larger values. Outputs
// are docx and the stack runs without LibreOffice (CONVERTER=none: pages are estimated), so every second
// measured here is the merge's; the converter's bounds are tested in convert/limits.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { makeDocx, para } from './convert/fixtures.ts';
import { type Delivery, type Receiver, startReceiver } from './async/receiver.ts';
import { numberedParagraphs } from '../support/costly-office.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

const PART_LIMIT = 16 * 1024 * 1024;
const ELEMENT_LIMIT = 100_000;
const HEAP_LIMIT_MB = 64;

/** A tenant's ordinary traffic while an attack runs: small sync generates and a list request, one after
 *  the other, until `attack` settles. Returns the attack's result and every request's status and time. */
async function whileAttacking<T>(api: ReturnType<typeof client>, attack: () => Promise<T>) {
  const template = makeDocx(para('Hello {name}'));
  const samples: { status: number; ms: number }[] = [];
  let done = false;
  const traffic = (async () => {
    while (!done || samples.length < 3) {
      const t0 = performance.now();
      const t = await api.upload('template', [{ name: 'a.docx', bytes: template }]);
      const d = await api.upload('data', [{ name: 'a.json', bytes: JSON.stringify({ name: 'A' }) }]);
      const g = await api.call('POST', '/documents/document/generate', {
        json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id),
      });
      samples.push({ status: g.status, ms: performance.now() - t0 });
      const t1 = performance.now();
      const l = await api.call('GET', '/documents/template/list');
      samples.push({ status: l.status, ms: performance.now() - t1 });
    }
  })();
  try {
    return { result: await attack(), samples };
  } finally {
    done = true;
    await traffic;
  }
}

function p95(ms: number[]): number {
  const s = [...ms].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? 0);
}

describe('hostile templates and data from one tenant', () => {
  let stack: Stack;
  let attacker: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  let attackerCreds: Credentials;
  let receiver: Receiver;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([
      startStack({
        converterMode: 'none',
        templateMaxPartBytes: PART_LIMIT,
        templateMaxXmlElements: ELEMENT_LIMIT,
        // The paragraph flood below is past the page estimate too (engine/cost.ts, checked on the template
        // before rendering; test/integration/generate-cost.test.ts): raised so that the element count is
        // what refuses it here.
        templateMaxPages: 1_000_000,
        mergeMaxMemoryMb: HEAP_LIMIT_MB,
        mergeThreads: 2,
        outboundAllow: ['127.0.0.1'],
        callbackRetryScheduleMs: [0, 150, 150],
        callbackTimeoutMs: 2_000,
      }),
      startReceiver('127.0.0.1'),
    ]);
    attackerCreds = await stack.credentials('tenant-b');
    attacker = client(attackerCreds);
    other = client(await stack.credentials('tenant-a'));
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  const report = (name: string, ms: number, samples: { status: number; ms: number }[]) =>
    console.log(
      `[hostile] ${name}: answered in ${Math.round(ms)} ms; other tenant: ${samples.length} requests, p95 ${p95(samples.map((s) => s.ms))} ms`,
    );

  function expectServed(samples: { status: number; ms: number }[]) {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples.map((s) => s.status).filter((s) => s !== 200 && s !== 201)).toEqual([]);
  }

  async function upload(template: Uint8Array, data: unknown) {
    const t = await attacker.upload('template', [{ name: 'hostile.docx', bytes: template }]);
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    const d = await attacker.upload('data', [{ name: 'hostile.json', bytes: typeof data === 'string' ? data : JSON.stringify(data) }]);
    expect(d.status, JSON.stringify(d.body).slice(0, 500)).toBe(201);
    return generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id);
  }

  it('refuses at upload a package whose part inflates past TEMPLATE_MAX_PART_BYTES (paragraph flood, whitespace bomb)', async () => {
    // ~24 MB of short numbered paragraphs (the 4,000,000-paragraph file, scaled to the lowered limit).
    const flood = makeDocx(numberedParagraphs(600_000) + para('{name}'));
    // A few letters in ~40 MB of whitespace: under the zip-bomb ratio check, so only the part size stops it.
    const spaces = ' '.repeat(4096);
    const whitespace = makeDocx(
      `<w:p><w:r><w:t xml:space="preserve">${Array.from({ length: 10_000 }, (_, i) => `${spaces}${i}`).join('')}</w:t></w:r></w:p>`,
    );
    expect(whitespace.length * 1000).toBeGreaterThan(40 * 1024 * 1024);
    const { result, samples } = await whileAttacking(other, async () => {
      const answers = [];
      for (const [name, bytes] of [
        ['flood.docx', flood],
        ['whitespace.docx', whitespace],
      ] as const) {
        const t0 = performance.now();
        const res = await attacker.upload('template', [{ name, bytes }]);
        answers.push({ res, ms: performance.now() - t0, size: bytes.length });
      }
      return answers;
    });
    for (const { res, ms, size } of result) {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_TOO_COMPLEX');
      expect(res.body.error.message).toMatch(new RegExp(`the limit is ${PART_LIMIT} \\(TEMPLATE_MAX_PART_BYTES\\)`));
      report(`upload of ${size} bytes inflating past the part limit`, ms, samples);
    }
    expectServed(samples);
  });

  it('refuses at generate a part with more XML elements than TEMPLATE_MAX_XML_ELEMENTS', async () => {
    // 200,000 paragraphs = 800,000 elements in ~8 MB: within the part size, over the element count.
    const body = await upload(makeDocx(para('{name}') + numberedParagraphs(200_000)), { name: 'B' });
    const { result, samples } = await whileAttacking(other, async () => {
      const t0 = performance.now();
      return { res: await attacker.call('POST', '/documents/document/generate', { json: body }), ms: performance.now() - t0 };
    });
    expect(result.res.status, JSON.stringify(result.res.body)).toBe(400);
    expect(result.res.body.error.innerErrors[0].code).toBe('TEMPLATE_TOO_COMPLEX');
    expect(result.res.body.error.message).toMatch(new RegExp(`the limit is ${ELEMENT_LIMIT} \\(TEMPLATE_MAX_XML_ELEMENTS\\)`));
    report('generate with 800,000 XML elements', result.ms, samples);
    expectServed(samples);
  });

  it('refuses a million loop items past TEMPLATE_MAX_LOOP_ITERATIONS', async () => {
    const limit = stack.config.templateMaxLoopIterations;
    const body = await upload(
      makeDocx(para('{#items}') + para('item {.}') + para('{/items}')),
      `{"items":[${Array(1_000_000).fill(7).join(',')}]}`,
    );
    const { result, samples } = await whileAttacking(other, async () => {
      const t0 = performance.now();
      return { res: await attacker.call('POST', '/documents/document/generate', { json: body }), ms: performance.now() - t0 };
    });
    expect(result.res.status, JSON.stringify(result.res.body)).toBe(400);
    expect(result.res.body.error.innerErrors[0].code).toBe('TEMPLATE_TOO_COMPLEX');
    expect(result.res.body.error.message).toMatch(new RegExp(`the limit is ${limit} \\(TEMPLATE_MAX_LOOP_ITERATIONS\\)`));
    report('generate with 1,000,000 loop items', result.ms, samples);
    expectServed(samples);
  });

  // ~18 MB of data whose merge builds far more strings than the thread's heap holds.
  const heavyData = () => ({
    items: Array.from({ length: 150_000 }, (_, i) => ({ t: `${i} ${'lorem ipsum dolor sit amet '.repeat(4)}` })),
  });
  const heavyTemplate = () => makeDocx(para('{#items}') + para('{t | upper} {t | lower} {t}') + para('{/items}'));

  it('ends a merge that exhausts its thread heap (MERGE_MAX_MEMORY_MB): 400, the process and the other tenant carry on', async () => {
    const body = await upload(heavyTemplate(), heavyData());
    const { result, samples } = await whileAttacking(other, async () => {
      const t0 = performance.now();
      return { res: await attacker.call('POST', '/documents/document/generate', { json: body }), ms: performance.now() - t0 };
    });
    expect(result.res.status, JSON.stringify(result.res.body)).toBe(400);
    expect(result.res.body.error.innerErrors[0].code).toBe('TEMPLATE_TOO_COMPLEX');
    expect(result.res.body.error.message).toMatch(new RegExp(`the limit is ${HEAP_LIMIT_MB} MB \\(MERGE_MAX_MEMORY_MB\\)`));
    report('generate exhausting the merge heap', result.ms, samples);
    expectServed(samples);
    const health = await fetch(`${stack.service.baseUrl}/v1/health`);
    expect(health.status).toBe(200);
  });

  it('async: the same merge fails once and its failure reaches the callback (no retry, no crash loop)', async () => {
    const body = await upload(heavyTemplate(), heavyData());
    const made = await attacker.call('POST', '/common/client/token', {
      json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest: '/hostile', client_id: 'tests' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const { result, samples } = await whileAttacking(other, async () => {
      const t0 = performance.now();
      const res = await attacker.call('POST', '/documents/document/generate/async', {
        json: body,
        headers: { 'x-client-authorization': made.body.result.data.token },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const [delivery] = await receiver.waitFor('/hooks/hostile', 1, 60_000);
      return { delivery: delivery as Delivery, ms: performance.now() - t0 };
    });
    const envelope = JSON.parse(result.delivery.body) as {
      error: { statusCode: number; message: string; innerErrors: { code: string }[] };
    };
    expect(envelope.error.statusCode).toBe(400);
    expect(envelope.error.innerErrors[0]?.code).toBe('TEMPLATE_TOO_COMPLEX');
    expect(envelope.error.message).toMatch(/MERGE_MAX_MEMORY_MB/);
    report('async generate exhausting the merge heap (to callback)', result.ms, samples);
    expectServed(samples);
    // One callback, not one per retry.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.deliveries.filter((d) => d.path === '/hooks/hostile')).toHaveLength(1);
  });
});

// Documents under every size limit that would hold LibreOffice for minutes (issue 25, section 2) are
// refused by the merge, before any conversion, with 400 TEMPLATE_TOO_COMPLEX naming the limit and its
// setting (engine/cost.ts); and a conversion that runs past CONVERTER_TIMEOUT_MS fails once, as the
// document's cost, instead of being retried as if the machine had failed. Real service in-process, real
// Temporal dev server, real LibreOffice (one instance, the case); the files are built here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDefaultConverter, LibreOfficePool } from '../../converter/index.ts';
import { DEFAULT_TEMPLATE_LIMITS as L } from '../../engine/limits.ts';
import { longDocx, makeDocx, para } from './convert/fixtures.ts';
import { type Receiver, startReceiver } from './async/receiver.ts';
import { hugePng, htmlTable, longRunDocx, numberedParagraphs, tagDocx } from '../support/costly-office.ts';
import { client, generateBody } from '../support/http.ts';
import { type Stack, startStack } from '../support/stack.ts';

const CONVERTER_TIMEOUT_MS = 4_000;

describe('costly documents and LibreOffice', () => {
  let stack: Stack;
  let receiver: Receiver;
  let pool: LibreOfficePool;
  let b: ReturnType<typeof client>;
  let bSubscription: string;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([
      // Before the estimates, each of these requests held the only LibreOffice instance for minutes, past the
      // caller's deadline (504); now each is refused before converting, which the pool's own count of started
      // conversions proves (not the time it took: reading a 7.3 MB HTML table takes tens of seconds on a loaded machine).
      startStack({
        converterPoolSize: 1,
        generateTimeoutMs: 120_000,
        converterTimeoutMs: CONVERTER_TIMEOUT_MS,
        outboundAllow: ['127.0.0.1'],
        callbackRetryScheduleMs: [0, 200],
      }),
      startReceiver('127.0.0.1'),
    ]);
    const c = getDefaultConverter();
    if (!(c instanceof LibreOfficePool)) throw new Error(`expected the LibreOffice pool, got ${c.kind}`);
    pool = c;
    const creds = await stack.credentials('tenant-b');
    b = client(creds);
    bSubscription = creds.subscriptionId;
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function uploaded(template: Uint8Array, data: unknown, format = 'pdf') {
    const t = await b.upload('template', [{ name: 'costly.docx', bytes: template }]);
    expect(t.status, JSON.stringify(t.body).slice(0, 300)).toBe(201);
    const d = await b.upload('data', [{ name: 'costly.json', bytes: JSON.stringify(data) }]);
    expect(d.status, JSON.stringify(d.body).slice(0, 300)).toBe(201);
    return generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: format } });
  }

  const cases = [
    {
      name: 'a 0.7 MB docx of 260 000 paragraphs',
      build: () => ({ template: makeDocx(para('{name}') + numberedParagraphs(260_000)), data: { name: 'B' } }),
      message: `the document comes to about 5201 pages (260001 paragraphs); the limit is ${L.maxPages} (TEMPLATE_MAX_PAGES)`,
    },
    {
      name: 'a 5 MB docx with one run of 60 000 000 characters',
      build: () => ({ template: longRunDocx(60_000_000, para('{name}')), data: { name: 'B' } }),
      message: `paragraph 2 of word/document.xml has 60000000 characters; the limit is ${L.maxParagraphChars} (TEMPLATE_MAX_PARAGRAPH_CHARS)`,
    },
    {
      name: 'a 0.1 MB PNG of 30 000 x 30 000 pixels given as data',
      build: () => ({
        template: tagDocx('{%img}'),
        data: { img: `data:image/png;base64,${Buffer.from(hugePng(30_000, 30_000)).toString('base64')}` },
      }),
      message:
        /^the images come to 900000000 pixels \(the largest, word\/media\/[^,]+\.png, is 30000 x 30000\); the limit is 300000000 \(TEMPLATE_MAX_IMAGE_PIXELS\)/,
    },
    {
      name: 'a 7.3 MB HTML table of 40 000 rows inserted with {~~html}',
      build: () => ({ template: tagDocx('{~~html}'), data: { html: htmlTable(40_000, 10) } }),
      message: `a table of word/document.xml has 40000 rows; the limit is ${L.maxTableRows} (TEMPLATE_MAX_TABLE_ROWS)`,
    },
  ];

  it.each(cases)(
    'refuses $name before converting: 400 TEMPLATE_TOO_COMPLEX naming the limit',
    async ({ name, build, message }) => {
      const { template, data } = build();
      const body = await uploaded(template, data);
      const started = pool.subscriptionUsage(bSubscription).started;
      const t0 = performance.now();
      const res = await b.call('POST', '/documents/document/generate', { json: body });
      const ms = Math.round(performance.now() - t0);
      console.log(
        `[cost] ${name} (${(template.length / 1e6).toFixed(2)} MB): ${res.status} ${res.body?.error?.innerErrors?.[0]?.code} in ${ms} ms`,
      );
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_TOO_COMPLEX');
      // Each inner error is one limit, with where it is when it has a place (" (word/document.xml, paragraph 3)").
      const inner: string[] = res.body.error.innerErrors.map((e: { message: string }) => e.message);
      expect(
        inner.some((m) => (typeof message === 'string' ? m.startsWith(message) : message.test(m))),
        inner.join(' | '),
      ).toBe(true);
      // Refused by the merge: LibreOffice never saw it.
      expect(pool.subscriptionUsage(bSubscription).started).toBe(started);
    },
    240_000,
  );

  it('async: the callback carries the same 400, once', async () => {
    const body = await uploaded(makeDocx(para('{name}') + numberedParagraphs(260_000)), { name: 'B' });
    const made = await b.call('POST', '/common/client/token', {
      json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest: '/cost', client_id: 'tests' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const res = await b.call('POST', '/documents/document/generate/async', {
      json: body,
      headers: { 'x-client-authorization': made.body.result.data.token },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [delivery] = await receiver.waitFor('/hooks/cost', 1, 90_000);
    const envelope = JSON.parse(delivery!.body) as { error: { statusCode: number; innerErrors: { code: string; message: string }[] } };
    expect(envelope.error.statusCode).toBe(400);
    expect(envelope.error.innerErrors[0]).toMatchObject({
      code: 'TEMPLATE_TOO_COMPLEX',
      message: expect.stringMatching(/\(TEMPLATE_MAX_PAGES\)$/),
    });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.at('/hooks/cost')).toHaveLength(1);
  }, 120_000);

  it('a conversion past CONVERTER_TIMEOUT_MS fails once with 400 TEMPLATE_TOO_COMPLEX, not retried', async () => {
    // ~900 pages of text: within the estimates, but LibreOffice needs well over 4 s for it.
    const body = await uploaded(longDocx(24_000), {});
    const started = pool.subscriptionUsage(bSubscription).started;
    const res = await b.call('POST', '/documents/document/generate', { json: body });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_TOO_COMPLEX');
    expect(res.body.error.message).toBe(
      `the document cannot be converted: the conversion took longer than ${CONVERTER_TIMEOUT_MS} ms; the limit is ${CONVERTER_TIMEOUT_MS} ms (CONVERTER_TIMEOUT_MS)`,
    );
    // One conversion, not one per attempt of the step's retry policy (4), and none after the answer.
    expect(pool.subscriptionUsage(bSubscription).started).toBe(started + 1);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(pool.subscriptionUsage(bSubscription).started).toBe(started + 1);
  }, 120_000);
});

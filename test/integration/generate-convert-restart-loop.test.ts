// A short LibreOffice crash loop through the service (issue 28, section 2): LibreOffice is killed as it
// restarts until three starts in a row have failed, the point where the pool used to declare itself
// failing and every queued pdf generate called back `NOT_SUPPORTED: no LibreOffice instance can start …
// install LibreOffice`. Now the conversions wait for the instance, every generate calls back its
// document, and /v1/ready says the converter is down meanwhile and ready again after. Real service
// in-process (one LibreOffice instance), real Temporal dev server, real LibreOffice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { converterStatus, getDefaultConverter, LibreOfficePool, pdfPageCount } from '../../converter/index.ts';
import { makeDocx, para } from './convert/fixtures.ts';
import { type Receiver, startReceiver } from './async/receiver.ts';
import { client, generateBody } from '../support/http.ts';
import { instanceProcesses } from '../support/office-processes.ts';
import { type Stack, startStack } from '../support/stack.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LibreOffice killed as it restarts, while pdf generates wait for it', () => {
  let stack: Stack;
  let receiver: Receiver;
  let pool: LibreOfficePool;
  let api: ReturnType<typeof client>;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([
      startStack({ converterPoolSize: 1, converterSpareInstances: 0, outboundAllow: ['127.0.0.1'] }),
      startReceiver('127.0.0.1'),
    ]);
    const c = getDefaultConverter();
    if (!(c instanceof LibreOfficePool)) throw new Error(`expected the LibreOffice pool, got ${c.kind}`);
    pool = c;
    api = client(await stack.credentials());
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function body(i: number) {
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(para('Letter {n}')) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ n: i }) }]);
    return generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, {
      document: { fileFormat: 'pdf', name: `letter-${i}` },
    });
  }

  async function ready(): Promise<{ status: number; converter: { ready: boolean } }> {
    const res = await fetch(`${stack.service.baseUrl}/v1/ready`);
    const report = (await res.json()) as { checks: Record<string, { ready: boolean }> };
    return { status: res.status, converter: report.checks.converter! };
  }

  it('every async pdf generate calls back its document; /v1/ready reports the converter down meanwhile', async () => {
    const N = 6;
    const bodies = await Promise.all(Array.from({ length: N }, (_, i) => body(i)));
    const made = await api.call('POST', '/common/client/token', {
      json: { sub: 'cb', iss: `${receiver.url}/hooks`, dest: '/loop', client_id: 'tests' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const post = (json: unknown) =>
      api.call('POST', '/documents/document/generate/async', { json, headers: { 'x-client-authorization': made.body.result.data.token } });
    expect((await ready()).status).toBe(200);

    let failedStarts = 0;
    let sent = 0;
    const downReports: { status: number; converter: { ready: boolean } }[] = [];
    let enough = 0;
    const t0 = Date.now();
    while (enough === 0 || Date.now() < enough) {
      if (Date.now() - t0 > 90_000) throw new Error('the instance did not fail to start three times');
      for (const pid of instanceProcesses(pool.baseDir, 0, { bridge: true })) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      const st = converterStatus()!;
      failedStarts = Math.max(failedStarts, st.instances[0]!.failedStarts ?? 0);
      if (failedStarts >= 1 && !st.ready) {
        // The generates are sent while no instance is up; readiness is read meanwhile.
        if (sent < N) {
          const res = await post(bodies[sent++]);
          expect(res.status, JSON.stringify(res.body)).toBe(201);
        } else if (downReports.length < 3) downReports.push(await ready());
      }
      if (failedStarts >= 3 && sent === N && enough === 0) enough = Date.now() + 1_000;
      await sleep(20);
    }
    expect(failedStarts).toBeGreaterThanOrEqual(3);
    expect(downReports.length).toBeGreaterThan(0);
    for (const r of downReports) {
      expect(r.status).toBe(503);
      expect(r.converter.ready).toBe(false);
    }

    const deliveries = await receiver.waitFor('/hooks/loop', N, 150_000);
    const outcomes = deliveries.map(
      (d) =>
        JSON.parse(d.body) as {
          result?: { statusCode: number; data: { document: { urn: string; fileFormat: string } } };
          error?: { message: string };
        },
    );
    console.log(
      `[restart-loop] ${failedStarts} failed starts in a row; ${outcomes.filter((o) => o.result?.statusCode === 201).length} of ${N} generates called back their document`,
    );
    for (const o of outcomes) {
      expect(o.error, JSON.stringify(o.error)).toBeUndefined();
      expect(o.result).toMatchObject({ statusCode: 201, data: { document: { fileFormat: 'pdf' } } });
    }
    const file = await api.download(outcomes[0]!.result!.data.document.urn);
    expect(pdfPageCount(file.bytes)).toBe(1);
    const after = await ready();
    expect(after.status).toBe(200);
    expect(after.converter.ready).toBe(true);
  }, 300_000);
});

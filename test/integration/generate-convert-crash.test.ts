// Nothing is lost when LibreOffice dies mid-conversion: a synchronous docx -> pdf generate whose
// soffice is SIGKILLed while the convert step runs still answers 201 with the whole PDF, because
// the attempt fails with a retryable CONVERT_CRASHED, the pool replaces the instance and the step runs
// again (a sync generate converts in a local activity, retried by the worker under the same policy).
// Real service in-process, real Temporal dev server, real LibreOffice.
//
// The pool has one instance here (CONVERTER_POOL_SIZE=1), so the retry can only succeed on the
// replacement: the test proves the restart, not merely that a second instance was idle.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../api/auth/credentials.ts';
import { converterStatus, getDefaultConverter, LibreOfficePool, pdfPageCount } from '../../converter/index.ts';
import { makeDocx, pageBreak, para } from './convert/fixtures.ts';
import { client, generateBody } from '../support/http.ts';
import { instanceProcesses, killBusyInstance } from '../support/office-processes.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { generateWorkflowId } from '../../api/temporal.ts';

// A title page, then one page per loop iteration (a hard page break, a heading, ~1 500 characters of
// text), so the PDF has exactly PAGES + 1 pages. 600 pages take LibreOffice ~4.5 s on a 2-core
// machine (300: 1.4 s, 800: 6 s), far longer than the half second between "the conversion is
// running" and the kill, even when the machine is faster than that.
const PAGES = 600;
const LOREM =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ';
const TEMPLATE = makeDocx(para('Report for {name}') + para('{#pages}') + pageBreak + para('Page {n}') + para('{text}') + para('{/pages}'));
const DATA = { name: 'Ada', pages: Array.from({ length: PAGES }, (_, i) => ({ n: i + 1, text: LOREM.repeat(12) })) };

describe('a LibreOffice instance killed during the convert activity of a generate', () => {
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let connection: Connection;
  let temporal: Client;
  let pool: LibreOfficePool;

  beforeAll(async () => {
    // The service configures the default converter from its settings (startStack -> startConverter).
    stack = await startStack({ converterPoolSize: 1, converterSpareInstances: 0 });
    creds = await stack.credentials();
    api = client(creds);
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection, namespace: stack.config.temporalNamespace });
    // The worker's activities use the module-level converter of this process: the pool started by the stack.
    expect(converterStatus()?.kind, 'the stack started a LibreOffice pool').toBe('libreoffice');
    const c = getDefaultConverter();
    if (!(c instanceof LibreOfficePool)) throw new Error(`expected the LibreOffice pool, got ${c.kind}`);
    pool = c;
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  async function upload(name: string, template: Uint8Array, data: unknown) {
    const t = await api.upload('template', [{ name, bytes: template }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    return { t: t.body.result.data.files[0].id as string, d: d.body.result.data.files[0].id as string };
  }

  it('fails the attempt as retryable, restarts the instance, retries, and answers 201 with the whole PDF', async () => {
    const before = pool.status();
    expect(before.instances).toHaveLength(1);
    expect(before.instances[0]!.state).toBe('idle');
    const { t, d } = await upload('report.docx', TEMPLATE, DATA);
    const body = generateBody(t, d, { document: { fileFormat: 'pdf', name: 'report' } });

    const request = api.call('POST', '/documents/document/generate', { json: body });
    // The generate's run, and the pool's only instance busy with its conversion, half a second in.
    const { handle, pgid, victims } = await killBusyInstance({
      temporal,
      taskQueue: stack.config.taskQueue,
      workflowType: 'generateDocument',
      pool,
      request,
    });
    expect(victims.length, 'soffice processes of the busy instance').toBeGreaterThan(0);

    const res = await request;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(handle.workflowId).toBe(generateWorkflowId(creds.subscriptionId, res.body.operationId));

    // The whole document: a PDF with every page, metered as such.
    const file = await api.download(res.body.result.data.document.urn);
    expect(file.status).toBe(200);
    expect(Buffer.from(file.bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(pdfPageCount(file.bytes)).toBe(PAGES + 1);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: PAGES + 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);

    // The pool replaced the killed instance: a new process group, restarted once, and the killed
    // processes are gone.
    const after = pool.status().instances[0]!;
    expect(after.pid).not.toBe(pgid);
    expect(after.restarts).toBe(before.instances[0]!.restarts + 1);
    expect(instanceProcesses(pool.baseDir, 0, { pgid })).toEqual([]);
    expect(instanceProcesses(pool.baseDir, 0, { pgid: after.pid! }).length).toBeGreaterThan(0);

    // And it keeps converting.
    const small = await upload('small.docx', makeDocx(para('Hello {name}')), { name: 'again' });
    const again = await api.call('POST', '/documents/document/generate', {
      json: generateBody(small.t, small.d, { document: { fileFormat: 'pdf', name: 'again' } }),
    });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    const second = await api.download(again.body.result.data.document.urn);
    expect(Buffer.from(second.bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    expect(pdfPageCount(second.bytes)).toBe(1);
    expect(pool.status().instances[0]!.pid).toBe(after.pid);

    // The history shows it: one convert step, completed on its second attempt (a local activity's marker
    // records the attempt that completed), and the worker's metrics count the failed first attempt. Read
    // last on purpose: when the stack stops right after a download, the server can still be ending that
    // response, and Fastify's close then waits ~70 s for the keep-alive connection.
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const events = (await handle.fetchHistory()).events ?? [];
    const converts = events
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
      .map(
        (e) =>
          JSON.parse(new TextDecoder().decode(e.markerRecordedEventAttributes!.details!.data!.payloads![0]!.data!)) as {
            activity_type: string;
            attempt: number;
          },
      )
      .filter((m) => m.activity_type === 'convertDocument');
    expect(converts.map((m) => m.attempt)).toEqual([2]);
    expect(events.some((e) => e.activityTaskScheduledEventAttributes)).toBe(false);
  }, 180_000);
});

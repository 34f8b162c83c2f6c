// A synchronous generate (Storage template and data) whose workflow task is lost after it consumed its
// uploads: the worker is SIGKILLed while the S3 DELETE of the run's scratch file (the scratch discard, the
// task's last step, after the uploads were consumed) has been applied but not answered
// (test/support/s3-hold.ts). Every step of that task ran as a local activity, so the second worker runs
// them all again, the template and data resolution included: the caller must still get its 201, with one
// document record and the delivered bytes, and the uploads stay consumed for everyone else.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Crashable, startCrashable } from './support.ts';

describe('a worker killed after a generate consumed its uploads', () => {
  let c: Crashable;
  beforeAll(async () => {
    c = await startCrashable('generate-crash');
  });
  afterAll(async () => {
    await c?.close();
  });

  const body = (templateUrn: string, dataUrn: string) => ({
    template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
    data: { loadMethod: 'Storage', urn: dataUrn },
    document: { name: 'survivor', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    externalContext: { run: 'generate-crash' },
  });

  /** The 201 of a 1-page document and its metering, recorded once. */
  async function expectGenerated(res: Awaited<ReturnType<Crashable['sdk']['call']>>, document: Record<string, string>) {
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.data.document).toMatchObject({ deliveryMethod: 'Storage', ...document });
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    expect(
      await c.sql('SELECT dimension, value FROM consumption WHERE operation_id = $1 ORDER BY dimension', [res.body.operationId]),
    ).toEqual([
      { dimension: 'documents-generated', value: 1 },
      { dimension: 'pages-generated', value: 1 },
    ]);
  }

  it('answers 201 with one document record and the delivered bytes; the uploads stay consumed', async () => {
    const { sdk } = c;
    const { templateUrn, dataUrn } = await sdk.uploadPair(makeDocx(['Dear {name}']), { name: 'Ada' });
    const held = c.proxy.hold((r) => r.method === 'DELETE' && r.path.startsWith(`${c.keyPath}scratch/`), { when: 'answer', drop: true });
    const answer = sdk.call('POST', '/documents/document/generate', { json: body(templateUrn, dataUrn) });
    answer.catch(() => undefined); // the test may fail (and the processes stop) before it is awaited
    await held.arrived;
    // The kill lands after the uploads were consumed: their rows are already marked removed.
    const consumed = await c.sql<{ id: string; removed: boolean }>(
      'SELECT id::text, removed_date IS NOT NULL AS removed FROM stored_files WHERE id = ANY($1::uuid[]) ORDER BY id',
      [[templateUrn, dataUrn]],
    );
    expect(consumed, 'uploads consumed before the scratch discard').toEqual(
      [templateUrn, dataUrn].sort().map((id) => ({ id, removed: true })),
    );
    await c.crashAndReplace(held);

    const res = await answer;
    await expectGenerated(res, { name: 'survivor.docx', fileFormat: 'docx' });
    const doc = res.body.result.data.document;
    expect(res.body.externalContext).toEqual({ run: 'generate-crash' });
    const list = await sdk.call('GET', '/documents/document/list');
    expect(list.body.result.data.rowCount).toBe(1);
    expect(docxParagraphs((await sdk.download(doc.urn)).bytes)).toEqual(['Dear Ada']);

    // Consumed for everyone else: another generate naming them does not resolve them.
    const again = await sdk.call('POST', '/documents/document/generate', { json: body(templateUrn, dataUrn) });
    expect(again.status, JSON.stringify(again.body)).toBe(400);
    expect(again.body.error.innerErrors[0].code).toBe('TEMPLATE_NOT_FOUND');
    const fresh = await sdk.uploadPair();
    const dataAgain = await sdk.call('POST', '/documents/document/generate', { json: body(fresh.templateUrn, dataUrn) });
    expect(dataAgain.status, JSON.stringify(dataAgain.body)).toBe(400);
    expect(dataAgain.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
  }, 120_000);

  it('a sync pdf generate killed after its converted file was discarded answers 201', async () => {
    // A sync generate converts in a local activity: the second worker runs every step of the lost task
    // again, the conversion included, with the uploads it consumed.
    const { sdk } = c;
    const { templateUrn, dataUrn } = await sdk.uploadPair(makeDocx(['Dear {name}']), { name: 'Grace' });
    const held = c.proxy.hold((r) => r.method === 'DELETE' && r.path.startsWith(`${c.keyPath}scratch/`) && r.path.endsWith('/output.pdf'), {
      when: 'answer',
      drop: true,
    });
    const pdfBody = {
      ...body(templateUrn, dataUrn),
      document: { ...body(templateUrn, dataUrn).document, name: 'converted', fileFormat: 'pdf' },
    };
    const answer = sdk.call('POST', '/documents/document/generate', { json: pdfBody });
    answer.catch(() => undefined);
    await held.arrived;
    await c.crashAndReplace(held);

    const res = await answer;
    await expectGenerated(res, { name: 'converted.pdf', fileFormat: 'pdf' });
    const pdf = (await sdk.download(res.body.result.data.document.urn)).bytes;
    expect(Buffer.from(pdf).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  }, 120_000);

  it('an async pdf generate killed after its converted file was discarded calls back with what it recorded', async () => {
    // Async: the conversion is a normal activity on the office queue, so the steps after it (count,
    // deliver, record, consume, discard) are a workflow task of their own; the second worker runs that
    // task alone, the pdf it counts is gone, and the finish step answers with the record it made.
    const bodies: unknown[] = [];
    const receiver = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      req.on('end', () => {
        bodies.push(JSON.parse(raw));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const { sdk } = c;
      const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
      const token = await sdk.call('POST', '/common/client/token', { json: { sub: 'receiver-secret', iss: base, dest: '/done' } });
      expect(token.status, JSON.stringify(token.body)).toBe(200);
      const { templateUrn, dataUrn } = await sdk.uploadPair(makeDocx(['Dear {name}']), { name: 'Hopper' });
      const held = c.proxy.hold(
        (r) => r.method === 'DELETE' && r.path.startsWith(`${c.keyPath}scratch/`) && r.path.endsWith('/output.pdf'),
        { when: 'answer', drop: true },
      );
      const queued = await sdk.call('POST', '/documents/document/generate/async', {
        headers: { 'x-client-authorization': token.body.result.data.token },
        json: { ...body(templateUrn, dataUrn), document: { ...body(templateUrn, dataUrn).document, name: 'queued', fileFormat: 'pdf' } },
      });
      expect(queued.status, JSON.stringify(queued.body)).toBe(201);
      await held.arrived;
      await c.crashAndReplace(held);
      for (let i = 0; i < 600 && bodies.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      // One callback, the success body: the pdf, metered once.
      expect(bodies).toHaveLength(1);
      const called = bodies[0] as {
        result: { statusCode: number; data: { document: { urn: string; name: string; fileFormat: string } } };
        consumption: unknown;
        operationId: string;
      };
      expect(called, JSON.stringify(called)).toHaveProperty('result.statusCode', 201);
      expect(called.result.data.document).toMatchObject({ deliveryMethod: 'Storage', name: 'queued.pdf', fileFormat: 'pdf' });
      expect(called.consumption).toEqual([
        { dimension: 'pages-generated', value: 1 },
        { dimension: 'documents-generated', value: 1 },
      ]);
      expect(
        await c.sql('SELECT dimension, value FROM consumption WHERE operation_id = $1 ORDER BY dimension', [called.operationId]),
      ).toEqual([
        { dimension: 'documents-generated', value: 1 },
        { dimension: 'pages-generated', value: 1 },
      ]);
      const pdf = (await sdk.download(called.result.data.document.urn)).bytes;
      expect(Buffer.from(pdf).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  }, 120_000);
});

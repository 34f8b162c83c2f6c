// An async generate cancelled from the Temporal UI (here: the client's cancel, what the UI sends) while its
// conversion runs (issue 39, finding 8): the run waits for the conversion to stop, discards its scratch
// (the merged file and the output the conversion wrote or was writing), consumes its uploads, and calls
// the caller back with a CANCELLED error before it ends cancelled. Before, the scratch output stayed until
// the 24 h sweep and the caller never heard.
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { client, generateBody } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { numberedParagraphs } from '../../support/costly-office.ts';
import { makeDocx } from '../convert/fixtures.ts';
import { type Receiver, startReceiver } from './receiver.ts';

describe('an async generate cancelled while converting', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  let receiver: Receiver;
  let connection: Connection;
  let temporal: Client;

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([startStack({ outboundAllow: ['127.0.0.1'] }), startReceiver()]);
    api = client(await stack.credentials());
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection });
  });
  afterAll(async () => {
    await connection?.close();
    await receiver?.close();
    await stack?.stop();
  });

  it('discards its scratch, calls back CANCELLED, and ends cancelled', async () => {
    // Long enough (some 1 200 pages) that LibreOffice is still converting when the cancel comes.
    const template = makeDocx(`<w:p><w:r><w:t>Report for {name}</w:t></w:r></w:p>${numberedParagraphs(60_000)}`);
    const { templateUrn, dataUrn } = await api.uploadPair(template, { name: 'Ada' });
    const token = await api.call('POST', '/common/client/token', {
      json: { sub: 'cancel', iss: `${receiver.url}/hooks`, dest: '/cancelled', client_id: 'tests' },
    });
    expect(token.status).toBe(200);
    const res = await api.call('POST', '/documents/document/generate/async', {
      json: generateBody(templateUrn, dataUrn, { document: { name: 'long', fileFormat: 'pdf' } }),
      headers: { 'x-client-authorization': token.body.result.data.token },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const workflowId = `generate-async-${res.headers.get('x-operation-id')}`;
    const handle = temporal.workflow.getHandle(workflowId);
    // Cancel once the conversion has started on a worker.
    for (;;) {
      const d = await handle.describe();
      if (d.raw.pendingActivities?.some((a) => a.activityType?.name === 'convertDocument' && Number(a.state) === 2 /* STARTED */)) break;
      expect(d.status.name).toBe('RUNNING');
      await new Promise((r) => setTimeout(r, 100));
    }
    await handle.cancel();
    const [delivery] = await receiver.waitFor('/hooks/cancelled', 1, 120_000);
    const body = JSON.parse(delivery!.body);
    expect(body.error.statusCode).toBe(409);
    expect(body.error.innerErrors[0]).toMatchObject({
      code: 'CANCELLED',
      message: expect.stringMatching(/cancelled before it finished .*nothing was delivered/),
    });
    expect(body.result).toBeUndefined();
    const ended = await handle.result().then(
      () => 'completed',
      (e: unknown) => (e instanceof WorkflowFailedError ? e.cause?.name : String(e)),
    );
    expect(ended).toBe('CancelledFailure');
    // Nothing of the run is left in scratch: neither the merged docx nor the pdf output.
    expect(await stack.blobs.list(`scratch/${workflowId}/`)).toEqual([]);
  }, 240_000);
});

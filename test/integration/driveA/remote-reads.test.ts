// A template, related template or data file at a drive is read by a transfer of its own (a normal activity
// with a heartbeat timeout, workflows/generate.ts readRemote), before the local prepare step, which then
// uses what was read: a large file on a slow link is bounded by a transfer's limits, not the 60 s of a local
// step, and a worker that dies mid-download is noticed by its heartbeat. Read from the fake Microsoft Graph
// (test/fakes/graph): the history shows each read as a scheduled activity, the document is right, a read
// that fails still names its field, and a workflow task lost after its record (which discarded what the
// transfers read) answers with that record.
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { generateWorkflowId } from '../../../api/temporal.ts';
import { type GraphFake, startGraphFake } from '../../fakes/graph/server.ts';
import { client, generateBody } from '../../support/http.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { connect, DRIVE_A } from './support.ts';

const { EventType } = temporal.api.enums.v1;
const TEMPLATE = { urn: 'root:/Templates/letter.docx:', loadMethod: 'DriveA', fileFormat: 'docx' };
const DOCUMENT = { name: 'read', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' };

describe('reads from a drive are transfers', () => {
  let fake: GraphFake;
  let stack: Stack;
  let creds: Credentials;
  let api: ReturnType<typeof client>;
  let connection: Connection;

  beforeAll(async () => {
    fake = await startGraphFake();
    fake.addDrive(DRIVE_A);
    stack = await startStack({ driveAGraphUrl: fake.graphUrl, driveALoginUrl: fake.loginUrl });
    creds = await stack.credentials();
    api = client(creds);
    await connect(api, fake);
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    await fake?.close();
  });

  const handle = (operationId: string) =>
    new Client({ connection }).workflow.getHandle(generateWorkflowId(creds.subscriptionId, operationId));
  /** The activities the run scheduled (normal activities, not local steps), with their heartbeat timeouts. */
  async function scheduled(operationId: string) {
    const history = await handle(operationId).fetchHistory();
    return (history.events ?? [])
      .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((e) => ({
        type: e.activityTaskScheduledEventAttributes?.activityType?.name,
        heartbeat: Number(e.activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds ?? 0),
      }));
  }

  it('the template, a related template and the data at DriveA: three transfers, then the merge', async () => {
    fake.put(DRIVE_A, 'Templates/letter.docx', Buffer.from(makeDocx(['Dear {name},', '{>footer}'])));
    fake.put(DRIVE_A, 'Templates/footer.docx', Buffer.from(makeDocx(['Regards, {company}'])));
    fake.put(DRIVE_A, 'Data/ada.json', Buffer.from(JSON.stringify({ name: 'Ada', company: 'Analytical Engines' })));
    const res = await api.call('POST', '/documents/document/generate', {
      json: {
        template: {
          ...TEMPLATE,
          relatedItems: [{ name: 'footer', urn: 'root:/Templates/footer.docx:', loadMethod: 'DriveA', fileFormat: 'docx' }],
        },
        data: { loadMethod: 'DriveA', urn: 'root:/Data/ada.json:' },
        document: DOCUMENT,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(docxParagraphs((await api.download(res.body.result.data.document.urn)).bytes)).toEqual([
      'Dear Ada,',
      'Regards, Analytical Engines',
    ]);
    expect(await scheduled(res.body.operationId)).toEqual([
      { type: 'resolveTemplate', heartbeat: 20 },
      { type: 'resolveTemplate', heartbeat: 20 },
      { type: 'loadData', heartbeat: 20 },
    ]);
    // What was downloaded left with the run.
    expect(await stack.blobs.list('scratch/')).toEqual([]);
  });

  it('an uploaded template with data at DriveA: only the data is a transfer; a missing data file is DATA_NOT_FOUND', async () => {
    fake.put(DRIVE_A, 'Data/grace.json', Buffer.from(JSON.stringify({ name: 'Grace' })));
    const { templateUrn, dataUrn } = await api.uploadPair(makeDocx(['Dear {name}']));
    const body = generateBody(templateUrn, dataUrn);
    const res = await api.call('POST', '/documents/document/generate', {
      json: { ...body, data: { loadMethod: 'DriveA', urn: 'root:/Data/grace.json:' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(docxParagraphs((await api.download(res.body.result.data.document.urn)).bytes)).toEqual(['Dear Grace']);
    expect(await scheduled(res.body.operationId)).toEqual([{ type: 'loadData', heartbeat: 20 }]);

    const again = await api.uploadPair(makeDocx(['Dear {name}']));
    const missing = await api.call('POST', '/documents/document/generate', {
      json: { ...generateBody(again.templateUrn, again.dataUrn), data: { loadMethod: 'DriveA', urn: 'root:/Data/nobody.json:' } },
    });
    expect(missing.status, JSON.stringify(missing.body)).toBe(400);
    expect(missing.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
    // The run ended as runs do: its uploaded template consumed.
    const row = await stack.service.db.query('SELECT 1 FROM stored_files WHERE id = $1 AND removed_date IS NOT NULL', [again.templateUrn]);
    expect(row.rows).toHaveLength(1);
  });

  it('a workflow task lost after its record, which discarded what the transfers read, answers with that record', async () => {
    fake.put(DRIVE_A, 'Templates/letter.docx', Buffer.from(makeDocx(['Dear {name}'])));
    fake.put(DRIVE_A, 'Data/lin.json', Buffer.from(JSON.stringify({ name: 'Lin' })));
    const res = await api.call('POST', '/documents/document/generate', {
      json: { template: TEMPLATE, data: { loadMethod: 'DriveA', urn: 'root:/Data/lin.json:' }, document: { ...DOCUMENT, name: 'lost' } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const first = await handle(res.body.operationId).result();
    // The task that ran the local steps (prepare, write, record, discard) is lost: the run is reset to its
    // start, as a worker that died before completing it would leave it, and the next execution runs it again
    // on the same history (the transfers' results), whose downloads are gone.
    const history = await handle(res.body.operationId).fetchHistory();
    // (A reset to a task's completion discards everything from the task's start and runs it again.)
    const lastTask = (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).at(-1)!;
    const { runId } = await connection.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: generateWorkflowId(creds.subscriptionId, res.body.operationId) },
      workflowTaskFinishEventId: lastTask.eventId,
      requestId: randomUUID(),
      reason: 'test: a lost workflow task',
    });
    const again = await new Client({ connection }).workflow
      .getHandle(generateWorkflowId(creds.subscriptionId, res.body.operationId), runId ?? undefined)
      .result();
    expect(again).toEqual(first);
    const docs = await stack.service.db.query('SELECT urn FROM documents WHERE subscription_guid = $1 AND title = $2', [
      creds.subscriptionId,
      first.document.name,
    ]);
    expect(docs.rows).toEqual([{ urn: first.document.urn }]);
    expect(docxParagraphs((await api.download(first.document.urn)).bytes)).toEqual(['Dear Lin']);
  });
});

// Workflow code changes must replay the histories of runs already in flight (or go behind `patched()`).
// The fixture holds two generateDocument histories (docx and pdf output) recorded before conversions
// moved to the office task queue; the current code must replay them without a nondeterminism error, and
// replay a run of its own. Record a new fixture whenever a workflow's shape changes.
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { workflowBundle } from '../../worker/index.ts';
import { client, generateBody } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { type Stack, startStack } from '../support/stack.ts';

const fixture = path.join(import.meta.dirname, '..', 'fixtures', 'histories', 'generate-local-measure.json');
// manageDocument runs recorded before its recovery of a lost workflow task (patch 'manage-recorded-outcome'):
// a Storage move, a move whose source does not resolve (the failure the patch now looks behind), a convert.
const manageFixture = path.join(import.meta.dirname, '..', 'fixtures', 'histories', 'manage-before-recorded-outcome.json');
// A generateDocumentAsync run recorded while callback attempts were normal activities (before the patch
// 'local-callback-attempts'): a 503, a 503, then a 200, with the two waits between them.
const asyncFixture = path.join(import.meta.dirname, '..', 'fixtures', 'histories', 'generate-async-activity-callbacks.json');

function eventTypes(history: temporal.api.history.v1.IHistory): (temporal.api.enums.v1.EventType | null | undefined)[] {
  return (history.events ?? []).map((e) => e.eventType);
}

describe('workflow replay', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('replays runs recorded by earlier code (docx and pdf output)', async () => {
    const recorded = JSON.parse(fs.readFileSync(fixture, 'utf8')) as Record<string, object>;
    expect(Object.keys(recorded).sort()).toEqual(['docx', 'pdf']);
    for (const [format, raw] of Object.entries(recorded)) {
      const history = temporal.api.history.v1.History.fromObject(raw);
      // The pdf run converted in a normal activity, on the main task queue then.
      if (format === 'pdf') expect(eventTypes(history)).toContain(temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `replay-${format}`)).resolves.toBeUndefined();
    }
  });

  it('replays manage runs recorded by earlier code (move, a move whose source does not resolve, convert)', async () => {
    const recorded = JSON.parse(fs.readFileSync(manageFixture, 'utf8')) as Record<string, object>;
    expect(Object.keys(recorded).sort()).toEqual(['convert-removing-source', 'move', 'move-missing-source']);
    for (const [name, raw] of Object.entries(recorded)) {
      const history = temporal.api.history.v1.History.fromObject(raw);
      const closed = name === 'move-missing-source' ? 'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED' : 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED';
      expect(eventTypes(history)).toContain(temporal.api.enums.v1.EventType[closed]);
      await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `replay-manage-${name}`)).resolves.toBeUndefined();
    }
  });

  it('replays an async run whose callback attempts were activities (three attempts, two waits)', async () => {
    const recorded = JSON.parse(fs.readFileSync(asyncFixture, 'utf8')) as Record<string, object>;
    expect(Object.keys(recorded)).toEqual(['docx-callback-retried']);
    const history = temporal.api.history.v1.History.fromObject(recorded['docx-callback-retried']!);
    const attempts = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callbackAttempt');
    expect(attempts).toHaveLength(3);
    expect(eventTypes(history).filter((t) => t === temporal.api.enums.v1.EventType.EVENT_TYPE_TIMER_FIRED)).toHaveLength(2);
    await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'replay-async-activity-callbacks')).resolves.toBeUndefined();
  });

  it('replays a run of the current code', async () => {
    const api = client(await stack.credentials());
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {name}']) }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify({ name: 'World' }) }]);
    const gen = await api.call('POST', '/documents/document/generate', { json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id) });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const history = await new Client({ connection }).workflow.getHandle(`generate-${gen.body.operationId}`).fetchHistory();
      await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, 'replay-current')).resolves.toBeUndefined();
    } finally {
      await connection.close();
    }
  });
});

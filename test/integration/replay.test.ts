// Workflow code changes must replay the histories of runs already in flight. The fixture holds two
// generateDocument histories (docx and pdf output) recorded before page counting moved to a normal
// activity for docx/xlsx (workflows/steps.ts measurePages, patch 'measure-rendition-as-activity'); the
// current code must replay them without a nondeterminism error, and replay a run of its own.
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

function eventTypes(history: temporal.api.history.v1.IHistory): string[] {
  return (history.events ?? []).map((e) => String(e.eventType));
}

describe('workflow replay', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('replays runs recorded before the measure patch (docx and pdf output)', async () => {
    const recorded = JSON.parse(fs.readFileSync(fixture, 'utf8')) as Record<string, object>;
    expect(Object.keys(recorded).sort()).toEqual(['docx', 'pdf']);
    for (const [format, raw] of Object.entries(recorded)) {
      const history = temporal.api.history.v1.History.fromObject(raw);
      // The docx run counted its pages in a local activity: no activity task in its history.
      if (format === 'docx') expect(eventTypes(history)).not.toContain('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED');
      await expect(Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, `replay-${format}`)).resolves.toBeUndefined();
    }
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

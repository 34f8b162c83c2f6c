// Each failed batch row is a line of the worker's log with its row number and code (issue 41), read back
// from what its chunk recorded (worker/batch-log.ts); the rows that were done are not logged.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../telemetry/log.ts';
import { client } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { waitForBatch } from './support.ts';

describe('failed batch rows in the log', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  const lines: Record<string, any>[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, any>);
        done();
      },
    });
    stack = await startStack(
      { batchChunkRows: 2, batchWindow: 2 },
      { log: createLogger({ level: 'info', name: 'docgen', destination: sink }) },
    );
    api = client(await stack.credentials());
  });
  afterAll(async () => stack?.stop());

  it('logs each failed row with its batch, row and code', async () => {
    const upload = async (kind: 'template' | 'data', name: string, bytes: Uint8Array | string) =>
      (await api.upload(kind, [{ name, bytes }])).body.result.data.files[0].id as string;
    const template = await upload('template', 't.docx', makeDocx(['Letter {n}']));
    // Rows 5 and 6 name their document with a slash: they fail (the first rows are checked at admission).
    const data = await upload('data', 'rows.csv', `n\r\n${['A-1', 'A-2', 'A-3', 'A-4', 'A/5', 'A/6', 'A-7'].join('\r\n')}\r\n`);
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: template, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { urn: data, loadMethod: 'Storage' },
        document: { name: 'Letter {n}', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-GB' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.result.data.batch.id as string;
    expect(await waitForBatch(api, id)).toMatchObject({ status: 'completed', rowsDone: 5, rowsFailed: 2 });
    const failed = lines.filter((l) => l.msg === 'batch row failed' && l.batchId === id);
    expect(failed.map((l) => [l.row, l.code, l.component])).toEqual([
      [5, 'VALIDATION_ERROR', 'batch'],
      [6, 'VALIDATION_ERROR', 'batch'],
    ]);
    expect(failed[0]!.reason).toContain('A/5');
    expect(failed[0]!.level).toBe('info');
  });
});

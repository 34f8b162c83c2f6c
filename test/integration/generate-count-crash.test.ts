// A docx generate's page count runs beside its write to Storage (activities/groups.ts writeAndRecord): a
// count that fails must leave nothing written. Here LibreOffice is SIGKILLed while it counts the pages of
// a long letter (PAGE_COUNT=exact: a failed count fails the attempt): the write that already happened is
// undone, the step runs again on the restarted instance, and the generate answers 201 with exactly one
// file, one record and one metering. Real service in-process, real Temporal dev server, real LibreOffice.
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { getDefaultConverter, LibreOfficePool } from '../../converter/index.ts';
import { registry } from '../../telemetry/metrics.ts';
import { docxParagraphs } from '../support/office.ts';
import { localActivities } from '../support/history.ts';
import { client, generateBody } from '../support/http.ts';
import { killBusyInstance } from '../support/office-processes.ts';
import { type Stack, startStack } from '../support/stack.ts';
import { makeDocx, pageBreak, para } from './convert/fixtures.ts';

// A title page, then one page per item: seconds of layout for LibreOffice, longer than the half second
// between "the count is running" and the kill (generate-convert-crash.test.ts measures it). 600 pages were
// not enough: a warm sandboxed instance counted them within that half second when the machine was idle
// enough, and the kill then missed. Within TEMPLATE_MAX_PAGES (2000).
const PAGES = 1200;
const LOREM =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ';
const TEMPLATE = makeDocx(para('Report for {name}') + para('{#pages}') + pageBreak + para('Page {n}') + para('{text}') + para('{/pages}'));
const DATA = { name: 'Ada', pages: Array.from({ length: PAGES }, (_, i) => ({ n: i + 1, text: LOREM.repeat(12) })) };

/** How many times a step ran to completion in this process (docgen_activity_duration_seconds, outcome ok). */
async function stepRuns(activity: string): Promise<number> {
  const text = await registry.getSingleMetricAsString('docgen_activity_duration_seconds');
  const m = new RegExp(`^docgen_activity_duration_seconds_count\\{activity="${activity}",outcome="ok"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('a LibreOffice instance killed while it counts the pages a write to Storage is metered by', () => {
  let stack: Stack;
  let connection: Connection;
  let temporal: Client;
  let pool: LibreOfficePool;

  beforeAll(async () => {
    stack = await startStack({ converterPoolSize: 1, converterSpareInstances: 0, pageCount: 'exact' });
    connection = await Connection.connect({ address: inject('temporalAddress') });
    temporal = new Client({ connection, namespace: stack.config.temporalNamespace });
    const c = getDefaultConverter();
    if (!(c instanceof LibreOfficePool)) throw new Error(`expected the LibreOffice pool, got ${c.kind}`);
    pool = c;
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
  });

  it('undoes the write made beside the failed count, runs the step again, and leaves one file, one record, one metering', async () => {
    const creds = await stack.credentials();
    const api = client(creds);
    const t = await api.upload('template', [{ name: 'report.docx', bytes: TEMPLATE }]);
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(DATA) }]);
    const undone = await stepRuns('undoWrite');
    const request = api.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { name: 'report' } }),
    });
    // The only instance busy: the page count (a docx generate converts nothing).
    const { handle } = await killBusyInstance({
      temporal,
      taskQueue: stack.config.taskQueue,
      workflowType: 'generateDocument',
      pool,
      request,
    });

    const res = await request;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body.result.data.document;
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-generated', value: PAGES + 1 },
      { dimension: 'documents-generated', value: 1 },
    ]);
    const file = await api.download(doc.urn);
    expect(file.status).toBe(200);
    expect(docxParagraphs(file.bytes)[0]).toBe('Report for Ada');

    // The first attempt wrote the file beside the count and undid it when the count failed; the second
    // wrote it again. One file, one record, metered once.
    expect(await stepRuns('undoWrite')).toBe(undone + 1);
    const db = stack.service.db;
    expect(
      (await db.query("SELECT id, removed_date FROM stored_files WHERE subscription_id = $1 AND kind = 'document'", [creds.subscriptionId]))
        .rows,
    ).toEqual([{ id: doc.urn, removed_date: null }]);
    expect((await db.query('SELECT urn FROM documents WHERE subscription_guid = $1', [creds.subscriptionId])).rows).toEqual([
      { urn: doc.urn },
    ]);
    expect(
      (await db.query('SELECT dimension FROM consumption WHERE operation_id = $1 ORDER BY dimension', [res.body.operationId])).rows,
    ).toEqual([{ dimension: 'documents-generated' }, { dimension: 'pages-generated' }]);
    const steps = localActivities((await handle.fetchHistory()).events);
    expect(steps.map((s) => s.type)).toEqual(['prepareGeneration', 'writeAndRecord']);
  }, 180_000);
});

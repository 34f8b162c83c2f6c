// Manage operations on Storage whose workflow task is lost after the point of no return: the worker is
// SIGKILLed while an S3 DELETE has been applied but not answered (test/support/s3-hold.ts), and a second
// worker runs the lost task again. It must end as the first execution did (spec 4.8 manage: 201 with the
// document; one record; metering once; the source gone; the written bytes intact).
//  - move: resolve, measure, write, record and remove all run as local activities in ONE task; the held
//    DELETE erases the source's bytes (permanentDelete), so the second execution cannot resolve the source.
//  - convert that removes its source: resolve, the conversion, measure, write, record, remove and the
//    scratch discard all run in ONE task too (the conversion is a local activity for a waiting caller); the
//    held DELETE erases the converted file's scratch copy, the source is removed, so the second execution
//    cannot resolve the source and answers with what the first recorded.
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pdfPageCount } from '../../../converter/index.ts';
import { docxParagraphs } from '../../support/office.ts';
import { s3Client } from '../../support/s3.ts';
import { type Crashable, startCrashable } from './support.ts';

describe('a worker killed after a Storage manage operation passed its point of no return', () => {
  let c: Crashable;
  beforeAll(async () => {
    c = await startCrashable('manage-crash');
  });
  afterAll(async () => {
    await c?.close();
  });

  /** A docx delivered to Storage by a generate, and its blob key. */
  async function generated() {
    const { templateUrn, dataUrn } = await c.sdk.uploadPair();
    const gen = await c.sdk.call('POST', '/documents/document/generate', {
      json: {
        template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
        data: { loadMethod: 'Storage', urn: dataUrn },
        document: { name: 'letter', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
      },
    });
    expect(gen.status, JSON.stringify(gen.body)).toBe(201);
    const doc = gen.body.result.data.document as { urn: string; documentGuid: string };
    const [row] = await c.sql<{ blob_key: string }>('SELECT blob_key FROM stored_files WHERE id = $1', [doc.urn]);
    return { ...doc, key: row!.blob_key };
  }
  const manage = (json: unknown) => c.sdk.call('POST', '/documents/document/manage', { json });
  const metering = (operationId: string) =>
    c.sql('SELECT dimension, value FROM consumption WHERE operation_id = $1 ORDER BY dimension', [operationId]);
  async function s3Exists(key: string) {
    const s3 = s3Client(inject('s3Endpoint'));
    const [bucket, ...prefix] = c.keyPath.split('/').filter(Boolean);
    try {
      await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: [...prefix, key].join('/') }));
      return true;
    } catch (err) {
      if ((err as { name?: string }).name === 'NotFound') return false;
      throw err;
    } finally {
      s3.destroy();
    }
  }

  it('move (permanentDelete): 201 with the moved document, its one record at the new urn, metered once, the source gone', async () => {
    const source = await generated();
    // S3 erases the source's bytes; the worker never hears back.
    const held = c.proxy.hold((r) => r.method === 'DELETE' && r.path === `${c.keyPath}${source.key}`, { when: 'answer', drop: true });
    const answer = manage({
      sourceDocument: { urn: source.urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'permanentDelete' },
      targetDocument: { name: 'moved', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root/moved' },
      externalContext: { run: 'move-crash' },
    });
    answer.catch(() => undefined); // the test may fail (and the processes stop) before it is awaited
    await held.arrived;
    // Past the point of no return: the source no longer resolves.
    expect((await c.sdk.download(source.urn)).status).toBe(404);
    await c.crashAndReplace(held);

    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.result.statusCode).toBe('201');
    const moved = res.body.result.data.document;
    expect(moved).toMatchObject({ deliveryMethod: 'Storage', name: 'moved.docx', fileFormat: 'docx', documentGuid: source.documentGuid });
    expect(moved.urn).not.toBe(source.urn);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-managed', value: 1 },
      { dimension: 'documents-managed', value: 1 },
    ]);
    expect(res.body.externalContext).toEqual({ run: 'move-crash' });

    // One record, the source's, now at the new urn; the move metered once.
    expect(
      await c.sql('SELECT document_guid, urn, title, path, is_deleted FROM documents WHERE document_guid = $1 OR urn IN ($2, $3)', [
        source.documentGuid,
        source.urn,
        moved.urn,
      ]),
    ).toEqual([{ document_guid: source.documentGuid, urn: moved.urn, title: 'moved.docx', path: 'root/moved', is_deleted: false }]);
    expect(await metering(res.body.operationId)).toEqual([
      { dimension: 'documents-managed', value: 1 },
      { dimension: 'pages-managed', value: 1 },
    ]);
    // The target's bytes are whole; the source neither resolves nor has bytes left.
    expect(docxParagraphs((await c.sdk.download(moved.urn)).bytes)).toEqual(['Hello World']);
    expect((await c.sdk.download(source.urn)).status).toBe(404);
    expect(await s3Exists(source.key)).toBe(false);
  }, 120_000);

  it('convert docx -> pdf removing its source: 201 with the pdf, a new record, the source record deleted, metered once', async () => {
    const source = await generated();
    // The scratch discard (the task's last step) erases the converted file's scratch copy.
    const held = c.proxy.hold((r) => r.method === 'DELETE' && r.path.includes('/scratch/') && r.path.endsWith('/output.pdf'), {
      when: 'answer',
      drop: true,
    });
    const answer = manage({
      sourceDocument: { urn: source.urn, fileFormat: 'docx', loadMethod: 'Storage', remove: 'delete' },
      targetDocument: { name: 'converted', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root/pdf' },
    });
    answer.catch(() => undefined); // the test may fail (and the processes stop) before it is awaited
    const scratch = await held.arrived;
    expect((await c.sdk.download(source.urn)).status).toBe(404);
    await c.crashAndReplace(held);

    const res = await answer;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pdf = res.body.result.data.document;
    expect(pdf).toMatchObject({ deliveryMethod: 'Storage', name: 'converted.pdf', fileFormat: 'pdf' });
    expect(pdf.documentGuid).not.toBe(source.documentGuid);
    expect(res.body.consumption).toEqual([
      { dimension: 'pages-managed', value: 1 },
      { dimension: 'documents-managed', value: 1 },
    ]);
    expect(
      await c.sql('SELECT document_guid, urn, title, is_deleted FROM documents WHERE document_guid IN ($1, $2) ORDER BY is_deleted', [
        source.documentGuid,
        pdf.documentGuid,
      ]),
    ).toEqual([
      { document_guid: pdf.documentGuid, urn: pdf.urn, title: 'converted.pdf', is_deleted: false },
      { document_guid: source.documentGuid, urn: source.urn, title: 'letter.docx', is_deleted: true },
    ]);
    expect(await metering(res.body.operationId)).toEqual([
      { dimension: 'documents-managed', value: 1 },
      { dimension: 'pages-managed', value: 1 },
    ]);
    const bytes = (await c.sdk.download(pdf.urn)).bytes;
    expect(Buffer.from(bytes.subarray(0, 5)).toString()).toBe('%PDF-');
    expect(pdfPageCount(bytes)).toBe(1);
    // A soft delete keeps the source's bytes; the scratch copy is gone.
    expect((await c.sdk.download(source.urn)).status).toBe(404);
    expect(await s3Exists(source.key)).toBe(true);
    expect(await s3Exists(scratch.path.slice(c.keyPath.length))).toBe(false);
  }, 120_000);
});

// POST /documents/template/upload (spec 4.4) and POST /documents/data/upload (extension, same shape).
// Files stream straight into the blob store with the size limit enforced while streaming; a request
// either stores all its files or none. The schemas and their prose are in api/schemas/files.ts.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError, innerError } from '../../core/errors.ts';
import { BlobTooLargeError, type BlobStore } from '../../connectors/storage/blob-store.ts';
import type { Db } from '../../store/db.ts';
import { checkPackageLimits, TemplateError, templateKind, type TemplateLimits } from '../../engine/index.ts';
import { OFFICE_KIND_NAMES } from '../../core/formats.ts';
import { type FileKind, insertFile } from '../../store/files.ts';
import { RowReader, RowsError } from '../../core/rows.ts';
import { success } from '../envelope.ts';
import { uploadData, uploadTemplates } from '../schemas/files.ts';

const TEMPLATE_EXTENSIONS: Record<string, string> = {
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  // Extension: an e-invoice's XML template (document.einvoice.template, docs/einvoice.md).
  '.xml': 'application/xml',
};
// JSON for a generate; JSON Lines and CSV are rows for a batch (POST /documents/document/generate/batch).
const DATA_EXTENSIONS: Record<string, string> = {
  '.json': 'application/json',
  '.jsonl': 'application/jsonl',
  '.ndjson': 'application/jsonl',
  '.csv': 'text/csv',
};

export interface UploadRouteOptions {
  db: Db;
  blobs: BlobStore;
  maxBytes: number;
  retentionSeconds: number;
  /** Template package limits checked at upload (what the central directory tells, nothing inflated). */
  templateLimits?: TemplateLimits;
}

const uploadRoutes: FastifyPluginAsyncTypebox<UploadRouteOptions> = async (app, opts) => {
  const upload = (kind: Exclude<FileKind, 'document'>) => async (request: FastifyRequest) =>
    success(request, 201, { files: await receiveFiles(request, kind, opts) });
  app.post('/documents/template/upload', { schema: uploadTemplates(opts.maxBytes) }, async (request, reply) =>
    reply.code(201).send(await upload('template')(request)),
  );
  app.post('/documents/data/upload', { schema: uploadData }, async (request, reply) => reply.code(201).send(await upload('data')(request)));
};

export default uploadRoutes;

async function receiveFiles(request: FastifyRequest, kind: 'template' | 'data', opts: UploadRouteOptions) {
  if (!request.isMultipart()) {
    throw new ApiError('VALIDATION_ERROR', 'body must be multipart/form-data carrying one or more files');
  }
  const allowed = kind === 'template' ? TEMPLATE_EXTENSIONS : DATA_EXTENSIONS;
  const { subscriptionId, userId } = request.auth;
  const stored: { id: string; fileName: string; key: string; size: number; sha256: string; contentType: string }[] = [];
  let failure: unknown;
  try {
    for await (const part of request.parts({ limits: { fileSize: opts.maxBytes, files: 50, fields: 50, fieldSize: 64 * 1024 } })) {
      if (part.type !== 'file') continue;
      // After the first problem, read and discard the rest so the client receives our answer.
      if (failure) {
        part.file.resume();
        continue;
      }
      const fileName = part.filename;
      const contentType = allowed[path.extname(fileName).toLowerCase()];
      if (!contentType) {
        part.file.resume();
        failure =
          kind === 'template'
            ? new ApiError(
                'INVALID_TEMPLATE_FORMAT',
                `file ${JSON.stringify(fileName)} (field ${part.fieldname}): only .docx, .xlsx and .pptx files (and .xml e-invoice templates) are accepted`,
              )
            : new ApiError(
                'VALIDATION_ERROR',
                `file ${JSON.stringify(fileName)} (field ${part.fieldname}): only .json files (and, for batches, .jsonl and .csv files) are accepted`,
              );
        continue;
      }
      const id = randomUUID();
      const key = `subscriptions/${subscriptionId}/uploads/${id}`;
      try {
        const put = await opts.blobs.putStream(key, part.file, { maxBytes: opts.maxBytes });
        stored.push({ id, fileName, key, size: put.size, sha256: put.sha256, contentType });
      } catch (err) {
        failure = isTooLarge(err)
          ? new ApiError(
              'FILE_TOO_LARGE',
              `file ${JSON.stringify(fileName)} (field ${part.fieldname}) exceeds the limit of ${opts.maxBytes} bytes`,
            )
          : isStorageError(err)
            ? err
            : malformed(err);
      }
    }
  } catch (err) {
    // Errors while iterating parts come from the multipart parser: the body is malformed.
    failure ??= isTooLarge(err) ? new ApiError('FILE_TOO_LARGE', `a file exceeds the limit of ${opts.maxBytes} bytes`) : malformed(err);
  }
  if (!failure && stored.length === 0) {
    failure = new ApiError('VALIDATION_ERROR', 'no file in the request: send one or more files as multipart/form-data');
  }
  if (!failure && kind === 'data') {
    for (const f of stored) {
      try {
        if (f.contentType === 'application/json') JSON.parse(Buffer.from(await opts.blobs.get(f.key)).toString('utf8'));
        else await checkRows(opts.blobs, f.key, f.contentType === 'text/csv' ? 'csv' : 'jsonl', `file ${JSON.stringify(f.fileName)}`);
      } catch (err) {
        failure = new ApiError(
          'VALIDATION_ERROR',
          err instanceof RowsError ? err.message : `file ${JSON.stringify(f.fileName)} is not valid JSON: ${(err as Error).message}`,
        );
        break;
      }
    }
  }
  if (!failure && kind === 'template') {
    for (const f of stored) {
      const bytes = await opts.blobs.get(f.key);
      failure =
        f.contentType === 'application/xml'
          ? xmlTemplateProblem(f.fileName, bytes)
          : templatePackageProblem(f.fileName, bytes, opts.templateLimits);
      if (failure) break;
    }
  }
  if (!failure) {
    try {
      const expiresDate = new Date(Date.now() + opts.retentionSeconds * 1000);
      await opts.db.transaction(async (tx) => {
        for (const f of stored) {
          await insertFile(tx, {
            id: f.id,
            subscriptionId,
            ownerId: userId,
            kind,
            fileName: f.fileName,
            path: '',
            contentType: f.contentType,
            size: f.size,
            sha256: f.sha256,
            blobKey: f.key,
            expiresDate,
          });
        }
      });
    } catch (err) {
      request.log.error({ err }, 'storing upload records failed');
      failure = new ApiError('FILE_UPLOAD_FAILED', undefined, [innerError('FILE_UPLOAD_FAILED')]);
    }
  }
  if (failure) {
    await Promise.all(stored.map((f) => opts.blobs.delete(f.key)));
    throw failure;
  }
  return stored.map((f) => ({ id: f.id, fileName: f.fileName }));
}

/** An e-invoice's XML template (.xml): UTF-8 text of an XML document, without a DOCTYPE (its tags are checked
 *  when a generate renders it: they may sit where a parser would not accept them yet). */
function xmlTemplateProblem(fileName: string, bytes: Uint8Array): ApiError | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new ApiError('INVALID_TEMPLATE_FORMAT', `file ${JSON.stringify(fileName)} is not an XML template: it is not UTF-8 text`);
  }
  if (
    !text
      .replace(/^\uFEFF/, '')
      .trimStart()
      .startsWith('<')
  )
    return new ApiError('INVALID_TEMPLATE_FORMAT', `file ${JSON.stringify(fileName)} is not an XML template: it does not start with '<'`);
  if (/<!DOCTYPE/i.test(text))
    return new ApiError('INVALID_TEMPLATE_FORMAT', `file ${JSON.stringify(fileName)}: XML with a DOCTYPE declaration is refused`);
  return undefined;
}

/** What the zip directory of a template file tells without inflating it: the package limits, and whether its
 *  own kind is what its name says (a Word document named .xlsx would be merged and delivered as a workbook
 *  that no application opens). Upload and inspect ask the same. */
export function templatePackageProblem(fileName: string, bytes: Uint8Array, limits: TemplateLimits | undefined): ApiError | undefined {
  const problem = checkPackageLimits(bytes, limits);
  if (problem) return new ApiError('TEMPLATE_TOO_COMPLEX', `file ${JSON.stringify(fileName)}: ${problem.message}`);
  const declared = path.extname(fileName).slice(1).toLowerCase();
  const actual = templateKind(bytes, limits);
  // A text file or another zip named .docx would be stored, then refused by every merge: refuse it now.
  if (actual instanceof TemplateError)
    return new ApiError('INVALID_TEMPLATE_FORMAT', `file ${JSON.stringify(fileName)} is not a .${declared} template: ${actual.message}`);
  if (actual !== declared) {
    return new ApiError(
      'INVALID_TEMPLATE_FORMAT',
      `file ${JSON.stringify(fileName)} is ${OFFICE_KIND_NAMES[actual]}, not .${declared}: upload it as .${actual}`,
    );
  }
  return undefined;
}

/** File-system failures (disk full, permissions) are ours: they stay 500 FILE_UPLOAD_FAILED. */
function isStorageError(err: unknown): boolean {
  return typeof (err as { syscall?: unknown } | null)?.syscall === 'string';
}

function malformed(err: unknown): ApiError {
  return new ApiError(
    'VALIDATION_ERROR',
    `body: the multipart/form-data body is malformed (${err instanceof Error ? err.message : String(err)})`,
  );
}

function isTooLarge(err: unknown): boolean {
  return err instanceof BlobTooLargeError || (err as { code?: string } | null)?.code === 'FST_REQ_FILE_TOO_LARGE';
}

/** Reads every row of an uploaded rows file (jsonl, csv) as it streams, keeping none: a file of 100,000 rows
 *  is checked without holding them (the batch's admission reads it the same way). */
async function checkRows(blobs: BlobStore, key: string, format: 'csv' | 'jsonl', source: string): Promise<void> {
  const reader = new RowReader({ format, source });
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of await blobs.createReadStream(key)) reader.push(decoder.decode(chunk as Buffer, { stream: true }));
  reader.push(decoder.decode());
  reader.end();
}

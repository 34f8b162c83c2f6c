// POST /documents/template/inspect (extension): one template file in, its tags, problems and the JSON
// Schema of its data out (engine inspect + inferSchema). Nothing is stored. Schemas in api/schemas/inspect.ts.
import path from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { BlobStore } from '../../connectors/storage/blob-store.ts';
import { ApiError } from '../../core/errors.ts';
import {
  describeLocation,
  type ErrorLocation,
  inferSchema,
  inspect,
  sampleData,
  TemplateError,
  type TemplateLimits,
} from '../../engine/index.ts';
import type { Db } from '../../store/db.ts';
import { getFile } from '../../store/files.ts';
import { success } from '../envelope.ts';
import { inspectTemplate } from '../schemas/inspect.ts';
import { templatePackageProblem } from './uploads.ts';

export interface InspectRouteOptions {
  db: Db;
  blobs: BlobStore;
  maxBytes: number;
  templateLimits?: TemplateLimits;
}

const EXTENSIONS = new Set(['.docx', '.xlsx', '.pptx']);

const located = (loc: ErrorLocation) => ({ ...loc, where: describeLocation(loc) });

const inspectRoutes: FastifyPluginAsyncTypebox<InspectRouteOptions> = async (app, opts) => {
  app.post('/documents/template/inspect', { schema: inspectTemplate(opts.maxBytes) }, async (request) => {
    const { fileName, bytes } = request.isMultipart() ? await receiveOne(request, opts.maxBytes) : await storedUpload(request, opts);
    const problem = templatePackageProblem(fileName, bytes, opts.templateLimits);
    if (problem) throw problem;
    const declared = path.extname(fileName).slice(1).toLowerCase();
    let result: ReturnType<typeof inspect>;
    try {
      result = inspect(bytes);
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      throw new ApiError(
        'INVALID_TEMPLATE_FORMAT',
        `file ${JSON.stringify(fileName)} is not a readable .${declared} template: ${err.message}`,
      );
    }
    const schema = inferSchema(result);
    return success(request, 200, {
      fileName,
      format: result.format,
      tags: result.tags.map((t) => ({ kind: t.kind, source: t.source, value: t.value, location: located(t.location) })),
      loops: result.loops,
      includes: result.includes,
      problems: result.errors.map((e) => ({ code: e.id, message: e.message, ...(e.location ? { location: located(e.location) } : {}) })),
      schema,
      sample: sampleData(schema),
    });
  });
};

export default inspectRoutes;

/** `{template: {urn, loadMethod: "Storage"}}`: a template upload of the caller's subscription, read without
 *  consuming it (an inspection is not a generate). */
async function storedUpload(request: FastifyRequest, opts: InspectRouteOptions): Promise<{ fileName: string; bytes: Uint8Array }> {
  const body: unknown = request.body;
  const template = body !== null && typeof body === 'object' && 'template' in body ? body.template : undefined;
  const field = (name: string): unknown =>
    template !== null && typeof template === 'object' && name in template ? (template as Record<string, unknown>)[name] : undefined;
  const urn = field('urn');
  const loadMethod = field('loadMethod');
  if (typeof urn !== 'string' || urn.trim() === '') {
    throw new ApiError(
      'VALIDATION_ERROR',
      'send one template file as multipart/form-data, or JSON {"template": {"urn": "<upload id>", "loadMethod": "Storage"}}: template.urn is missing',
    );
  }
  if (typeof loadMethod !== 'string' || loadMethod.toLowerCase() !== 'storage') {
    throw new ApiError(
      'VALIDATION_ERROR',
      `template.loadMethod must be Storage (an id from POST /documents/template/upload), not ${JSON.stringify(loadMethod ?? null)}`,
    );
  }
  const file = await getFile(opts.db, request.auth.subscriptionId, urn.trim(), ['template']);
  if (!file)
    throw new ApiError(
      'TEMPLATE_NOT_FOUND',
      `template.urn ${JSON.stringify(urn.slice(0, 80))} does not resolve to a template upload of this subscription (consumed by a generate, expired, or never uploaded)`,
    );
  return { fileName: file.fileName, bytes: await opts.blobs.get(file.blobKey) };
}

/** The one template file of the multipart body, read whole (it is inspected in memory, under maxBytes). */
async function receiveOne(request: FastifyRequest, maxBytes: number): Promise<{ fileName: string; bytes: Uint8Array }> {
  let found: { fileName: string; bytes: Uint8Array } | undefined;
  let failure: ApiError | undefined;
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 2, fields: 10, fieldSize: 64 * 1024 } })) {
      if (part.type !== 'file') continue;
      if (found || failure) {
        part.file.resume();
        failure ??= new ApiError('VALIDATION_ERROR', `field ${part.fieldname}: send one template file per request`);
        continue;
      }
      if (!EXTENSIONS.has(path.extname(part.filename).toLowerCase())) {
        part.file.resume();
        failure = new ApiError(
          'INVALID_TEMPLATE_FORMAT',
          `file ${JSON.stringify(part.filename)} (field ${part.fieldname}): only .docx, .xlsx and .pptx files are accepted`,
        );
        continue;
      }
      const bytes = await part.toBuffer();
      found = { fileName: part.filename, bytes };
    }
  } catch (err) {
    if ((err as { code?: string } | null)?.code === 'FST_REQ_FILE_TOO_LARGE')
      throw new ApiError('FILE_TOO_LARGE', `the template exceeds the limit of ${maxBytes} bytes`);
    if ((err as { code?: string } | null)?.code === 'FST_FILES_LIMIT')
      throw new ApiError('VALIDATION_ERROR', 'send one template file per request');
    throw new ApiError(
      'VALIDATION_ERROR',
      `body: the multipart/form-data body is malformed (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  if (failure) throw failure;
  if (!found)
    throw new ApiError('VALIDATION_ERROR', 'no file in the request: send one template file (.docx, .xlsx or .pptx) as multipart/form-data');
  return found;
}

// Uploads (spec 4.4, and the data upload extension) and the Storage download (extension).
import Type from 'typebox';
import { UPLOAD_TEMPLATE_FORMATS } from '../../core/formats.ts';
import { component, withExample } from './components.ts';
import { errorResponses, successEnvelope } from './envelopes.ts';
import * as examples from './examples.ts';

export const UploadedFile = component(
  'UploadedFile',
  Type.Object({
    // A plain string like every urn it becomes (no format: uuid, which generated clients type as a UUID object).
    id: Type.String({ description: 'Use it as template.urn (or data.urn) with loadMethod Storage' }),
    fileName: Type.String({ examples: ['invoice.docx'] }),
  }),
);

export const UploadResult = component(
  'UploadResult',
  successEnvelope(Type.Object({ files: Type.Array(UploadedFile) }), { examples: [examples.templateUploadResult] }),
);

/** The multipart body, as OpenAPI describes a file upload (a file picker in the interactive docs). The
 *  route reads the parts as streams, so Fastify validates no body schema. */
function multipartBody(what: string, extensions: readonly string[]) {
  return {
    required: true,
    description: `multipart/form-data with one or more ${what} files (${extensions.map((e) => `.${e}`).join(', ')}), under any field names (\`file\` here)`,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: {
            file: {
              type: 'array',
              minItems: 1,
              items: { type: 'string', format: 'binary' },
              description: `One or more ${extensions.map((e) => `.${e}`).join(', ')} files`,
            },
          },
        },
      },
    },
  };
}

const TAG_TEMPLATE = 'Document template';
const TAG_DATA = 'Data source';

export function uploadTemplates(maxBytes: number) {
  return {
    operationId: 'uploadTemplates',
    tags: [TAG_TEMPLATE],
    summary: 'Upload template files (.docx, .xlsx, .pptx; .xml e-invoice templates) for generate requests',
    description: `Each file gets an id to use as \`template.urn\` with \`loadMethod: "Storage"\`. Files are removed when a generate consumes them (success or failure) or after the retention period (UPLOAD_RETENTION_SECONDS, 24 hours by default), whichever comes first; a template or data-source record naming the file survives, but its urn stops resolving. Maximum ${maxBytes} bytes per file (UPLOAD_MAX_BYTES); a larger file gives 413 FILE_TOO_LARGE. A disallowed extension, or a package of another kind than its extension says (a Word document named .xlsx), gives 400 INVALID_TEMPLATE_FORMAT and nothing is stored. Extension: a .xml file is an e-invoice's XML template (document.einvoice.template.urn, docs/einvoice.md), accepted when it is UTF-8 text starting with '<' and without a DOCTYPE. A package over the template limits that its zip directory shows (parts TEMPLATE_MAX_PARTS, inflated size of one part TEMPLATE_MAX_PART_BYTES and of all TEMPLATE_MAX_TOTAL_BYTES, compression ratio TEMPLATE_MAX_RATIO) gives 400 TEMPLATE_TOO_COMPLEX naming the limit and its value, and nothing is stored.`,
    consumes: ['multipart/form-data'],
    response: { 201: UploadResult, ...errorResponses(400, 401, 413) },
    'x-openapi': { requestBody: multipartBody('template', [...UPLOAD_TEMPLATE_FORMATS, 'xml']) },
  };
}

export const uploadData = {
  operationId: 'uploadData',
  tags: [TAG_DATA],
  summary: 'Upload JSON data files for generate requests, and rows for batches (extension)',
  description:
    'Same multipart shape and response as template upload. Each file must be a .json file holding valid JSON, or, for a batch (POST /documents/document/generate/batch), a .jsonl file (one JSON object per line) or a .csv file (the first line names the columns; comma, semicolon or tab separated); its id is used as `data.urn` with `loadMethod: "Storage"`. Same size limit and retention as templates.',
  consumes: ['multipart/form-data'],
  response: { 201: withExample(UploadResult, examples.dataUploadResult), ...errorResponses(400, 401, 413) },
  'x-openapi': { requestBody: multipartBody('JSON data (or batch rows)', ['json', 'jsonl', 'ndjson', 'csv']) },
};

export const downloadDocument = {
  operationId: 'downloadDocument',
  tags: ['Generation'],
  summary: 'Download a document delivered to Storage (extension)',
  description:
    "Streams the file's bytes with its content type and file name, or, when the service is configured so (STORAGE_DOWNLOAD=redirect on object storage), answers 302 with a short-lived presigned URL of the object store. Another subscription's urn answers 404, as if absent.",
  params: Type.Object({
    urn: Type.String({ description: 'result.data.document.urn of a generate or manage to Storage', examples: [examples.documentUrn] }),
  }),
  response: {
    200: { description: 'The file', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
    302: { description: 'Download from the `Location` header (presigned, short-lived)', type: 'null' },
    ...errorResponses(400, 401, 404),
  },
};

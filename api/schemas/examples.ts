// Examples of the OpenAPI document, taken from the README's walk-through (test/unit/openapi.test.ts holds
// them to it): the invoice template and its data uploaded, generated into a PDF in Storage.

const TEMPLATE_ID = '0b7f3c52-8d4e-4f1a-9a6b-2e5c7d9f1a34';
const DATA_ID = '6c2e9a1d-4b7f-4e3c-8d5a-1f9b3e7c2a60';
const DOCUMENT_URN = 'a4d8e2f1-7c3b-4a9e-b5d6-3e1f8c9a2b47';
const DOCUMENT_GUID = 'f3b9c1e7-2a5d-4c8f-9e1b-7d4a6c2e8f15';
const OPERATION_ID = '9e4c7a2b-1d5f-4b8e-a3c6-5f2d8b1e7c94';
const USER_ID = '2d6a9f3e-8b1c-4e7a-9d5f-4c3b1a8e6f27';
const BASE = 'http://127.0.0.1:8080/v1';
const DATE_TIME = '2026-03-02T09:14:07.512Z';

const tail = (method: string, path: string) => ({
  origin: `${method} ${BASE}${path}`,
  dateTime: DATE_TIME,
  operationId: OPERATION_ID,
  userId: USER_ID,
});

/** `curl -F file=@examples/invoice.docx .../documents/template/upload` and its answer. */
export const templateUploadResult = {
  result: { statusCode: 201, message: 'Created', data: { files: [{ id: TEMPLATE_ID, fileName: 'invoice.docx' }] } },
  ...tail('POST', '/documents/template/upload'),
};

export const dataUploadResult = {
  result: { statusCode: 201, message: 'Created', data: { files: [{ id: DATA_ID, fileName: 'invoice.json' }] } },
  ...tail('POST', '/documents/data/upload'),
};

/** The walk-through's generate body, with the ids of the uploads above. */
export const generateRequest = {
  template: { urn: TEMPLATE_ID, loadMethod: 'Storage', fileFormat: 'docx' },
  data: { urn: DATA_ID, loadMethod: 'Storage' },
  document: { name: 'invoice', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root', timezone: 'Europe/London', locale: 'en-GB' },
};

/** What it answers (and what the callback of the same request made asynchronously carries). */
export const generateResult = {
  result: {
    statusCode: 201,
    message: 'Created',
    data: {
      document: { deliveryMethod: 'Storage', name: 'invoice.pdf', fileFormat: 'pdf', urn: DOCUMENT_URN, documentGuid: DOCUMENT_GUID },
      warnings: [
        {
          code: 'MISSING_VALUE',
          message: 'no value for tag "customer.vatNumber" (word/document.xml, paragraph 4)',
          tag: 'customer.vatNumber',
          location: { part: 'word/document.xml', paragraph: 4, offset: 12 },
        },
      ],
    },
  },
  consumption: [
    { dimension: 'pages-generated', value: 1 },
    { dimension: 'documents-generated', value: 1 },
  ],
  ...tail('POST', '/documents/document/generate'),
};

export const templateNotFound = {
  error: {
    statusCode: 400,
    message: `template.urn ${TEMPLATE_ID} does not resolve: upload the file with POST /documents/template/upload (uploads expire after use or 24 hours)`,
    innerErrors: [
      {
        code: 'TEMPLATE_NOT_FOUND',
        message: `template.urn ${TEMPLATE_ID} does not resolve: upload the file with POST /documents/template/upload (uploads expire after use or 24 hours)`,
        userMessage: `template.urn ${TEMPLATE_ID} does not resolve: upload the file with POST /documents/template/upload (uploads expire after use or 24 hours)`,
      },
    ],
  },
  ...tail('POST', '/documents/document/generate'),
};

/** The README's asynchronous section: the claims of a client token. */
export const clientClaims = {
  sub: '<token your callback endpoint expects>',
  iss: 'https://your-service.example',
  dest: '/docgen/callback',
};

/** The README's manage example: the invoice generated into DriveA moved to Storage. */
export const manageRequest = {
  sourceDocument: { urn: '01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K', fileFormat: 'pdf', loadMethod: 'DriveA', remove: 'delete' },
  targetDocument: { name: 'invoice', fileFormat: 'pdf', deliveryMethod: 'Storage', path: 'root/archive' },
};

export const manageResult = {
  result: {
    statusCode: '201',
    message: 'Created',
    data: {
      document: { deliveryMethod: 'Storage', name: 'invoice.pdf', fileFormat: 'pdf', urn: DOCUMENT_URN, documentGuid: DOCUMENT_GUID },
    },
  },
  consumption: [
    { dimension: 'pages-managed', value: 1 },
    { dimension: 'documents-managed', value: 1 },
  ],
  ...tail('POST', '/documents/document/manage'),
};

/** The urn of the generated PDF (GET /documents/storage/{urn}/content). */
export const documentUrn = DOCUMENT_URN;

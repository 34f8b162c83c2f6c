// Every workflow the worker registers.
export { generateDocument } from './generate.ts';
export { generateDocumentAsync } from './generate-async.ts';
export { manageDocument } from './manage.ts';
export { uploadRetention, uploadSweeper } from './retention.ts';
export { batchAdmission, generateBatch } from './batch.ts';

// Every workflow the worker registers.
export { generateDocument } from './generate.ts';
export { generateDocumentAsync } from './generate-async.ts';

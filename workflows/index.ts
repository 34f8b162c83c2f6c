// Every workflow the worker registers.
export { generateDocument } from './generate.ts';

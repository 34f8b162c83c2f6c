import path from 'node:path';
import { keepFile, OUTPUTS_ENV } from './office-outputs.ts';

/**
 * Every accessible pdf the tests produce is kept for veraPDF when DOCGEN_TEST_OUTPUTS names a directory (CI
 * sets it): `<dir>/pdfua1/` the files that claim PDF/UA-1, `<dir>/pdfa2a/` (or `pdfa3a/`) those that also
 * claim PDF/A level A. .ci/run runs veraPDF's profiles over each directory after the suites and fails on
 * any rule a file breaks. Only files a test expects to conform are kept (not the ones made to warn).
 */
export function keepAccessiblePdf(bytes: Uint8Array, label: string, claims: Array<'pdfua1' | 'pdfa2a' | 'pdfa3a'> = ['pdfua1']): void {
  const dir = process.env[OUTPUTS_ENV];
  if (!dir) return;
  for (const claim of claims) keepFile(path.join(dir, claim), label, bytes, 'pdf');
}

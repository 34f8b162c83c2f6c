import { keepFile } from './office-outputs.ts';

/**
 * Every e-invoice the tests produce (a Factur-X pdf, an XRechnung xml) is kept for the independent
 * validators when DOCGEN_EINVOICE_OUTPUTS names a directory: .ci/run sets it and then runs
 * tools/mustang/run.sh --check-dir over it (and veraPDF's PDF/A-3b profile over the pdfs). Named by what
 * made them and their digest, so an identical output is kept once.
 */
export const EINVOICE_OUTPUTS_ENV = 'DOCGEN_EINVOICE_OUTPUTS';

export function keepEInvoice(bytes: Uint8Array, label: string, ext: 'pdf' | 'xml'): void {
  const dir = process.env[EINVOICE_OUTPUTS_ENV];
  if (!dir) return;
  keepFile(dir, label, bytes, ext);
}

import path from 'node:path';
import { pdfaIdentification } from '../../converter/index.ts';
import { keepFile } from './office-outputs.ts';

/**
 * Every PDF/A file the tests produce (pdfSaveOptions' PDF/A conformances, e-invoices' PDF/A-3b) is kept for
 * veraPDF when DOCGEN_PDFA_OUTPUTS names a directory: .ci/run sets it and runs tools/verapdf/check-dir.sh over
 * it after the suites. Each file goes under the flavour its XMP declares (1a, 2b, 3b), so the validator
 * judges it against the part and level it claims.
 */
export const PDFA_OUTPUTS_ENV = 'DOCGEN_PDFA_OUTPUTS';

export function keepPdfA(bytes: Uint8Array, label: string): void {
  const dir = process.env[PDFA_OUTPUTS_ENV];
  if (!dir) return;
  const id = pdfaIdentification(bytes);
  if (!id) return;
  keepFile(path.join(dir, `${id.part}${id.conformance.toLowerCase()}`), label, bytes, 'pdf');
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pdfaIdentification } from '../../converter/index.ts';

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
  const flavour = path.join(dir, `${id.part}${id.conformance.toLowerCase()}`);
  fs.mkdirSync(flavour, { recursive: true });
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  fs.writeFileSync(path.join(flavour, `${label.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 60)}-${digest}.pdf`), bytes);
}

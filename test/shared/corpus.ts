// Where the material from outside the repository is: the folder beside the checkout that holds the
// docxtemplater conformance corpus (DOCGEN_SHARED_DIR, default ../shared). Only the suite in this folder
// reads it (`npm run test:shared`; .ci/run runs it): `npm test` passes on a clone with nothing beside it.
import fs from 'node:fs';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
export const sharedDir = path.resolve(repoRoot, process.env.DOCGEN_SHARED_DIR ?? path.join('..', 'shared'));
export const docxtemplaterCorpus = path.join(sharedDir, 'conformance', 'docxtemplater');

/** Fails the suite at once, naming the folder and the setting, when the material is not there. */
export function requireShared(): void {
  if (!fs.existsSync(docxtemplaterCorpus)) {
    throw new Error(
      `the shared corpus is not at ${docxtemplaterCorpus}: set DOCGEN_SHARED_DIR to the folder that holds conformance/docxtemplater`,
    );
  }
}

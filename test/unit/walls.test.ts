// The walls of the house (eslint.config.js): an import against the flow api -> workflows -> activities ->
// engine/converter/connectors/store, or into core/, is a lint error. This test lints deliberately wrong
// imports placed in real files of each folder, so a change to the lint configuration that silently drops a
// wall fails here, not in review.
import fs from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
// Only the walls' rule runs, without type information (no TypeScript program to build): the walls are
// import paths, and this keeps the test in seconds.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  ruleFilter: ({ ruleId }) => ruleId === '@typescript-eslint/no-restricted-imports',
});

async function restrictedImports(file: string, extra: string): Promise<string[]> {
  const text = `${fs.readFileSync(path.join(root, file), 'utf8')}\n${extra}\n`;
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message);
}

describe('import walls', () => {
  const against: [string, string][] = [
    ['activities/scratch.ts', "import { buildApp } from '../api/app.ts'; void buildApp;"],
    ['activities/scratch.ts', "import { generateDocument } from '../workflows/generate.ts'; void generateDocument;"],
    ['core/blob.ts', "import type { Activities } from '../activities/index.ts'; export type A = Activities;"],
    ['core/blob.ts', "import { createHash } from 'node:crypto'; void createHash;"],
    ['connectors/location.ts', "import { createActivities } from '../activities/index.ts'; void createActivities;"],
    ['store/db.ts', "import { createLocationRegistry } from '../connectors/registry.ts'; void createLocationRegistry;"],
    ['engine/errors.ts', "import { insertFile } from '../store/files.ts'; void insertFile;"],
    ['einvoice/model.ts', "import { render } from '../engine/index.ts'; void render;"],
    ['einvoice/model.ts', "import { inflateSync } from 'node:zlib'; void inflateSync;"],
    ['converter/facturx.ts', "import { toCii } from '../einvoice/cii.ts'; void toCii;"],
    ['security/sealed.ts', "import { safeFetch } from '../connectors/http/safe-fetch.ts'; void safeFetch;"],
    ['workflows/steps.ts', "import { createActivities } from '../activities/index.ts'; void createActivities;"],
    ['workflows/steps.ts', "import { getFile } from '../store/files.ts'; void getFile;"],
    ['api/envelope.ts', "import { generateDocument } from '../workflows/generate.ts'; void generateDocument;"],
    ['api/envelope.ts', "import { createActivities } from '../activities/index.ts'; void createActivities;"],
    // The SDK is a package of its own: not even the API's types (they come from the OpenAPI document).
    ['client/types.ts', "import type { GenerateRequest } from '../api/schemas/generation.ts'; export type G = typeof GenerateRequest;"],
    ['client/index.ts', "import type { ErrorCode } from '../core/errors.ts'; export type E = ErrorCode;"],
  ];
  for (const [file, line] of against) {
    it(`refuses in ${file}: ${line.split(';')[0]}`, async () => {
      expect(await restrictedImports(file, line)).toHaveLength(1);
    });
  }

  const along: [string, string][] = [
    ['api/envelope.ts', "import type { generateDocument } from '../workflows/generate.ts'; export type G = typeof generateDocument;"],
    ['workflows/steps.ts', "import type { ActivityDeps } from '../activities/index.ts'; export type D = ActivityDeps;"],
    ['activities/scratch.ts', "import { createLocationRegistry } from '../connectors/registry.ts'; void createLocationRegistry;"],
    ['connectors/location.ts', "import { getFile } from '../store/files.ts'; void getFile;"],
    ['activities/einvoice.ts', "import { toUbl } from '../einvoice/ubl.ts'; void toUbl;"],
    ['einvoice/model.ts', "import type { InnerError } from '../core/errors.ts'; export type E = InnerError;"],
  ];
  for (const [file, line] of along) {
    it(`allows in ${file}: ${line.split(';')[0]}`, async () => {
      expect(await restrictedImports(file, line)).toEqual([]);
    });
  }
});

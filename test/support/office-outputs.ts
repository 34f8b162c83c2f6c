import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { inflateEntry, readZip } from '../../engine/zip.ts';

/**
 * Every Office file the tests produce is kept for schema validation when DOCGEN_TEST_OUTPUTS names a
 * directory (CI sets it; tools/ooxml-validate/run.sh validates the directory after the tests). Files are
 * named by what made them and their digest, so an identical output is kept once.
 */
export const OUTPUTS_ENV = 'DOCGEN_TEST_OUTPUTS';

const MAIN_TYPES: Array<[RegExp, string]> = [
  [/wordprocessingml\.document\.main\+xml/, 'docx'],
  [/wordprocessingml\.template\.main\+xml/, 'dotx'],
  [/ms-word\.document\.macroEnabled\.main\+xml/, 'docm'],
  [/ms-word\.template\.macroEnabledTemplate\.main\+xml/, 'dotm'],
  [/spreadsheetml\.sheet\.main\+xml/, 'xlsx'],
  [/spreadsheetml\.template\.main\+xml/, 'xltx'],
  [/ms-excel\.sheet\.macroEnabled\.main\+xml/, 'xlsm'],
  [/presentationml\.presentation\.main\+xml/, 'pptx'],
  [/presentationml\.template\.main\+xml/, 'potx'],
  [/ms-powerpoint\.presentation\.macroEnabled\.main\+xml/, 'pptm'],
];

/** The extension of an Office package from its main part's content type, or undefined when it is none. */
export function officeExtension(bytes: Uint8Array): string | undefined {
  let types: string | undefined;
  try {
    const entry = readZip(bytes).get('[Content_Types].xml');
    types = entry === undefined ? undefined : inflateEntry(entry).toString('utf8');
  } catch {
    return undefined;
  }
  if (types === undefined) return undefined;
  for (const [re, ext] of MAIN_TYPES) if (re.test(types)) return ext;
  return undefined;
}

/**
 * Keeps `bytes` when DOCGEN_TEST_OUTPUTS is set and they are an Office package; `label` says what made
 * them. With the template they were rendered from, the template is kept too (templates/<digest>.ext, named
 * in the output's file name after a `~`), so the validator can tell the template's own problems from ours.
 */
export function keepOutput(bytes: Uint8Array, label: string, template?: Uint8Array): void {
  const dir = process.env[OUTPUTS_ENV];
  if (!dir) return;
  const ext = officeExtension(bytes);
  if (ext === undefined) return;
  let from = '';
  const templateExt = template === undefined ? undefined : officeExtension(template);
  if (template !== undefined && templateExt !== undefined) {
    const t = digest(template);
    fs.mkdirSync(path.join(dir, 'templates'), { recursive: true });
    const tFile = path.join(dir, 'templates', `${t}.${templateExt}`);
    if (!fs.existsSync(tFile)) fs.writeFileSync(tFile, template);
    from = `~${t}`;
  }
  keepFile(dir, label, bytes, ext, from);
}

/** Writes `bytes` into `dir` as `<label>-<digest><suffix>.<ext>` (the label made safe for a file name), once:
 *  the kept outputs of every validator (Office schemas, veraPDF, Mustang) are named this way. */
export function keepFile(dir: string, label: string, bytes: Uint8Array, ext: string, suffix = ''): void {
  const safe =
    label
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'output';
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${safe}-${digest(bytes)}${suffix}.${ext}`);
  if (!fs.existsSync(file)) fs.writeFileSync(file, bytes);
}

function digest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** What is running: the current test's file and name under vitest, else the process's script. */
export function currentLabel(): string {
  const worker = (globalThis as { __vitest_worker__?: { filepath?: string; current?: { name?: string; file?: { filepath?: string } } } })
    .__vitest_worker__;
  const file = worker?.current?.file?.filepath ?? worker?.filepath;
  if (file !== undefined) return `${path.basename(file).replace(/\.test\.ts$/, '')}-${worker?.current?.name ?? ''}`;
  return path.basename(process.argv[1] ?? 'output').replace(/\.[^.]+$/, '');
}

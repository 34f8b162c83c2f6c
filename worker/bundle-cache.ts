// The workflow bundle, kept on disk between processes (worker/index.ts workflowBundle): webpack takes seconds of
// CPU (about 9 s on a 2-core machine) for every process that starts a worker, and it makes the same bundle as
// long as the files it bundled are unchanged. A bundle is kept with the list of the files it was made from (the
// module ids webpack wrote into it), and is used again only while every one of those files, the package lock
// (the bundled packages: @temporalio/workflow and its dependencies), the bundler's own options
// (worker/bundle-process.ts) and Node's version hash to what they did then. A file that starts importing a new
// one has changed itself, so the list cannot miss a file. Anything unexpected (an unreadable entry, a module id
// that names no file, a cache directory that cannot be written) means no cache: the bundle is made as before.
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLER = fileURLToPath(new URL('./bundle-process.ts', import.meta.url));
const FORMAT = 1;

interface Manifest {
  format: number;
  /** The files the bundle was made from (absolute), besides the package lock. */
  files: string[];
  lock: string;
  /** sha256 of everything the bundle depends on (inputsDigest). */
  inputs: string;
  /** sha256 of the bundle's code. */
  code: string;
}

/** The cache's entry for one workflows entry file: its manifest and its code. */
function entryPaths(dir: string, workflowsPath: string): { manifest: string; code: string } {
  const key = createHash('sha256').update(path.resolve(workflowsPath)).digest('hex').slice(0, 16);
  return { manifest: path.join(dir, `${key}.json`), code: path.join(dir, `${key}.js`) };
}

function inputsDigest(files: string[], lock: string): string {
  const h = createHash('sha256').update(`docgen workflow bundle ${FORMAT}\0${process.version}\0`);
  for (const file of [...files, lock, BUNDLER]) h.update(file).update('\0').update(fs.readFileSync(file)).update('\0');
  return h.digest('hex');
}

/** The package lock of the project that holds `from`: the bundled packages' versions. */
function lockOf(from: string): string | undefined {
  for (let dir = path.dirname(path.resolve(from)); ; dir = path.dirname(dir)) {
    const lock = path.join(dir, 'package-lock.json');
    if (fs.existsSync(lock)) return lock;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The project files a bundle was made from: webpack's module ids (paths relative to the directory it ran
 *  in), outside node_modules. Undefined when they cannot be read so (no ids, or one that names no file). */
export function bundledFiles(code: string, cwd: string): string[] | undefined {
  const files = new Set<string>();
  for (const m of code.matchAll(/"(\.\.?\/[^"\n]+?\.(?:ts|mts|cts|js|mjs|cjs|json))"/g)) {
    const id = m[1]!;
    if (id.includes('node_modules/')) continue;
    const file = path.resolve(cwd, id);
    if (!fs.existsSync(file)) return undefined;
    files.add(file);
  }
  return files.size > 0 ? [...files].sort() : undefined;
}

/** The kept bundle for `workflowsPath`, when everything it was made from is unchanged; else undefined. */
export function readCachedBundle(dir: string, workflowsPath: string): string | undefined {
  const at = entryPaths(dir, workflowsPath);
  try {
    const manifest = JSON.parse(fs.readFileSync(at.manifest, 'utf8')) as Manifest;
    if (manifest.format !== FORMAT || !manifest.files.includes(path.resolve(workflowsPath))) return undefined;
    if (lockOf(workflowsPath) !== manifest.lock) return undefined;
    if (inputsDigest(manifest.files, manifest.lock) !== manifest.inputs) return undefined;
    const code = fs.readFileSync(at.code, 'utf8');
    // The code is the one the manifest describes (written before it, each renamed into place).
    return createHash('sha256').update(code).digest('hex') === manifest.code ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `code` for `workflowsPath`; false when it cannot (its files cannot be named, or the directory cannot
 *  be written). Each file is written under a temporary name and renamed, the manifest last: a process that
 *  reads meanwhile finds the old entry or none. */
export function writeCachedBundle(dir: string, workflowsPath: string, code: string, cwd: string): boolean {
  const files = bundledFiles(code, cwd);
  const lock = lockOf(workflowsPath);
  if (!files || !lock || !files.includes(path.resolve(workflowsPath))) return false;
  try {
    const inputs = inputsDigest(files, lock);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const at = entryPaths(dir, workflowsPath);
    const manifest: Manifest = { format: FORMAT, files, lock, inputs, code: createHash('sha256').update(code).digest('hex') };
    for (const [file, text] of [
      [at.code, code],
      [at.manifest, JSON.stringify(manifest)],
    ] as const) {
      const tmp = `${file}.${randomUUID()}.tmp`;
      fs.writeFileSync(tmp, text, { mode: 0o600 });
      fs.renameSync(tmp, file);
    }
    return true;
  } catch {
    return false;
  }
}

// openapi-python-client (PyPI), installed once into the cache directory with pip --target (outside any
// Python environment, so no EXTERNALLY-MANAGED refusal; one rename at the end, so a half install is never
// used): the generator of the Python client test, and the packages the generated client imports (httpx,
// attrs, python-dateutil) with it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const OPENAPI_PYTHON_CLIENT_VERSION = '0.29.1';

/** The directory to put on PYTHONPATH (its bin/ holds ruff, which the generator runs on its output). */
export function ensureOpenapiPythonClient(): string {
  const dir = path.join(os.homedir(), '.cache', 'docgen', `openapi-python-client-${OPENAPI_PYTHON_CLIENT_VERSION}`);
  if (fs.existsSync(path.join(dir, 'openapi_python_client', '__init__.py'))) return dir;
  const partial = `${dir}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  execFileSync(
    'python3',
    [
      '-m',
      'pip',
      'install',
      '--disable-pip-version-check',
      '--root-user-action=ignore',
      '--no-input',
      '--quiet',
      '--target',
      partial,
      `openapi-python-client==${OPENAPI_PYTHON_CLIENT_VERSION}`,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 },
  );
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(partial, dir);
  return dir;
}

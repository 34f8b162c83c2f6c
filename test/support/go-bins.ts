// Binaries that Go's `go install` builds (versitygw, the Temporal server and its SQL tool): found through an
// environment variable, PATH or Go's bin directory. .ci/run installs them; tests never build them.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function executable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function goBin(): string | undefined {
  try {
    const gobin = execFileSync('go', ['env', 'GOBIN'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (gobin) return gobin;
    const gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return gopath ? path.join(gopath.split(path.delimiter)[0] ?? gopath, 'bin') : undefined;
  } catch {
    return undefined;
  }
}

/** The first of `names` found via `envVar`, PATH, then Go's bin directory; undefined if none. */
export function findGoBinary(envVar: string, names: string[]): string | undefined {
  const explicit = process.env[envVar];
  if (explicit) return executable(explicit) ? explicit : undefined;
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), goBin()].filter((d): d is string => Boolean(d));
  for (const name of names) for (const dir of dirs) if (executable(path.join(dir, name))) return path.join(dir, name);
  return undefined;
}

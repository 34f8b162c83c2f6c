// Binaries that Go's `go install` builds (versitygw, the Temporal server and its SQL tool): found through an
// environment variable, PATH or Go's bin directory. .ci/run installs them; tests never build them.
import path from 'node:path';
import { goBinDir, isExecutable } from '../../cli/temporal-dev.ts';

/** The first of `names` found via `envVar`, PATH, then Go's bin directory; undefined if none. */
export function findGoBinary(envVar: string, names: string[]): string | undefined {
  const explicit = process.env[envVar];
  if (explicit) return isExecutable(explicit) ? explicit : undefined;
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), goBinDir()].filter((d): d is string => Boolean(d));
  for (const name of names) for (const dir of dirs) if (isExecutable(path.join(dir, name))) return path.join(dir, name);
  return undefined;
}

// Finding the processes of one LibreOffice pool instance in /proc, for tests that kill them or check
// they are gone. Matching the instance's profile directory (made by mkdtemp for that pool) means no
// other LibreOffice on the machine - other tests, other agents - can ever match.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Live (non-zombie) pids of instance `index` of the pool in `baseDir`: its soffice (oosplash) and
 * soffice.bin, which take the profile as `-env:UserInstallation=<file URL>`. With `bridge`, also the
 * Python bridge (`--profile <dir>`); with `pgid`, only members of that process group.
 */
export function instanceProcesses(baseDir: string, index: number, opts: { pgid?: number; bridge?: boolean } = {}): number[] {
  const profile = path.join(baseDir, `profile-${index}`);
  const profileArg = `-env:UserInstallation=${pathToFileURL(profile).href}`;
  const found: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      // After the ")" that ends the command name: state ppid pgrp ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || (opts.pgid !== undefined && Number(pgrp) !== opts.pgid)) continue;
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes(profileArg) || (opts.bridge && argv.includes(profile))) found.push(Number(name));
    } catch {
      /* the process ended while we looked */
    }
  }
  return found;
}

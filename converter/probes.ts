// What the machine offers the LibreOffice pool, probed once and cached: soffice and a python with uno,
// a network namespace for the instances (unshare -n), prlimit for their memory cap.
import { spawnSync } from 'node:child_process';
import { converterSettings } from './settings.ts';

let isolationProbe: string[] | null | undefined;

/** The command prefix that gives a child an empty network namespace, or null if none works here. */
export function networkIsolationPrefix(): string[] | null {
  if (isolationProbe !== undefined) return isolationProbe;
  isolationProbe = null;
  // Plain -n needs CAP_SYS_ADMIN (root in CI); -rn works for an unprivileged user where user
  // namespaces are enabled.
  for (const args of [['-n'], ['-rn']]) {
    const r = spawnSync('unshare', [...args, 'true'], { stdio: 'ignore', timeout: 5000 });
    if (r.status === 0) {
      isolationProbe = ['unshare', ...args];
      break;
    }
  }
  return isolationProbe;
}

let availabilityProbe: { ok: boolean; reason: string } | undefined;

/** Forgets the cached probe (after `docgen start` installed LibreOffice). */
export function forgetLibreOfficeProbe(): void {
  availabilityProbe = undefined;
}

/** Whether soffice and a python with `uno` are installed (cached; ~100 ms the first time). */
export function libreOfficeAvailable(opts: { soffice?: string; python?: string } = {}): { ok: boolean; reason: string } {
  if (availabilityProbe && !opts.soffice && !opts.python) return availabilityProbe;
  const soffice = opts.soffice ?? converterSettings().soffice;
  const python = opts.python ?? converterSettings().unoPython;
  let res: { ok: boolean; reason: string };
  const which = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', soffice], { encoding: 'utf8' });
  if (which.status !== 0) res = { ok: false, reason: `LibreOffice (${soffice}) is not installed` };
  else {
    const py = spawnSync(python, ['-c', 'import uno'], { encoding: 'utf8', timeout: 10_000 });
    res = py.status === 0 ? { ok: true, reason: 'ok' } : { ok: false, reason: `${python} cannot import uno (python3-uno is not installed)` };
  }
  if (!opts.soffice && !opts.python) availabilityProbe = res;
  return res;
}

/** Whether prlimit (util-linux) is there to cap each instance's address space. */
let prlimitProbe: boolean | undefined;
export function hasPrlimit(): boolean {
  prlimitProbe ??= spawnSync('prlimit', ['--version'], { stdio: 'ignore', timeout: 5000 }).status === 0;
  return prlimitProbe;
}

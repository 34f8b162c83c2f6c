// What the machine offers the LibreOffice pool, probed once and cached: soffice and a python with uno,
// a filesystem sandbox for the instances (bwrap), a network namespace (unshare -n) where there is no
// sandbox, prlimit for their memory cap.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConvertError } from './errors.ts';
import { installationDirs, instanceEnv, sandboxArgs } from './sandbox.ts';
import { converterSettings, type NetworkIsolation, type SandboxMode } from './settings.ts';

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
  sandboxProbes.clear();
  isolations.clear();
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
    res =
      py.status === 0 ? { ok: true, reason: 'ok' } : { ok: false, reason: `${python} cannot import uno (python3-uno is not installed)` };
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

const sandboxProbes = new Map<string, { ok: boolean; reason: string }>();

/**
 * Whether an instance can run in its bwrap sandbox here: bwrap installed, allowed to make its namespaces
 * (as root, or user namespaces for another user), and `python -c 'import uno'` working inside it with the
 * system mounts the sandbox gives (cached; ~50 ms the first time).
 */
export function sandboxAvailable(opts: { python: string; soffice: string; network: boolean; readOnly: readonly string[] }): {
  ok: boolean;
  reason: string;
} {
  const key = `${opts.python}\0${opts.soffice}\0${opts.network}`;
  const cached = sandboxProbes.get(key);
  if (cached) return cached;
  let res: { ok: boolean; reason: string };
  if (spawnSync('bwrap', ['--version'], { stdio: 'ignore', timeout: 5000 }).status !== 0) {
    res = { ok: false, reason: 'bwrap (Debian package bubblewrap) is not installed' };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-sandbox-probe-'));
    try {
      const dirs = {
        profile: path.join(dir, 'profile'),
        tmp: path.join(dir, 'tmp'),
        job: path.join(dir, 'job'),
        bridge: path.join(dir, 'bridge.py'),
      };
      for (const d of [dirs.profile, dirs.tmp, dirs.job]) fs.mkdirSync(d);
      fs.writeFileSync(dirs.bridge, 'import uno\n');
      const argv = [...sandboxArgs(dirs, { network: opts.network, extraReadOnly: opts.readOnly }), opts.python, dirs.bridge];
      const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 15_000, env: instanceEnv(process.env, dirs.tmp) });
      res =
        r.status === 0
          ? { ok: true, reason: 'ok' }
          : {
              ok: false,
              reason: `bwrap cannot run the bridge here: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').slice(-2).join(' | ')}`,
            };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  sandboxProbes.set(key, res);
  return res;
}

/** How a pool's instances are isolated. */
export interface Isolation {
  /** Instances run in a bwrap sandbox (with its own network namespace when `offline`). */
  sandbox: boolean;
  /** Installation directories outside /usr the sandbox mounts read-only (SOFFICE, UNO_PYTHON elsewhere). */
  readOnly: string[];
  /** Without the sandbox: the command prefix that gives an empty network namespace (unshare -n), or null. */
  networkPrefix: string[] | null;
  /** Whether the instances are off the network (by either). */
  offline: boolean;
  /** For status, logs and the start banner, e.g. "bwrap sandbox (filesystem and network)". */
  description: string;
  /** Why the sandbox is not used, when `auto` had to do without it. */
  sandboxUnavailable?: string;
}

const isolations = new Map<string, Isolation | ConvertError>();

/** Decides a pool's isolation from CONVERTER_SANDBOX and CONVERTER_NETWORK_ISOLATION; throws when a
 *  `required` one cannot be had. Probed once per settings (converterAvailable() asks on every pdf request). */
export function chooseIsolation(
  sandboxMode: SandboxMode,
  networkMode: NetworkIsolation,
  exe: { python: string; soffice: string },
): Isolation {
  const key = JSON.stringify([sandboxMode, networkMode, exe.python, exe.soffice]);
  let known = isolations.get(key);
  if (!known) {
    try {
      known = decideIsolation(sandboxMode, networkMode, exe);
    } catch (err) {
      if (!(err instanceof ConvertError)) throw err;
      known = err;
    }
    isolations.set(key, known);
  }
  if (known instanceof ConvertError) throw known;
  return known;
}

function decideIsolation(sandboxMode: SandboxMode, networkMode: NetworkIsolation, exe: { python: string; soffice: string }): Isolation {
  if (sandboxMode !== 'auto' && sandboxMode !== 'required' && sandboxMode !== 'off') {
    throw new ConvertError('BAD_OPTIONS', `CONVERTER_SANDBOX must be auto, required or off, got '${String(sandboxMode)}'`);
  }
  if (networkMode !== 'auto' && networkMode !== 'required' && networkMode !== 'off') {
    throw new ConvertError('BAD_OPTIONS', `CONVERTER_NETWORK_ISOLATION must be auto, required or off, got '${String(networkMode)}'`);
  }
  const offline = networkMode !== 'off';
  let unavailable: string | undefined;
  if (sandboxMode !== 'off') {
    const readOnly = installationDirs([exe.soffice, exe.python]);
    const probe = sandboxAvailable({ ...exe, network: !offline, readOnly });
    if (probe.ok) {
      return {
        sandbox: true,
        readOnly,
        networkPrefix: null,
        offline,
        description: `bwrap sandbox (filesystem${offline ? ' and network' : '; network shared: CONVERTER_NETWORK_ISOLATION=off'})`,
      };
    }
    if (sandboxMode === 'required') {
      throw new ConvertError('CONVERTER_UNAVAILABLE', `the converter sandbox is required (CONVERTER_SANDBOX=required) but ${probe.reason}`);
    }
    unavailable = probe.reason;
  }
  const prefix = offline ? networkIsolationPrefix() : null;
  if (networkMode === 'required' && !prefix) {
    throw new ConvertError(
      'CONVERTER_UNAVAILABLE',
      'network isolation is required but neither `unshare -n` nor `unshare -rn` works on this machine',
    );
  }
  const fsPart = sandboxMode === 'off' ? 'no filesystem sandbox: CONVERTER_SANDBOX=off' : 'no filesystem sandbox';
  return {
    sandbox: false,
    readOnly: [],
    networkPrefix: prefix,
    offline: prefix !== null,
    description: prefix ? `network only (${prefix.join(' ')}; ${fsPart})` : `none (${fsPart}, no network isolation)`,
    ...(unavailable ? { sandboxUnavailable: unavailable } : {}),
  };
}

/** The isolation the configured pool would get, in words (never throws: a `required` one that cannot be had
 *  says so). */
export function isolationSummary(): string {
  const s = converterSettings();
  try {
    return chooseIsolation(s.sandbox, s.networkIsolation, { python: s.unoPython, soffice: s.soffice }).description;
  } catch (err) {
    return (err as Error).message;
  }
}

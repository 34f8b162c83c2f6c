// The filesystem sandbox of a LibreOffice instance (bubblewrap, `bwrap`): the instance sees the system
// read-only (what soffice and python3-uno need: parts of /usr, a few /etc entries, the font cache), its own profile,
// temporary directory and job directory (writable), a private /tmp, /proc of its own PID namespace, and
// nothing else: no data directory, no home, no other instance's jobs, no network (unless network
// isolation is off). A `file://` reference to anything outside the job resolves to nothing, whatever the
// document, image or link type that names it (issue 25 §1).
//
// The instance's profile and temporary directories keep their host paths inside the sandbox, so the
// processes stay recognisable by their arguments (tests find an instance by its profile path). Its job
// directory is mounted at /job: a document that asks for its own file name (`=CELL("filename")`, a
// FILENAME field) sees `/job/document.<ext>` in every job, never a host path, a pool or a job number.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

/** The host directories of one instance, mounted writable at the same paths. */
export interface SandboxDirs {
  profile: string;
  tmp: string;
  job: string;
  /** converter/uno_bridge.py, mounted read-only. */
  bridge: string;
}

/** Where an instance's job directory is inside its sandbox. */
export const SANDBOX_JOB_DIR = '/job';

/** Top-level system paths mounted read-only when they exist; symlinked ones (merged /usr) are recreated as
 *  symlinks. */
const SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What of /usr soffice and python3-uno read: executables, shared libraries, LibreOffice and Python
 *  themselves, locales, and the data they load (fonts and fontconfig's rules, hyphenation, thesaurus and
 *  spelling dictionaries, language tags, time zones, ICU, MIME, colour profiles). Not /usr/local (a site's
 *  own installs), nor the rest of /usr/lib and /usr/share (other packages' files). Fonts must be installed
 *  system-wide in /usr/share/fonts (fontconfig's /etc/fonts is mounted too). */
const USR_DIRS = [
  '/usr/bin',
  '/usr/lib64',
  '/usr/lib/libreoffice',
  '/usr/lib/locale',
  '/usr/share/fonts',
  '/usr/share/fontconfig',
  '/usr/share/hyphen',
  '/usr/share/mythes',
  '/usr/share/hunspell',
  '/usr/share/myspell',
  '/usr/share/liblangtag',
  '/usr/share/libreoffice',
  '/usr/share/zoneinfo',
  '/usr/share/locale',
  '/usr/share/icu',
  '/usr/share/mime',
  '/usr/share/color',
  '/usr/share/X11/locale',
];
/** /usr/lib entries matched by name: the architecture's libraries (x86_64-linux-gnu...) and Python (python3, python3.11). */
const USR_LIB_PATTERN = /^(?:[a-z0-9_]+-linux-gnu[a-z0-9_]*|python3(?:\.\d+)?)$/;

/** The /usr directories an instance sees (those that exist here). */
export function usrDirs(): string[] {
  let lib: string[] = [];
  try {
    lib = fs
      .readdirSync('/usr/lib')
      .filter((n) => USR_LIB_PATTERN.test(n))
      .map((n) => `/usr/lib/${n}`);
  } catch {
    /* no /usr/lib */
  }
  return [...USR_DIRS, ...lib].filter((d) => fs.existsSync(d));
}
const SYSTEM_ENTRIES = [
  '/etc/libreoffice', // Debian's registry and sofficerc (/usr/lib/libreoffice/share/registry points here)
  '/etc/fonts', // fontconfig
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/papersize',
  '/etc/alternatives', // symlinks only (python3, soffice on some systems)
  '/var/lib/libreoffice', // prereg/bundled extensions
  '/var/cache/fontconfig', // the system font cache: without it every instance start rebuilds one
];
/** Size of the sandbox's private /tmp (LibreOffice's temporary files go to the instance's own directory,
 *  TMPDIR; /tmp holds the UNO pipe's socket). */
const TMPFS_BYTES = 64 * 1024 * 1024;

/**
 * The bwrap arguments (before the command) that run an instance in its sandbox. `network: false` leaves
 * the instance in an empty network namespace; `extraReadOnly`: installation directories outside /usr
 * (SOFFICE, UNO_PYTHON elsewhere).
 */
export function sandboxArgs(
  dirs: SandboxDirs,
  opts: { network: boolean; extraReadOnly?: readonly string[]; fontsDir?: string | undefined },
): string[] {
  const args = ['bwrap'];
  for (const d of SYSTEM_DIRS) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(d), d);
    else if (st.isDirectory()) args.push('--ro-bind', d, d);
  }
  for (const d of usrDirs()) args.push('--ro-bind', d, d);
  for (const e of [...SYSTEM_ENTRIES, ...(opts.extraReadOnly ?? [])]) if (fs.existsSync(e)) args.push('--ro-bind', e, e);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(TMPFS_BYTES), '--tmpfs', '/tmp');
  for (const d of [dirs.profile, dirs.tmp]) args.push('--bind', d, d);
  args.push('--bind', dirs.job, SANDBOX_JOB_DIR);
  args.push('--ro-bind', dirs.bridge, dirs.bridge);
  // The deployment's fonts (CONVERTER_FONTS_DIR, converter/fonts.ts), read-only; after the private /tmp,
  // so a directory under /tmp is not hidden by it.
  if (opts.fontsDir !== undefined) args.push('--ro-bind', opts.fontsDir, opts.fontsDir);
  args.push(
    // Its own PID namespace (no other process's /proc/<pid>/root), IPC, UTS and cgroup namespaces; no
    // capabilities, no further user namespaces; it dies with its owner.
    '--unshare-user',
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(opts.network ? [] : ['--unshare-net']),
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--chdir',
    SANDBOX_JOB_DIR,
    '--',
  );
  return args;
}

/** Where an executable lives, resolved through PATH and symlinks; undefined when it is not found. */
export function resolveExecutable(exe: string): string | undefined {
  const which = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', exe], { encoding: 'utf8' });
  const found = which.status === 0 ? which.stdout.trim() : '';
  if (!found.startsWith('/')) return undefined;
  try {
    return fs.realpathSync(found);
  } catch {
    return undefined;
  }
}

/** The read-only mounts an executable outside the system directories needs: its installation directory
 *  (two levels up: /opt/libreoffice/program/soffice -> /opt/libreoffice). */
export function installationDirs(executables: readonly string[]): string[] {
  const out = new Set<string>();
  for (const exe of executables) {
    const real = resolveExecutable(exe);
    if (!real || [...SYSTEM_DIRS, ...usrDirs()].some((d) => real.startsWith(`${d}/`))) continue;
    out.add(path.dirname(path.dirname(real)));
  }
  return [...out];
}

/** The environment of a sandboxed or plain instance: locale, time zone and what a custom LibreOffice or
 *  Python needs, never the service's secrets (DATABASE_URL, S3 keys...), which LibreOffice could read back
 *  from /proc/self/environ. */
export function instanceEnv(source: NodeJS.ProcessEnv, tmp: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: source.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: tmp, TMPDIR: tmp };
  for (const [k, v] of Object.entries(source)) {
    if (
      v !== undefined &&
      /^(LANG|LANGUAGE|LC_[A-Z_]+|TZ|SAL_[A-Z0-9_]+|PYTHONPATH|PYTHONHOME|URE_BOOTSTRAP|UNO_PATH|LD_LIBRARY_PATH)$/.test(k)
    )
      env[k] = v;
  }
  return env;
}

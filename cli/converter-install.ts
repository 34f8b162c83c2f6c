// pdf out of the box: when LibreOffice is missing, `docgen start` installs it the way
// .ci/install-converter.sh does if it may install system packages (root on Debian/Ubuntu, and
// CONVERTER_AUTO_INSTALL is not false); otherwise it prints the exact command.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { converterAvailable } from '../converter/index.ts';
import { forgetLibreOfficeProbe } from '../converter/pool.ts';

export const INSTALL_SCRIPT = path.resolve(import.meta.dirname, '..', '.ci', 'install-converter.sh');

export interface InstallFacts {
  /** LibreOffice is the chosen converter and it is not installed. */
  missing: boolean;
  optedOut: boolean;
  root: boolean;
  debian: boolean;
  aptGet: boolean;
}

export type InstallPlan = { action: 'none' } | { action: 'install'; command: string[] } | { action: 'print'; message: string };

/** What `docgen start` does about a missing LibreOffice, from the facts of this machine (pure). */
export function converterInstallPlan(f: InstallFacts, script = INSTALL_SCRIPT): InstallPlan {
  if (!f.missing) return { action: 'none' };
  const command = `${f.root ? '' : 'sudo '}bash ${script}`;
  if (!f.debian || !f.aptGet) {
    return {
      action: 'print',
      message: `pdf/csv output needs LibreOffice (soffice) and python3-uno; this is not a Debian/Ubuntu machine, so install them with its package manager (the Debian package list is in ${script}), or set GOTENBERG_URL`,
    };
  }
  if (f.optedOut)
    return {
      action: 'print',
      message: `pdf/csv output needs LibreOffice: run \`${command}\` (CONVERTER_AUTO_INSTALL=false, so docgen does not install it)`,
    };
  if (!f.root) return { action: 'print', message: `pdf/csv output needs LibreOffice: run \`${command}\`, then restart docgen` };
  return { action: 'install', command: ['bash', script] };
}

function onPath(cmd: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', cmd], { stdio: 'ignore' }).status === 0;
}

/** Runs the plan on this machine; returns a line for the start-up output when something is missing. */
export function ensureLibreOffice(autoInstall: boolean, log: (line: string) => void): void {
  const c = converterAvailable();
  const plan = converterInstallPlan({
    missing: !c.available && c.kind === 'libreoffice',
    optedOut: !autoInstall,
    root: process.getuid?.() === 0,
    debian: fs.existsSync('/etc/debian_version'),
    aptGet: onPath('apt-get'),
  });
  if (plan.action === 'none') return;
  if (plan.action === 'print') {
    log(plan.message);
    return;
  }
  log(
    `LibreOffice is missing (${c.reason}): installing it for pdf/csv output with \`${plan.command.join(' ')}\` (apt-get, a few minutes, once; CONVERTER_AUTO_INSTALL=false skips this)...`,
  );
  const t0 = Date.now();
  const r = spawnSync(plan.command[0]!, plan.command.slice(1), { stdio: ['ignore', 'inherit', 'inherit'], timeout: 1_800_000 });
  forgetLibreOfficeProbe();
  if (r.status === 0) log(`LibreOffice installed in ${Math.round((Date.now() - t0) / 1000)} s.`);
  else
    log(
      `Installing LibreOffice failed (exit ${r.status ?? r.signal}); docx/xlsx/pptx output works, pdf/csv requests answer 400 until it is installed.`,
    );
}

// What the LibreOffice sandbox mounts of /usr (issue 36, section 3): what soffice and python3-uno need,
// the font directories among them, never all of /usr nor /usr/local.
import { describe, expect, it } from 'vitest';
import { SANDBOX_JOB_DIR, sandboxArgs, usrDirs } from '../../../converter/sandbox.ts';

const args = sandboxArgs({ profile: '/p', tmp: '/t', job: '/j', bridge: '/b.py' }, { network: false });
const mounts = (): string[] => args.flatMap((a, i) => (a === '--ro-bind' || a === '--bind' ? [args[i + 2]!] : []));

describe('sandboxArgs', () => {
  it('mounts parts of /usr, not /usr itself nor /usr/local', () => {
    expect(mounts()).not.toContain('/usr');
    expect(mounts().filter((m) => m === '/usr/local' || m.startsWith('/usr/local/'))).toEqual([]);
    expect(mounts()).toEqual(expect.arrayContaining(usrDirs()));
  });

  it('keeps the font directories and fontconfig visible', () => {
    expect(usrDirs()).toEqual(expect.arrayContaining(['/usr/share/fonts']));
    expect(mounts()).toEqual(expect.arrayContaining(['/usr/share/fonts', '/etc/fonts']));
  });

  it('mounts the job directory at /job and starts there', () => {
    const i = args.indexOf('/j');
    expect(args.slice(i - 1, i + 2)).toEqual(['--bind', '/j', SANDBOX_JOB_DIR]);
    expect(args[args.indexOf('--chdir') + 1]).toBe('/job');
  });
});

// `docgen <command> --help` for every command the main help lists: the command's usage on stdout, exit 0,
// nothing started (a `docgen start --help` that started the service would not exit); `docgen --version`.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { docgenBin, repoRoot } from '../support/docgen-start.ts';

const run = async (args: string[]) =>
  promisify(execFile)(process.execPath, [docgenBin, ...args], { cwd: repoRoot, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );

describe('docgen <command> --help', () => {
  it('answers for every command of `docgen --help`', { timeout: 240_000 }, async () => {
    const main = await run(['--help']);
    expect(main.code).toBe(0);
    const commands = [...new Set([...main.stdout.matchAll(/^ {2}docgen ([a-z][\w-]*)/gm)].map((m) => m[1]!))];
    expect(commands).toEqual(
      expect.arrayContaining([
        'start',
        'api',
        'worker',
        'credentials',
        'render',
        'generate',
        'example',
        'inspect',
        'config',
        'einvoice-rules',
      ]),
    );
    const cases = [...commands.map((cmd) => ({ cmd, flag: '--help' })), { cmd: 'generate', flag: '-h' }];
    const results: { cmd: string; flag: string; res: Awaited<ReturnType<typeof run>> }[] = [];
    // Three at a time: each is a Node start-up, and the machine is shared.
    await Promise.all(
      [0, 1, 2].map(async () => {
        for (let c = cases.shift(); c; c = cases.shift()) results.push({ ...c, res: await run([c.cmd, c.flag]) });
      }),
    );
    for (const { cmd, flag, res } of results) {
      {
        expect(res.stderr, `docgen ${cmd} ${flag}`).toBe('');
        expect(res.code, `docgen ${cmd} ${flag}`).toBe(0);
        expect(res.stdout, `docgen ${cmd} ${flag}`).toMatch(new RegExp(`^Usage:\\n {2}docgen ${cmd}(?![\\w-])`));
        // Only this command's entries, each with its description.
        expect(
          res.stdout.match(/^ {2}docgen [a-z][\w-]*/gm)?.every((l) => l === `  docgen ${cmd}`),
          `docgen ${cmd} ${flag}`,
        ).toBe(true);
      }
    }
    // --help after other options too, and an unknown command still says so.
    expect((await run(['render', '--template', 'x.docx', '--help'])).code).toBe(0);
    const unknown = await run(['frobnicate', '--help']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('answers docgen --version with the package version, Node and the Temporal SDK, and nothing else', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
    };
    for (const flag of ['--version', '-V', 'version']) {
      const res = await run([flag]);
      expect(res.code, flag).toBe(0);
      expect(res.stderr, flag).toBe('');
      expect(res.stdout, flag).toBe(
        `docgen ${pkg.version} (Node ${process.version}, Temporal SDK ${pkg.dependencies['@temporalio/worker']})\n`,
      );
    }
    expect((await run(['--help'])).stdout).toContain('  docgen --version ');
  });
});

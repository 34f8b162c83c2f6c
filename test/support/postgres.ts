// A real PostgreSQL server for tests: Debian's binaries, a throwaway cluster in a temp dir, a free port.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function findPgBin(): string {
  const candidates = [process.env.PG_BIN, ...listDebianPgBins()].filter((d): d is string => Boolean(d));
  for (const dir of candidates) {
    if (fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres'))) return dir;
  }
  throw new Error(
    'PostgreSQL server binaries not found (initdb, postgres): install Debian package `postgresql` (.ci/run does), or set PG_BIN',
  );
}

function listDebianPgBins(): string[] {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => path.join(root, v, 'bin'));
}

export interface PgServer {
  url: string;
  stop(): Promise<void>;
}

export async function startPostgres(port: number): Promise<PgServer> {
  const bin = findPgBin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-pg-'));
  const data = path.join(dir, 'data');
  // initdb and postgres refuse to run as root: run them as the `postgres` system user when we are root.
  // Spawned directly with uid/gid (not through runuser, which does not forward signals) so that stop()'s
  // SIGINT reaches the server.
  const as: { uid?: number; gid?: number } = process.getuid?.() === 0 ? { uid: uidOf('postgres'), gid: gidOf('postgres') } : {};
  if (as.uid !== undefined && as.gid !== undefined) fs.chownSync(dir, as.uid, as.gid);
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], {
    stdio: 'ignore',
    ...as,
  });
  const child: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-h',
      '127.0.0.1',
      '-k',
      dir,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
    ],
    { stdio: 'ignore', ...as },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { default: pg } = await import('pg');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (err) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`PostgreSQL did not start: ${String(err)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}
function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}

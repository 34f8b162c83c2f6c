// The production Temporal server (not the dev server) on the run's PostgreSQL, started through the
// operator's script (scripts/temporal-server.sh) exactly as the README tells an operator to.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../cli/temporal-dev.ts';
import { findGoBinary } from './go-bins.ts';
import { repoRoot } from './service-process.ts';

const execFileP = promisify(execFile);
const script = path.join(repoRoot, 'scripts', 'temporal-server.sh');

export interface TemporalServer {
  address: string;
  env: NodeJS.ProcessEnv;
  /** Runs `scripts/temporal-server.sh <cmd>` with the server's settings. */
  run(cmd: 'schema' | 'namespace'): Promise<string>;
  output(): string;
  stop(): Promise<void>;
}

export async function startTemporalServer(postgresUrl: string, temporalCli: string): Promise<TemporalServer> {
  if (!findGoBinary('TEMPORAL_SERVER', ['temporal-server', 'server']) || !findGoBinary('TEMPORAL_SQL_TOOL', ['temporal-sql-tool', 'sql'])) {
    throw new Error('the Temporal server is not installed: run `scripts/temporal-server.sh install` (.ci/run does)');
  }
  const pg = new URL(postgresUrl);
  const suffix = randomUUID().replace(/-/g, '').slice(0, 12);
  const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
  // Membership ports are stored in a smallint column: they must be below 32768 (the OS's free ports are not).
  const membership = await lowPorts(4);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    POSTGRES_SEEDS: pg.hostname,
    DB_PORT: pg.port,
    POSTGRES_USER: decodeURIComponent(pg.username),
    POSTGRES_PWD: decodeURIComponent(pg.password),
    DBNAME: `temporal_${suffix}`,
    VISIBILITY_DBNAME: `temporal_vis_${suffix}`,
    BIND_ON_IP: '127.0.0.1',
    FRONTEND_GRPC_PORT: String(ports[0]),
    FRONTEND_HTTP_PORT: String(ports[1]),
    HISTORY_GRPC_PORT: String(ports[2]),
    MATCHING_GRPC_PORT: String(ports[3]),
    WORKER_GRPC_PORT: String(ports[4]),
    FRONTEND_MEMBERSHIP_PORT: String(membership[0]),
    HISTORY_MEMBERSHIP_PORT: String(membership[1]),
    MATCHING_MEMBERSHIP_PORT: String(membership[2]),
    WORKER_MEMBERSHIP_PORT: String(membership[3]),
    PROMETHEUS_ENDPOINT: `127.0.0.1:${await freePort()}`,
    NUM_HISTORY_SHARDS: '4',
    LOG_LEVEL: 'warn',
    TEMPORAL_CLI: temporalCli,
    TEMPORAL_NAMESPACE: 'default',
  };
  const run = async (cmd: 'schema' | 'namespace') => {
    const { stdout, stderr } = await execFileP('bash', [script, cmd], { env, cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
    return stdout + stderr;
  };
  await run('schema');
  let out = '';
  const child: ChildProcess = spawn('bash', [script, 'start'], { env, cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  try {
    await run('namespace');
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`the Temporal server did not come up: ${String(err)}\n${out}`, { cause: err });
  }
  return {
    address: `127.0.0.1:${ports[0]}`,
    env,
    run,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** `n` distinct ports in 20000-32767 that are free now. */
async function lowPorts(n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (out.includes(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) out.push(port);
  }
  return out;
}

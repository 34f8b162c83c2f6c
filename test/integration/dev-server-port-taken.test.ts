// A dev server that cannot start says why: `docgen start` shows what the Temporal CLI printed (here, a port
// another process holds), not only where its log is. The CI run that led here failed on "exited with code 1
// (see .../server.log)", a log nobody could read afterwards.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, startDevServer } from '../../cli/temporal-dev.ts';

describe('the embedded dev server on a port already taken', () => {
  let dir: string;
  let holder: net.Server;
  let port: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgen-devport-'));
    port = await freePort();
    holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((r) => holder?.close(r));
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("fails naming the port and the CLI's own words, and only this start's", async () => {
    const logFile = path.join(dir, 'server.log');
    fs.writeFileSync(logFile, 'Error: a line an earlier start left in the log\n');
    const started = startDevServer({ cli: inject('temporalCli'), port, headless: true, logFile, dbFile: path.join(dir, 'temporal.db') });
    const err = await started.then(
      (server) => server.stop().then(() => new Error('started on a taken port')),
      (e: unknown) => e as Error,
    );
    expect(err.message).toMatch(/the Temporal dev server exited with code 1/);
    expect(err.message).toContain(logFile);
    expect(err.message).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}.*address already in use`));
    expect(err.message).not.toContain('an earlier start');
  });
});

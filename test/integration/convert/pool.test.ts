// The pool's failure handling with real LibreOffice: timeouts, cancellation, crashes, back-pressure,
// and an honest "unavailable" when LibreOffice is missing. One single-instance pool for the file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { rejection } from '../../support/convert-error.ts';
import { killAll } from '../../support/office-processes.ts';
import { longDocx, makeDocx, para, poppler } from './fixtures.ts';

let pool: LibreOfficePool;
const small = makeDocx(para('small document'));
// ~900 pages: LibreOffice needs 6+ s here, so a cancel or the 3 s deadline lands mid-conversion,
// while the small document converts in well under the deadline even on a loaded machine.
const big = longDocx(24000);

/** Polls `check` until it holds; a generous bound, since a loaded machine is slow, not wrong. */
async function until(what: string, check: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what} (${JSON.stringify(pool.status())})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const busy = () => pool.status().instances[0]!.state === 'busy';

const okText = async (): Promise<string> => poppler('pdftotext', await pool.convert(small, { from: 'docx', to: 'pdf' }));

/** Live (not zombie) soffice.bin processes in a process group. */
function sofficeIn(pgid: number): number[] {
  const r = spawnSync('ps', ['-eo', 'pid=,pgid=,stat=,comm='], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => Number(f[1]) === pgid && !f[2]?.startsWith('Z') && f[3] === 'soffice.bin')
    .map((f) => Number(f[0]));
}

beforeAll(async () => {
  pool = new LibreOfficePool({ size: 1, queueLimit: 2, timeoutMs: 3000, log: () => {} });
  await pool.ready();
});

afterAll(async () => {
  await pool.stop();
});

describe('LibreOfficePool', () => {
  it('times out a long conversion, restarts the instance, and converts again', async () => {
    const pid = pool.instancePid(0);
    // What an export killed mid-write leaves (LibreOffice's temporary names no job; whether the kill
    // lands while it exists is luck): the last test finds it gone.
    fs.writeFileSync(path.join(pool.baseDir, 'jobs', '0', 'lu1234abcd.tmp'), 'partial output');
    const e = await rejection(pool.convert(big, { from: 'docx', to: 'pdf' }));
    expect(e.code).toBe('TIMEOUT');
    // The pool's own limit: the document's cost, final (test/integration/convert/fairness.test.ts).
    expect(e.retryable).toBe(false);
    expect(await okText()).toContain('small document');
    expect(pool.instancePid(0)).not.toBe(pid);
    expect(pool.status().instances[0]!.restarts).toBeGreaterThanOrEqual(1);
  });

  it('cancels a running conversion by killing its instance, and a queued one without', async () => {
    const restarts = pool.status().instances[0]!.restarts;
    const running = new AbortController();
    const queued = new AbortController();
    const p1 = pool.convert(big, { from: 'docx', to: 'pdf', signal: running.signal });
    const p2 = pool.convert(small, { from: 'docx', to: 'pdf', signal: queued.signal });
    await until('the first conversion to run and the second to wait', () => busy() && pool.status().queued === 1);
    expect(pool.status()).toMatchObject({ running: 1, queued: 1 });
    queued.abort();
    expect((await rejection(p2)).code).toBe('ABORTED');
    expect(pool.status().instances[0]!.restarts).toBe(restarts);
    running.abort(new Error('activity cancelled'));
    expect((await rejection(p1)).code).toBe('ABORTED');
    expect(await okText()).toContain('small document');
    expect(pool.status().instances[0]!.restarts).toBe(restarts + 1);
  });

  it('rejects an already aborted signal before queueing', async () => {
    await expect(pool.convert(small, { from: 'docx', to: 'pdf', signal: AbortSignal.abort() })).rejects.toThrow();
  });

  it('applies back-pressure: beyond the queue limit convert() rejects at once', async () => {
    const jobs = [0, 1, 2].map(() => pool.convert(small, { from: 'docx', to: 'pdf' }));
    const overflow = await rejection(pool.convert(small, { from: 'docx', to: 'pdf' }));
    expect(overflow.code).toBe('QUEUE_FULL');
    expect(overflow.message).toMatch(/queue is full/);
    const done = await Promise.all(jobs);
    expect(done).toHaveLength(3);
  });

  it('restarts a crashed instance (soffice killed while idle and while converting)', async () => {
    let pgid = pool.instancePid(0)!;
    let pids = sofficeIn(pgid);
    expect(pids.length).toBeGreaterThan(0);
    killAll(pids);
    // The bridge exits with its office, and the pool restarts the instance without being asked.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && !(pool.instancePid(0) !== pgid && pool.status().instances[0]!.state === 'idle')) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(pool.instancePid(0)).not.toBe(pgid);
    expect(pool.status().instances[0]!.lastError).toMatch(/exited/);
    expect(await okText()).toContain('small document');

    const during = pool.convert(big, { from: 'docx', to: 'pdf' });
    // Killed while it works on the big document (6+ s), not before it has started.
    await until('the big conversion to start', busy);
    await new Promise((r) => setTimeout(r, 400));
    pgid = pool.instancePid(0)!;
    pids = sofficeIn(pgid);
    expect(pids.length).toBeGreaterThan(0);
    killAll(pids);
    const e = await rejection(during);
    expect(e.code).toBe('CRASHED');
    expect(await okText()).toContain('small document');
  });

  it('says at once when LibreOffice is not installed, with how to enable it', async () => {
    const missing = new LibreOfficePool({ size: 1, soffice: '/nonexistent/soffice', log: () => {} });
    const e = await rejection(missing.convert(small, { from: 'docx', to: 'pdf' }));
    expect(e.code).toBe('CONVERTER_UNAVAILABLE');
    expect(e.message).toMatch(/not installed.*install-converter\.sh.*GOTENBERG_URL/);
    await expect(missing.ready()).rejects.toThrow(/no converter available/);
    await missing.stop();
  });

  it('leaves no document behind: after the successes, timeouts, cancellations and crashes above, the job directories are empty', async () => {
    await pool.pageCount(small, { from: 'docx' });
    const jobs = path.join(pool.baseDir, 'jobs');
    const left = () => fs.readdirSync(jobs).flatMap((d) => fs.readdirSync(path.join(jobs, d)).map((f) => `${d}/${f}`));
    // Each job's two files are unlinked without waiting; give those a moment.
    for (let i = 0; i < 50 && left().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(fs.readdirSync(jobs)).toEqual(['0']);
    expect(left()).toEqual([]);
  });

  it('leaves no process behind after stop()', async () => {
    const p = new LibreOfficePool({ size: 1, log: () => {} });
    await p.ready();
    const pgid = p.instancePid(0)!;
    expect(sofficeIn(pgid).length).toBe(1);
    await p.stop();
    expect(sofficeIn(pgid)).toEqual([]);
    expect((await rejection(p.convert(small, { from: 'docx', to: 'pdf' }))).code).toBe('SHUTDOWN');
  });
});

// What bounds one tenant's conversions, with real LibreOffice: each instance runs under an address-space
// cap (RLIMIT_AS via prlimit) and still converts; a conversion takes no longer than its caller's budget
// (ConvertOptions.timeoutMs); waiting conversions are served round-robin per tenant.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConvertError, LibreOfficePool } from '../../../converter/index.ts';
import { instanceProcesses } from '../../support/office-processes.ts';
import { longDocx, makeDocx, para } from './fixtures.ts';

const CAP_MB = 1_536;
let pool: LibreOfficePool;

beforeAll(async () => {
  pool = new LibreOfficePool({ size: 1, maxMemoryMb: CAP_MB, timeoutMs: 60_000, log: () => {} });
  await pool.ready();
});
afterAll(async () => {
  await pool?.stop();
});

describe('LibreOffice pool bounds', () => {
  it(`runs every instance under a ${CAP_MB} MB address-space cap, and converts under it`, async () => {
    const pids = instanceProcesses(pool.baseDir, 0);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) {
      const line = fs
        .readFileSync(`/proc/${pid}/limits`, 'utf8')
        .split('\n')
        .find((l) => l.startsWith('Max address space'));
      expect(line, `pid ${pid}`).toMatch(new RegExp(`^Max address space\\s+${CAP_MB * 1024 * 1024}\\s+${CAP_MB * 1024 * 1024}\\s+bytes`));
    }
    const pdf = await pool.convert(makeDocx(para('under the cap')), { from: 'docx', to: 'pdf' });
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
  });

  it("stops a conversion at the caller's budget (timeoutMs), not at the pool's own limit", async () => {
    // The message names the budget that stopped it (1000 ms), not the pool's own limit.
    const err = await pool.convert(longDocx(12_000), { from: 'docx', to: 'pdf', timeoutMs: 1_000 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConvertError);
    expect((err as ConvertError).code).toBe('TIMEOUT');
    expect((err as Error).message).toMatch(/in the 1000 ms its caller had/);
    // The instance was replaced and serves the next caller.
    const pdf = await pool.convert(makeDocx(para('after the timeout')), { from: 'docx', to: 'pdf' });
    expect(pdf.length).toBeGreaterThan(100);
  });

  it('serves waiting conversions round-robin per tenant', async () => {
    const order: string[] = [];
    const doc = (label: string) => makeDocx(para(label));
    const run = (tenant: string, n: number) =>
      pool.convert(doc(`${tenant}${n}`), { from: 'docx', to: 'pdf', tenant }).then(() => order.push(`${tenant}${n}`));
    // Tenant b sends four at once, then tenant a one: a's is the second to run, not the fifth.
    await Promise.all([run('b', 1), run('b', 2), run('b', 3), run('b', 4), run('a', 1)]);
    expect(order).toEqual(['b1', 'a1', 'b2', 'b3', 'b4']);
  });
});

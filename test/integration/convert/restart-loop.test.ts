// A short LibreOffice crash loop (issue 28, section 2): instances killed as they restart, three failed
// starts in a row. The queued conversions wait and run once an instance is up again, new ones are queued
// meanwhile, and the pool reports itself not ready until then; "not available" (CONVERTER_UNAVAILABLE,
// NOT_SUPPORTED to the caller) is only for a LibreOffice that never started (pool.test.ts). Real LibreOffice.
import { describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { instanceProcesses } from '../../support/office-processes.ts';
import { makeDocx, para, poppler } from './fixtures.ts';

const small = makeDocx(para('small document'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LibreOffice killed as it restarts (a short crash loop)', () => {
  it('keeps the queued conversions and takes new ones until an instance is up again; the pool reports not ready meanwhile', async () => {
    const pool = new LibreOfficePool({ size: 1, log: () => {} });
    try {
      await pool.ready();
      const jobs: Promise<Uint8Array>[] = [];
      let notReadySeen = false;
      let failedStarts = 0;
      const t0 = Date.now();
      // Kill every LibreOffice process of the instance as soon as it appears, until three starts in a row
      // have failed (the point where the pool used to declare LibreOffice unavailable), then a little more.
      let enough = 0;
      while (enough === 0 || Date.now() < enough) {
        if (Date.now() - t0 > 60_000) throw new Error('the instance did not fail to start three times');
        for (const pid of instanceProcesses(pool.baseDir, 0, { bridge: true })) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
        const st = pool.status();
        failedStarts = Math.max(failedStarts, st.instances[0]!.failedStarts ?? 0);
        if (!st.ready) notReadySeen = true;
        // Conversions asked for while no instance is up (after the first failed start) wait for one.
        if (failedStarts >= 1 && jobs.length < 4 && !st.ready)
          jobs.push(pool.convert(small, { from: 'docx', to: 'pdf', tenant: `T${jobs.length}` }));
        if (failedStarts >= 3 && enough === 0) enough = Date.now() + 500;
        await sleep(20);
      }
      expect(failedStarts).toBeGreaterThanOrEqual(3);
      expect(notReadySeen).toBe(true);
      expect(jobs.length).toBeGreaterThanOrEqual(2);
      expect(pool.status().queued).toBe(jobs.length);
      // One more after the loop, while the pool waits out its back-off: queued, not refused.
      jobs.push(pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'late' }));
      const pdfs = await Promise.all(jobs);
      for (const pdf of pdfs) expect(poppler('pdftotext', pdf)).toContain('small document');
      expect(pool.status().ready).toBe(true);
    } finally {
      await pool.stop();
    }
  }, 180_000);
});

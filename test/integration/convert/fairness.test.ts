// How the LibreOffice pool shares its instances between subscriptions (issue 25, section 2), with real
// LibreOffice:
// - one subscription holds at most its share of the instances (default all but one), so another finds
//   one free however many conversions the first queues;
// - while another subscription waits (a pool of one), a running conversion gets
//   CONVERTER_CONTENDED_TIMEOUT_MS, and a timed-out conversion is final (the document's cost);
// - a subscription past its budget of LibreOffice time is refused while others use the pool;
// - a document past the cost limits never reaches an instance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibreOfficePool } from '../../../converter/index.ts';
import { rejection } from '../../support/convert-error.ts';
import { numberedParagraphs } from '../../support/costly-office.ts';
import { makeDocx, poolDocs, poppler, until } from './fixtures.ts';

const { small, medium, long } = poolDocs;

describe('a subscription holds at most its share of the instances', () => {
  let pool: LibreOfficePool;
  beforeAll(async () => {
    pool = new LibreOfficePool({ size: 2, log: () => {} });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it('by default all but one: B queues two long conversions, A starts at once on the other instance', async () => {
    expect(pool.perSubscription).toBe(1);
    const bJobs = [0, 1].map(() => pool.convert(medium, { from: 'docx', to: 'pdf', tenant: 'B' }));
    expect(pool.subscriptionUsage('B')).toMatchObject({ running: 1, queued: 1 });
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    // A did not wait for B: it runs next to B's first conversion, B's others wait for B's instance.
    expect(pool.subscriptionUsage('A')).toMatchObject({ running: 1, queued: 0, waitedForOthers: 0 });
    expect(pool.subscriptionUsage('B')).toMatchObject({ running: 1, queued: 1 });
    expect(poppler('pdftotext', await a)).toContain('small document');
    await Promise.all(bJobs);
    expect(pool.subscriptionUsage('B')).toMatchObject({ started: 2, waitedForOthers: 0 });
  }, 180_000);

  it('conversions without a subscription (scripts) use every instance', async () => {
    const jobs = [0, 1].map(() => pool.convert(small, { from: 'docx', to: 'pdf' }));
    expect(pool.status().running).toBe(2);
    await Promise.all(jobs);
  });
});

describe('with one instance', () => {
  let pool: LibreOfficePool;
  beforeAll(async () => {
    pool = new LibreOfficePool({ size: 1, contendedTimeoutMs: 1_000, timeoutMs: 60_000, budgetMs: 600_000, log: () => {} });
    await pool.ready();
  });
  afterAll(async () => {
    await pool?.stop();
  });

  it('a conversion running past CONVERTER_CONTENDED_TIMEOUT_MS is stopped when another subscription waits', async () => {
    const b = pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    await until("B's conversion to run", () => pool.subscriptionUsage('B').running === 1);
    const a = pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    expect(pool.subscriptionUsage('A').waitedForOthers).toBe(1);
    const e = await rejection(b);
    expect(e.code).toBe('TIMEOUT');
    expect(e.setting).toBe('CONVERTER_CONTENDED_TIMEOUT_MS');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(
      /^the conversion ran \d+ ms while another subscription waited for the converter; the limit is 1000 ms then \(CONVERTER_CONTENDED_TIMEOUT_MS\)$/,
    );
    expect(poppler('pdftotext', await a)).toContain('small document');
  }, 120_000);

  it('alone, the same conversion runs to its end', async () => {
    const pdf = await pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    expect(Buffer.from(pdf.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
  }, 120_000);

  it('a job whose caller stops waiting leaves the queue then, without holding anything', async () => {
    const b = pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
    await until("B's conversion to run", () => pool.subscriptionUsage('B').running === 1);
    // Same subscription: not contended; its second job waits behind the first and gives up at 300 ms.
    const e = await rejection(pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'B', timeoutMs: 300 }));
    expect(e.code).toBe('TIMEOUT');
    expect(e.setting).toBeUndefined();
    expect(pool.subscriptionUsage('B')).toMatchObject({ running: 1, queued: 0 });
    await b;
  }, 120_000);

  it('refuses a document past the cost limits before any instance sees it', async () => {
    const started = pool.subscriptionUsage('B').started;
    const e = await rejection(pool.convert(makeDocx(numberedParagraphs(260_000)), { from: 'docx', to: 'pdf', tenant: 'B' }));
    expect(e.code).toBe('TOO_COMPLEX');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/about 5200 pages \(260000 paragraphs\); the limit is 2000 \(TEMPLATE_MAX_PAGES\)$/);
    expect(pool.subscriptionUsage('B').started).toBe(started);
    expect((await rejection(pool.pageCount(makeDocx(numberedParagraphs(260_000)), { from: 'docx' }))).code).toBe('TOO_COMPLEX');
  });
});

describe('time limits', () => {
  it('a conversion past CONVERTER_TIMEOUT_MS is final (the document is too costly), not retryable', async () => {
    const pool = new LibreOfficePool({ size: 1, timeoutMs: 1_000, log: () => {} });
    try {
      const e = await rejection(pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' }));
      expect(e.code).toBe('TIMEOUT');
      expect(e.setting).toBe('CONVERTER_TIMEOUT_MS');
      expect(e.retryable).toBe(false);
      expect(e.message).toBe('the conversion took longer than 1000 ms; the limit is 1000 ms (CONVERTER_TIMEOUT_MS)');
      // The caller's own, shorter deadline is its own: the caller decides (a sync generate answers 504).
      const caller = await rejection(pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B', timeoutMs: 500 }));
      expect(caller.setting).toBeUndefined();
      expect(caller.retryable).toBe(true);
    } finally {
      await pool.stop();
    }
  }, 120_000);
});

describe("a subscription's budget of LibreOffice time", () => {
  it('refuses a subscription past its budget while others use the pool, never one alone', async () => {
    // B's ~450 pages take LibreOffice seconds, A's one page a fraction of the 1.5 s budget.
    const pool = new LibreOfficePool({ size: 1, budgetMs: 1_500, budgetWindowMs: 600_000, contendedTimeoutMs: 60_000, log: () => {} });
    try {
      await pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
      await pool.convert(long, { from: 'docx', to: 'pdf', tenant: 'B' });
      const e = await rejection(pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'B' }));
      expect(e.code).toBe('OVER_BUDGET');
      expect(e.retryable).toBe(false);
      // When B's runs leave the window: within the window, never past it.
      expect(e.retryAfterMs).toBeGreaterThan(0);
      expect(e.retryAfterMs).toBeLessThanOrEqual(600_000);
      expect(e.message).toMatch(
        /^this subscription's conversions used \d+ s of LibreOffice time in the last 600 s while other subscriptions used the converter too; the budget is 1500 ms per 600000 ms \(CONVERTER_SUBSCRIPTION_BUDGET_MS, CONVERTER_BUDGET_WINDOW_MS\); retry in \d+ s$/,
      );
      // A, within its budget, carries on.
      await pool.convert(small, { from: 'docx', to: 'pdf', tenant: 'A' });
    } finally {
      await pool.stop();
    }
    // A budget of 1 ms: any conversion uses it up, so B alone is past it after the first.
    const alone = new LibreOfficePool({ size: 1, budgetMs: 1, log: () => {} });
    try {
      await alone.convert(medium, { from: 'docx', to: 'pdf', tenant: 'B' });
      await alone.convert(small, { from: 'docx', to: 'pdf', tenant: 'B' });
    } finally {
      await alone.stop();
    }
  }, 180_000);
});

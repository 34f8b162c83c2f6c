// The pool's scheduling policy without LibreOffice (converter/pool-policy.ts): shares, the spare as a
// fairness lane, the slice and contended limits, which running conversion yields, and what follows a job on
// its instance (converter/pool-job.ts afterJob).
import { describe, expect, it } from 'vitest';
import { afterJob, type PoolJob } from '../../../converter/pool-job.ts';
import {
  contention,
  limitOf,
  mayBorrow,
  mayStart,
  mayTakeSpare,
  type PolicySettings,
  type Running,
} from '../../../converter/pool-policy.ts';

const settings: PolicySettings = { perSubscription: 2, timeoutMs: 120_000, contendedTimeoutMs: 30_000, sliceMs: 2_000 };
const run = (tenant: string, startedAt: number, stopped = false): Running => ({ tenant, startedAt, stopped });
/** Recent time: the given decayed time plus the running conversions' time so far, as the accounting counts. */
const recent = (base: Record<string, number>, running: Running[]) => (t: string, now: number) =>
  (base[t] ?? 0) + running.filter((r) => r.tenant === t).reduce((ms, r) => ms + now - r.startedAt, 0);

describe('mayStart', () => {
  it('lets a subscription start while it holds fewer instances than its share; scripts are not capped', () => {
    const running = [run('a', 0), run('a', 0), run('b', 0)];
    expect(mayStart(settings, running, 'a')).toBe(false);
    expect(mayStart(settings, running, 'b')).toBe(true);
    expect(mayStart(settings, [run('', 0), run('', 0)], '')).toBe(true);
  });
});

describe('mayBorrow', () => {
  it('lends an instance beyond the share only for a short job, while no other subscription waits, where a spare answers newcomers', () => {
    expect(mayBorrow(true, false, true)).toBe(true);
    expect(mayBorrow(false, false, true)).toBe(false);
    expect(mayBorrow(true, true, true)).toBe(false);
    expect(mayBorrow(true, false, false)).toBe(false);
  });
});

describe('mayTakeSpare', () => {
  it('gives the spare to a subscription lighter than every holder, never to a holder', () => {
    const rank = (t: string) => ({ a: 10_000, b: 50, c: 20_000 })[t] ?? 0;
    const running = [run('a', 0), run('c', 0)];
    expect(mayTakeSpare(settings, running, ['a', 'c'], rank, 'b')).toBe(true);
    expect(mayTakeSpare(settings, running, ['a', 'c'], rank, 'a')).toBe(false);
    // Lighter than one holder only: it waits.
    expect(mayTakeSpare(settings, running, ['a', 'c'], (t) => (t === 'b' ? 15_000 : rank(t)), 'b')).toBe(false);
  });
});

describe('limitOf', () => {
  it('is the slice once the running subscription used more than a waiting one, else the contended limit', () => {
    const a = run('heavy', 1_000);
    const r = recent({ heavy: 5_000, light: 100 }, [a]);
    expect(limitOf(settings, a, ['light'], 1_500, r)).toEqual({ at: 3_000, why: 'slice' });
    // The waiting one used more: the slice applies only from when the running one has caught up.
    const r2 = recent({ heavy: 0, light: 40_000 }, [a]);
    expect(limitOf(settings, a, ['light'], 1_500, r2)).toEqual({ at: 31_000, why: 'contended' });
  });

  it('has no limit when neither is shorter than the pool timeout', () => {
    const loose = { ...settings, contendedTimeoutMs: 120_000, sliceMs: 120_000 };
    expect(limitOf(loose, run('a', 0), ['b'], 10, () => 0).at).toBe(Infinity);
  });
});

describe('contention', () => {
  it('stops the longest-running conversion past its limit, one per waiting subscription', () => {
    const old = run('heavy', 0);
    const young = run('heavy', 4_000);
    const running = [young, old];
    const { stop, nextAt } = contention({ ...settings, perSubscription: 3 }, ['light'], running, 0, 5_000, recent({ light: 0 }, running));
    expect(stop).toEqual([{ run: old, why: 'slice' }]);
    expect(nextAt).toBe(6_000);
  });

  it('stops nothing while an instance restarting will take the waiting one, or for a subscription over its share', () => {
    const running = [run('heavy', 0)];
    expect(contention(settings, ['light'], running, 1, 50_000, () => 0).stop).toEqual([]);
    const full = [run('a', 0), run('a', 0)];
    expect(contention(settings, ['a'], full, 0, 50_000, () => 0)).toEqual({ stop: [], nextAt: Infinity });
  });

  it('skips conversions already being stopped and those of the waiting subscription itself', () => {
    const stopped = run('heavy', 0, true);
    const own = run('light', 0);
    expect(contention(settings, ['light'], [stopped, own], 0, 50_000, () => 0).stop).toEqual([]);
  });
});

describe('afterJob (converter/pool-job.ts)', () => {
  const job = (embedsFonts?: true) => ({ id: 1, embedsFonts }) as unknown as PoolJob;

  it('promotes a spare only when the pool stopped the job by a time limit; a crash restarts in place', () => {
    expect(afterJob(job(), 'conversion 1 exceeded 10 ms', true, 3, 1000)).toEqual({
      promoteSpare: true,
      restart: 'conversion 1 exceeded 10 ms',
    });
    expect(afterJob(job(), 'crashed', false, 3, 1000)).toEqual({ promoteSpare: false, restart: 'crashed' });
  });

  it('restarts after a document with embedded fonts (a spare takes over), and recycles after its share', () => {
    expect(afterJob(job(true), null, false, 3, 1000)).toEqual({ promoteSpare: true, restart: expect.stringContaining('embedded fonts') });
    expect(afterJob(job(), null, false, 1000, 1000)).toEqual({ promoteSpare: false, restart: 'recycling after 1000 conversions' });
    expect(afterJob(job(), null, false, 999, 1000)).toEqual({ promoteSpare: false, restart: null });
  });
});

// How a batch's pages are cut into chunks (core/batch.ts chunkPages), as the workflow starts them one after
// another: every page once and in order, long batches in few chunks, the window full to the end.
import { describe, expect, it } from 'vitest';
import { chunkPages } from '../../../core/batch.ts';

/** The chunks (their page counts) the workflow starts for `pages` pages. */
function schedule(pages: number, window: number, maxPages?: number): number[] {
  const out: number[] = [];
  for (let next = 0; next < pages;) {
    const n = chunkPages(pages - next, window, maxPages);
    out.push(n);
    next += n;
  }
  return out;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('chunkPages', () => {
  it('takes one page a chunk without a maximum (runs started before chunks grew) or with a maximum of 1', () => {
    expect(schedule(40, 8)).toEqual(Array(40).fill(1));
    expect(schedule(40, 8, 1)).toEqual(Array(40).fill(1));
  });

  it("cuts a long batch into chunks of the maximum, then a window's share of what is left, ending on one-page chunks", () => {
    const chunks = schedule(2000, 8, 4);
    expect(sum(chunks)).toBe(2000);
    expect(chunks.length).toBeLessThan(2000 / 4 + 20);
    expect(chunks.every((n) => n >= 1 && n <= 4)).toBe(true);
    // Never growing again once it shrinks, and the last window's worth one page each.
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]).toBeLessThanOrEqual(chunks[i - 1]!);
    expect(chunks.slice(-8)).toEqual(Array(8).fill(1));
  });

  it('keeps a short batch in one-page chunks, so every chunk of the window has work', () => {
    expect(schedule(8, 8, 4)).toEqual(Array(8).fill(1));
    expect(schedule(3, 8, 4)).toEqual([1, 1, 1]);
    expect(schedule(1, 1, 4)).toEqual([1]);
    // 40 pages, a window of 8: what is started before the first chunk ends (8 chunks) is every page's
    // share, not all of them.
    const chunks = schedule(40, 8, 4);
    expect(sum(chunks)).toBe(40);
    expect(sum(chunks.slice(0, 8))).toBeLessThan(40);
    expect(chunks[0]).toBe(4);
  });

  it('takes the whole batch in one chunk only when the window is 1 and the batch fits the maximum', () => {
    expect(schedule(3, 1, 4)).toEqual([3]);
    expect(schedule(10, 1, 4)).toEqual([4, 4, 2]);
  });
});

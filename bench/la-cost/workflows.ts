// Workflows of bench/la-cost/run.ts: n no-op local activities, one after another or two at a time.
import { proxyLocalActivities } from '@temporalio/workflow';

const la = proxyLocalActivities<{ noop(): Promise<number> }>({ startToCloseTimeout: '10 seconds' });

export async function sequential(n: number): Promise<number> {
  let s = 0;
  for (let i = 0; i < n; i++) s += await la.noop();
  return s;
}

export async function pairs(n: number): Promise<number> {
  let s = 0;
  for (let i = 0; i < n; i += 2) s += (await Promise.all([la.noop(), la.noop()])).reduce((a, b) => a + b, 0);
  return s;
}

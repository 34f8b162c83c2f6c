// Workflows of bench/la-cost/run.ts: no-op steps in the shapes docgen's workflows have, with nothing of
// docgen in them.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

type Noop = { noop(): Promise<number> };
const la = proxyLocalActivities<Noop>({ startToCloseTimeout: '10 seconds' });
const activity = proxyActivities<Noop>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 1 } });

/** n local activities one after another (a sync docx generate is 2: prepareGeneration, writeAndRecord; a
 *  sync pdf generate 3, with the conversion between them). */
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

/** A conversion as a normal activity between two local activities, as in an async pdf generate (office
 *  queue). A sync pdf generate converts in a local activity: three in a row, the shape of `callback`. */
export async function pdf(): Promise<number> {
  return (await la.noop()) + (await activity.noop()) + (await la.noop());
}

/** An async docx generate: two local activities, then the callback attempt, a local activity too
 *  (workflows/callback.ts). */
export async function callback(): Promise<number> {
  return (await la.noop()) + (await la.noop()) + (await la.noop());
}

/** The same before its callback attempts became local activities: the attempt as a normal activity. */
export async function callbackActivity(): Promise<number> {
  return (await la.noop()) + (await la.noop()) + (await activity.noop());
}

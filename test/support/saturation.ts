// One tenant's ordinary pdf traffic while another tries to hold the converter (issue 25, section 2): a
// small sync pdf generate at a steady pace, each timed from its request to its answer. Shared by
// test/integration/saturation.test.ts and bench/saturation.ts.
import { performance } from 'node:perf_hooks';
import { makeDocx, para } from '../integration/convert/fixtures.ts';
import { type client, generateBody } from './http.ts';

export interface Sample {
  status: number;
  ms: number;
  code?: string;
}

/** Sends one small pdf generate every `everyMs` (or back to back when a request takes longer) until
 *  `until()` says stop and at least `min` were sent. */
export async function pdfTraffic(
  api: ReturnType<typeof client>,
  opts: { everyMs: number; min: number; until: () => boolean },
): Promise<Sample[]> {
  const template = makeDocx(para('Hello {name}'));
  const samples: Sample[] = [];
  while (!opts.until() || samples.length < opts.min) {
    const started = performance.now();
    const t = await api.upload('template', [{ name: 'a.docx', bytes: template }]);
    const d = await api.upload('data', [{ name: 'a.json', bytes: JSON.stringify({ name: 'A' }) }]);
    const t0 = performance.now();
    const g = await api.call('POST', '/documents/document/generate', {
      json: generateBody(t.body.result.data.files[0].id, d.body.result.data.files[0].id, { document: { fileFormat: 'pdf' } }),
    });
    samples.push({
      status: g.status,
      ms: performance.now() - t0,
      ...(g.status === 201 ? {} : { code: g.body?.error?.innerErrors?.[0]?.code }),
    });
    const wait = opts.everyMs - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return samples;
}

/** The q-quantile (nearest rank) of the times, rounded to the millisecond. */
export function quantile(ms: number[], q: number): number {
  const s = [...ms].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * q) - 1))] ?? 0);
}

export function summary(samples: Sample[]): { n: number; ok: number; p50: number; p95: number; statuses: Record<string, number> } {
  const statuses: Record<string, number> = {};
  for (const s of samples)
    statuses[`${s.status}${s.code ? ` ${s.code}` : ''}`] = (statuses[`${s.status}${s.code ? ` ${s.code}` : ''}`] ?? 0) + 1;
  const ms = samples.map((s) => s.ms);
  return {
    n: samples.length,
    ok: samples.filter((s) => s.status === 201).length,
    p50: quantile(ms, 0.5),
    p95: quantile(ms, 0.95),
    statuses,
  };
}

// Shared by the batch tests.
import { expect } from 'vitest';
import type { client } from '../../support/http.ts';

type Api = ReturnType<typeof client>;

/** Polls GET /documents/batch/{id} until the batch has ended; its progress then. */
export async function waitForBatch(api: Api, id: string, timeoutMs = 90_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api.call('GET', `/documents/batch/${id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const b = r.body.result.data.batch;
    if (b.status !== 'running' && b.status !== 'cancelling') return b;
    if (Date.now() > deadline) throw new Error(`batch ${id} still running: ${JSON.stringify(b)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

// Shared by the DriveA end-to-end suites: the fake Microsoft Graph, a stack pointed at it, and the
// connection of a subscription.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { client } from '../../support/http.ts';
import { makeDocx } from '../convert/fixtures.ts';
import { para } from '../convert/fixtures.ts';
import type { GraphFake } from '../../fakes/graph/server.ts';

/** Drive ids as SharePoint spells them (with "!"), so the driveId!itemId form is exercised for real. */
export const DRIVE_A = 'b!drive-a!tenant';
export const DRIVE_B = 'b!drive-b!tenant';

export async function connect(api: ReturnType<typeof client>, fake: GraphFake, over: Record<string, unknown> = {}) {
  const res = await api.call('PUT', '/common/connection/driveA', {
    json: { connection: { tenantId: fake.tenantId, clientId: fake.clientId, clientSecret: fake.clientSecret, driveId: DRIVE_A, ...over } },
  });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res;
}

/** A docx template whose output is over 10 MB: an incompressible part rides along unchanged (with a PNG's
 *  signature: an image part whose bytes are no known image is emptied by the sanitizer every output passes). */
export function bigTemplate(bytes = 10 * 1024 * 1024 + 4321): Uint8Array {
  const filler = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(bytes - 8)]);
  return makeDocx({ body: para('Big report for {name}'), extra: { 'word/media/filler.png': filler } });
}

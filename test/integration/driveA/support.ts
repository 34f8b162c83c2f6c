// Shared by the DriveA end-to-end suites: the fake Microsoft Graph, a stack pointed at it, and the
// connection of a subscription.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { client } from '../../support/http.ts';
import { makeDocx } from '../convert/fixtures.ts';
import { para, pngFile } from '../convert/fixtures.ts';
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

/** A docx template whose output is over 10 MB: an incompressible image part rides along unchanged (a real
 *  PNG of random grey pixels, stored without compression: an image part whose bytes are no known image is
 *  emptied by the sanitizer every output passes, and the cost check reads its dimensions). */
export function bigTemplate(bytes = 10 * 1024 * 1024 + 4321): Uint8Array {
  const width = 2048;
  const rows = Math.ceil(bytes / (width + 1));
  const raw = randomBytes(rows * (width + 1));
  for (let r = 0; r < rows; r++) raw[r * (width + 1)] = 0; // each row's filter byte: none
  const filler = pngFile(width, rows, 8, 0, raw, 0);
  return makeDocx({ body: para('Big report for {name}'), extra: { 'word/media/filler.png': filler } });
}

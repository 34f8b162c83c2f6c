// A live upload's record in stored_files, with no bytes behind it: for tests and benches of the store's
// statements (store/files.ts).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../store/db.ts';
import { insertFile } from '../../store/files.ts';

export function uploadRecord(
  db: Queryable,
  subscriptionId: string,
  ownerId: string,
  kind: 'template' | 'data',
  expiresDate: Date | null = null,
) {
  return insertFile(db, {
    id: randomUUID(),
    subscriptionId,
    ownerId,
    kind,
    fileName: kind === 'data' ? 'd.json' : 't.docx',
    path: '',
    contentType: 'application/octet-stream',
    size: 1,
    sha256: 'x',
    blobKey: `k/${randomUUID()}`,
    expiresDate,
  });
}

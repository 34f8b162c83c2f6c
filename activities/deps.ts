import type { BlobStore } from '../connectors/storage/blob-store.ts';
import type { Db } from '../store/db.ts';

/** What activities need from the process that hosts them. */
export interface ActivityDeps {
  db: Db;
  blobs: BlobStore;
}

// The claim check: what steps hand each other instead of bytes. The bytes live in the blob store
// (connectors/storage); workflows, activities and locations pass these references around.

/** A file in the blob store. Never document bytes in a Temporal payload: this instead. */
export interface BlobRef {
  key: string;
  sha256: string;
  size: number;
  contentType: string;
}

// The merged document a merge step just wrote, kept in this process for the step that reads it next on the
// same worker: the count started ahead (activities/groups.ts CountsAhead) or the conversion of a sync
// generate, which run right after it in the same workflow task. They take the very array the merge thread
// returned, so it still carries its vetted mark (converter/vetted.ts): the converter does not sanitize and
// cost-check it again, and the file is not read back. Keyed by the blob's key and checksum, so a step takes
// only the bytes its reference names; a step elsewhere (another worker, an attempt after the first took
// them, a run replayed later) reads the blob as before. Nothing of it is durable: a cache of a file's bytes,
// bounded in count, size and time.
import type { BlobRef } from '../core/blob.ts';

/** At most this many documents, this many bytes in all, each for this long. */
const MAX_ENTRIES = 16;
const MAX_BYTES = 32 * 1024 * 1024;
const KEEP_MS = 60_000;

const held = new Map<string, { bytes: Uint8Array; timer: NodeJS.Timeout }>();
let heldBytes = 0;

const keyOf = (ref: Pick<BlobRef, 'key' | 'sha256'>) => `${ref.key}\n${ref.sha256}`;

/** Keeps `bytes` (the content of `ref`) for the next step that reads `ref` in this process. */
export function holdBytes(ref: Pick<BlobRef, 'key' | 'sha256'>, bytes: Uint8Array): void {
  if (!ref.sha256 || bytes.byteLength > MAX_BYTES / 4) return;
  const key = keyOf(ref);
  drop(key);
  while (held.size >= MAX_ENTRIES || (held.size > 0 && heldBytes + bytes.byteLength > MAX_BYTES)) drop(held.keys().next().value!);
  const timer = setTimeout(() => drop(key), KEEP_MS);
  timer.unref();
  held.set(key, { bytes, timer });
  heldBytes += bytes.byteLength;
}

/** The bytes held for `ref` (once: they are no longer held after), or undefined. */
export function takeHeld(ref: Pick<BlobRef, 'key' | 'sha256'>): Uint8Array | undefined {
  const key = keyOf(ref);
  const found = held.get(key);
  drop(key);
  return found?.bytes;
}

function drop(key: string): void {
  const found = held.get(key);
  if (!found) return;
  clearTimeout(found.timer);
  held.delete(key);
  heldBytes -= found.bytes.byteLength;
}

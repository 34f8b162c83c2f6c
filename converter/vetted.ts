// Documents this process has already judged as the converter would: sanitized (sanitize.ts) and held to the
// cost limits (engine/cost.ts), with what those passes found. The merge (activities/merge-pool.ts) does both
// to every document it makes, in its thread, before the document leaves it; the converter then takes the
// same bytes without parsing them twice. Keyed by the array itself (a WeakMap): only bytes this process
// received from its own merge carry a mark, and a copy, a download or a request body never does.
export interface Vetted {
  /** Estimated pages (engine/cost.ts), when the estimate could read the package. */
  pages?: number;
  /** The package carries fonts of its own (sanitize.ts SanitizeResult.embedsFonts). */
  embedsFonts: boolean;
}

const vetted = new WeakMap<Uint8Array, Vetted>();

/** Marks `bytes` as sanitized and cost-checked with these findings. */
export function markVetted(bytes: Uint8Array, facts: Vetted): Uint8Array {
  vetted.set(bytes, facts);
  return bytes;
}

/** What the sanitizer and the estimate found when `bytes` were vetted, or undefined when they were not. */
export function vettedOf(bytes: Uint8Array): Vetted | undefined {
  return vetted.get(bytes);
}

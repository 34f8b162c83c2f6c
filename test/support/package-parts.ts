// The merge judges a render's parts before they are zipped (activities/merge-thread.ts: sanitizeParts and the
// cost estimate over OutEntry[]); the converter judges bytes (sanitizeOoxml, conversionCost of a package).
// These helpers run both on the same package and expect the same judgement, so that every case of the
// sanitizer's and the estimate's tests holds for both readings.
import { expect } from 'vitest';
import { sanitizeOoxml, type SanitizeResult, sanitizeParts } from '../../converter/sanitize.ts';
import { checkConversionCost, type ConversionCost, conversionCost } from '../../engine/cost.ts';
import type { TemplateLimits } from '../../engine/limits.ts';
import { inflateEntry, type OutEntry, outEntryData, readZip } from '../../engine/zip.ts';

/** A package's parts as a render holds them: every other part in hand (inflated), the rest as the
 *  package's compressed entries. Undefined when the bytes are no zip the engine reads. */
export function partsOf(bytes: Uint8Array): OutEntry[] | undefined {
  let entries;
  try {
    entries = [...readZip(bytes, { maxParts: 100_000, maxPartBytes: 2 ** 31, maxTotalBytes: 2 ** 40, maxRatio: 2 ** 31 }).values()];
  } catch {
    return undefined;
  }
  return entries.map((entry, i) => {
    if (i % 2 === 1) return { name: entry.name, entry };
    try {
      return { name: entry.name, data: inflateEntry(entry) };
    } catch {
      return { name: entry.name, entry };
    }
  });
}

function attempt<T>(f: () => T): T | Error {
  try {
    return f();
  } catch (e) {
    return e as Error;
  }
}

const contents = (parts: OutEntry[]) => new Map(parts.map((e) => [e.name, Buffer.from(outEntryData(e)).toString('base64')]));

/** sanitizeOoxml, after checking that sanitizeParts over the same package's parts judges it the same way
 *  (the same refusal, or the same removals and the same parts). */
export function sanitizeBothWays(bytes: Uint8Array, format: string): SanitizeResult {
  const whole = attempt(() => sanitizeOoxml(bytes, format));
  const parts = partsOf(bytes);
  // Twice over the same parts: the package's entries are judged once and their verdicts given again (as a
  // template's own parts are in every merge of it), which must change nothing, a refusal included.
  for (const round of parts ? ['first', 'again'] : []) {
    const judged = attempt(() => sanitizeParts(parts!, format));
    if (whole instanceof Error) {
      expect(judged, `sanitizeParts (${round}) accepts what sanitizeOoxml refuses`).toBeInstanceOf(Error);
      expect((judged as Error).message, round).toBe(whole.message);
    } else {
      if (judged instanceof Error) throw new Error(`sanitizeParts (${round}) refuses what sanitizeOoxml accepts: ${judged.message}`);
      expect(judged.removed, round).toEqual(whole.removed);
      expect(judged.embedsFonts, round).toBe(whole.embedsFonts);
      expect(judged.entries === undefined, 'both leave the package as it is, or neither').toBe(whole.bytes === bytes);
      expect(contents(judged.entries ?? parts!), round).toEqual(contents(partsOf(whole.bytes) ?? []));
    }
  }
  if (whole instanceof Error) throw whole;
  return whole;
}

/** conversionCost of the bytes, after checking that the estimate over the package's parts is the same. */
export function costBothWays(bytes: Uint8Array, limits?: Partial<TemplateLimits>): ConversionCost {
  const whole = conversionCost(bytes, limits);
  const parts = partsOf(bytes);
  // Twice: the second reads the entries' own cost as the first left it.
  if (parts) for (const round of ['first', 'again']) expect(conversionCost(parts, limits), round).toEqual(whole);
  return whole;
}

/** checkConversionCost of the bytes, after checking that the parts' check passes or refuses the same way. */
export function checkCostBothWays(bytes: Uint8Array, limits?: Partial<TemplateLimits>): ConversionCost {
  const whole = attempt(() => checkConversionCost(bytes, limits));
  const parts = partsOf(bytes);
  if (parts)
    for (const round of ['first', 'again']) {
      const judged = attempt(() => checkConversionCost(parts, limits));
      if (whole instanceof Error) expect((judged as Error).message, round).toBe(whole.message);
      else expect(judged, round).toEqual(whole);
    }
  if (whole instanceof Error) throw whole;
  return whole;
}

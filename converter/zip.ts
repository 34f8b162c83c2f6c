/**
 * The converter's view of zip packages: a thin layer over the engine's zip code (engine/zip.ts), which
 * does the reading (defensive: entry count, sizes and ratio capped while inflating, unsafe names,
 * encryption and duplicates refused) and the writing. This layer keeps the converter's shapes (an array
 * of entries, string contents) and turns package errors into ConvertError BAD_INPUT.
 */
import { TemplateError } from '../engine/errors.ts';
import {
  DEFAULT_LIMITS,
  entryBytes,
  inflateEntry,
  makeEntry as makeDeflatedEntry,
  readZip as readPackage,
  writeZip as writePackage,
  type ZipEntry,
  type ZipLimits,
} from '../engine/zip.ts';
import { ConvertError } from './errors.ts';

export type { ZipEntry } from '../engine/zip.ts';

/** The one package policy (engine/limits.ts), shared with the template engine. */
export type { ZipLimits } from '../engine/zip.ts';
export const DEFAULT_ZIP_LIMITS: ZipLimits = DEFAULT_LIMITS;

function asConvertError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof TemplateError)
      throw new ConvertError('BAD_INPUT', `invalid zip package: ${err.errors.map((e) => e.message).join('; ')}`);
    throw err;
  }
}

export function readZip(bytes: Uint8Array, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  return asConvertError(() => [...readPackage(bytes, limits).values()]);
}

/** Inflates one entry, enforcing its declared size (a lying header cannot inflate past it). `shared`: the
 *  bytes kept with the entry (engine/zip.ts entryBytes), to read and never to write to. */
export function entryData(e: ZipEntry, shared = false): Uint8Array {
  return asConvertError(() => (shared ? entryBytes(e) : inflateEntry(e)));
}

export function entryText(e: ZipEntry): string {
  return new TextDecoder('utf-8').decode(entryData(e));
}

/** A new entry from content (deflated) — for parts the sanitizer rewrote or added. */
export function makeEntry(name: string, content: Uint8Array | string): ZipEntry {
  return makeDeflatedEntry(name, typeof content === 'string' ? new TextEncoder().encode(content) : content);
}

/** Writes entries in order; unchanged entries keep their compressed bytes (no re-deflate). */
export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  return writePackage(entries.map((entry) => ({ name: entry.name, entry })));
}

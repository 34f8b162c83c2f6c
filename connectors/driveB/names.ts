// DriveB names: a document's Drive name, the numbered names of the rename policy, a write's temporary name.
import { isNativeFormat, outputFileName } from '../../core/formats.ts';

export type Conflict = 'rename' | 'replace' | 'fail';

/** The Drive name of a document: native files carry no extension. */
export function driveName(name: string, fileFormat: string): string {
  return isNativeFormat(fileFormat) ? name : outputFileName(name, fileFormat);
}

export function numbered(name: string, n: number, native: boolean): string {
  const dot = name.lastIndexOf('.');
  if (native || dot <= 0) return `${name} (${n})`;
  return `${name.slice(0, dot)} (${n})${name.slice(dot)}`;
}

/** The temporary name of a write's file until its name is allocated (native files carry no extension). */
export function temporaryName(urn: string, fileFormat: string): string {
  const base = `.docgen-${urn.replace(/[^A-Za-z0-9-]/g, '')}`;
  return isNativeFormat(fileFormat) ? base : `${base}.${fileFormat}`;
}

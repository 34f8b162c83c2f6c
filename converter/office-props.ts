/**
 * `data.embedded` for office outputs: custom document properties in docProps/custom.xml (what Word,
 * Excel and PowerPoint show under File > Properties > Custom), written straight into the package so a
 * same-format output needs no LibreOffice round trip (which would re-layout the document).
 */
import { customPropsParts } from '../engine/docprops.ts';
import { entryText, makeEntry, readZip, writeZip } from './zip.ts';
import type { ZipEntry } from './zip.ts';

const CUSTOM_PART = 'docProps/custom.xml';

export function setOfficeCustomProperties(input: Uint8Array, props: Record<string, string>): Uint8Array {
  if (Object.keys(props).length === 0) return input;
  const entries = readZip(input);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const parts = customPropsParts((name) => {
    const e = byName.get(name);
    return e ? entryText(e) : undefined;
  }, props);
  const out: ZipEntry[] = entries.map((e) => {
    const text = parts.get(e.name);
    return text === undefined ? e : makeEntry(e.name, text);
  });
  for (const [name, text] of parts) if (!byName.has(name)) out.push(makeEntry(name, text));
  return writeZip(out);
}

/** Reads docProps/custom.xml back (tests, and callers that want to show the metadata). */
export function readOfficeCustomProperties(input: Uint8Array): Record<string, string> {
  const e = readZip(input).find((x) => x.name === CUSTOM_PART);
  const out: Record<string, string> = {};
  if (!e) return out;
  const unesc = (s: string): string =>
    s
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&');
  for (const m of entryText(e).matchAll(/<property\b[^>]*\bname\s*=\s*"([^"]*)"[^>]*>\s*<vt:\w+>([\s\S]*?)<\/vt:\w+>/g)) {
    out[unesc(m[1]!)] = unesc(m[2]!);
  }
  return out;
}

/**
 * `data.embedded` for office outputs: custom document properties in docProps/custom.xml (what Word,
 * Excel and PowerPoint show under File > Properties > Custom), written straight into the package so a
 * same-format output needs no LibreOffice round trip (which would re-layout the document).
 */
import { entryText, makeEntry, readZip, writeZip } from './zip.ts';
import type { ZipEntry } from './zip.ts';

const CUSTOM_PART = 'docProps/custom.xml';
const CUSTOM_CT = 'application/vnd.openxmlformats-officedocument.custom-properties+xml';
const CUSTOM_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties';
const FMTID = '{D5CDD505-2E9C-101B-9397-08002B2CF9AE}';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function setOfficeCustomProperties(input: Uint8Array, props: Record<string, string>): Uint8Array {
  const names = Object.keys(props);
  if (!names.length) return input;
  const entries = readZip(input);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const replace = new Map<string, string>();

  const existing = byName.get(CUSTOM_PART);
  let kept: string[] = [];
  let maxPid = 1;
  if (existing) {
    for (const m of entryText(existing).matchAll(/<property\b[^>]*>[\s\S]*?<\/property>/g)) {
      const name = /\bname\s*=\s*"([^"]*)"/.exec(m[0])?.[1];
      const pid = Number(/\bpid\s*=\s*"(\d+)"/.exec(m[0])?.[1] ?? 0);
      if (name !== undefined && names.includes(name.replace(/&amp;/g, '&'))) continue;
      maxPid = Math.max(maxPid, pid);
      kept.push(m[0]);
    }
  } else {
    const ct = byName.get('[Content_Types].xml');
    if (ct) replace.set(ct.name, entryText(ct).replace(/<\/Types>\s*$/, `<Override PartName="/${CUSTOM_PART}" ContentType="${CUSTOM_CT}"/></Types>`));
    const rels = byName.get('_rels/.rels');
    if (rels) replace.set(rels.name, entryText(rels).replace(/<\/Relationships>\s*$/, `<Relationship Id="rIdDocgenCustomProps" Type="${CUSTOM_REL}" Target="${CUSTOM_PART}"/></Relationships>`));
  }
  const added = names.map((n, i) => `<property fmtid="${FMTID}" pid="${maxPid + 1 + i}" name="${esc(n)}"><vt:lpwstr>${esc(props[n]!)}</vt:lpwstr></property>`);
  kept = [...kept, ...added];
  replace.set(CUSTOM_PART,
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
    '<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" ' +
    `xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">${kept.join('')}</Properties>`);

  const out: ZipEntry[] = entries.map((e) => {
    const t = replace.get(e.name);
    return t === undefined ? e : makeEntry(e.name, t);
  });
  if (!existing) out.push(makeEntry(CUSTOM_PART, replace.get(CUSTOM_PART)!));
  return writeZip(out);
}

/** Reads docProps/custom.xml back (tests, and callers that want to show the metadata). */
export function readOfficeCustomProperties(input: Uint8Array): Record<string, string> {
  const e = readZip(input).find((x) => x.name === CUSTOM_PART);
  const out: Record<string, string> = {};
  if (!e) return out;
  const unesc = (s: string): string => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  for (const m of entryText(e).matchAll(/<property\b[^>]*\bname\s*=\s*"([^"]*)"[^>]*>\s*<vt:\w+>([\s\S]*?)<\/vt:\w+>/g)) {
    out[unesc(m[1]!)] = unesc(m[2]!);
  }
  return out;
}

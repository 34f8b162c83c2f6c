import { unzipText } from './helpers.ts';

/**
 * Structural checks an Office application makes when it opens a package: every part has a content
 * type, every internal relationship points at a part that exists, and every relationship id a part
 * uses is declared in its relationships. Returns the problems (empty when the package is sound).
 */
export function packageProblems(bytes: Uint8Array): string[] {
  const files = unzipText(bytes);
  const problems: string[] = [];
  const ct = files.get('[Content_Types].xml') ?? '';
  const defaults = new Set([...ct.matchAll(/<Default\b[^>]*Extension="([^"]+)"/g)].map((m) => (m[1] ?? '').toLowerCase()));
  const overrides = [...ct.matchAll(/<Override\b[^>]*PartName="\/([^"]+)"/g)].map((m) => m[1] ?? '');
  for (const o of overrides) if (!files.has(o)) problems.push(`content type override for missing part ${o}`);
  for (const name of files.keys()) {
    if (name === '[Content_Types].xml') continue;
    const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
    if (!overrides.includes(name) && !defaults.has(ext)) problems.push(`no content type for ${name}`);
  }
  for (const [name, xml] of files) {
    const m = /^(.*?)_rels\/([^/]+)\.rels$/.exec(name);
    if (m === null) continue;
    const dir = m[1] ?? '';
    const part = `${dir}${m[2] ?? ''}`;
    if (part !== '' && !files.has(part)) problems.push(`relationships for missing part ${part}`);
    const ids = new Set<string>();
    for (const r of xml.matchAll(/<Relationship\b[^>]*>/g)) {
      const id = /\sId="([^"]+)"/.exec(r[0])?.[1] ?? '';
      if (ids.has(id)) problems.push(`${name}: duplicate id ${id}`);
      ids.add(id);
      if (/TargetMode="External"/.test(r[0])) continue;
      const target = /\sTarget="([^"]+)"/.exec(r[0])?.[1] ?? '';
      const segs = target.startsWith('/') ? [] : dir.split('/').filter((s) => s !== '');
      for (const s of target.split('/')) {
        if (s === '' || s === '.') continue;
        if (s === '..') segs.pop();
        else segs.push(s);
      }
      const resolved = segs.join('/');
      if (!files.has(resolved)) problems.push(`${name}: ${id} points at missing ${resolved}`);
    }
    const partXml = files.get(part);
    if (partXml !== undefined) {
      for (const u of partXml.matchAll(/\sr:(?:id|embed|link|pict)="([^"]+)"/g)) {
        if (!ids.has(u[1] ?? '')) problems.push(`${part}: uses undeclared relationship ${u[1]}`);
      }
    }
  }
  return problems;
}

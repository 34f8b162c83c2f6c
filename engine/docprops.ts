import type { CompileSpec } from './compile.ts';
import type { LexOptions } from './lexer.ts';
import type { OpcPackage } from './package.ts';
import { decodeXml, escapeXml, getAttr } from './xml.ts';

/** Document properties: tags in title/subject/custom properties, and custom metadata output. */

const PROPS_TEXT = new Set([
  'dc:title',
  'dc:subject',
  'dc:creator',
  'dc:description',
  'cp:keywords',
  'cp:category',
  'cp:contentStatus',
  'cp:lastModifiedBy',
  'Company',
  'Manager',
  'HyperlinkBase',
  'vt:lpwstr',
  'vt:lpstr',
]);

export function propsParts(pkg: OpcPackage): string[] {
  return ['docProps/core.xml', 'docProps/app.xml', 'docProps/custom.xml'].filter((p) => pkg.entries.has(p));
}

export function propsLex(part: string, start: string, end: string): LexOptions {
  return { part, textTags: PROPS_TEXT, paragraphTag: '\0', runTag: '\0', runPropsTag: '\0', start, end };
}

export function propsSpec(): CompileSpec {
  return { paragraph: '\0', row: '\0', cell: '', rawExpand: '', paragraphLoop: false, lineBreak: () => null };
}

/**
 * Custom properties that hold values, never tags: those Office, SharePoint and labelling tools manage
 * (names starting with `_` such as `_dlc_DocIdItemGuid`, `MSIP_Label_…`, `ContentTypeId`) and any whose
 * value is a braced GUID (`{2B0EC025-…}`, how Office writes identifiers). The author's own properties
 * with tags are templated as before.
 */
const MANAGED_PROP = /^(?:_|MSIP_Label_|ContentTypeId$)/;
const BRACED_GUID = /^\s*\{[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\}\s*$/;
const PROPERTY = /<property\b[^>]*?(?:\/>|>([\s\S]*?)<\/property>)/g;

/**
 * docProps/custom.xml with the properties that hold values set aside (each replaced by a comment the
 * compiler keeps as is), and the function that puts them back into the rendered part.
 */
export function protectCustomValues(xml: string): { xml: string; restore: (out: string) => string } | undefined {
  const kept: string[] = [];
  const masked = xml.replace(PROPERTY, (m, body: string | undefined) => {
    const name = decodeXml(getAttr(m, 'name') ?? '');
    const value = decodeXml((body ?? '').replace(/<[^>]*>/g, ''));
    if (!MANAGED_PROP.test(name) && !BRACED_GUID.test(value)) return m;
    kept.push(m);
    return `<!--docgen-value-${kept.length - 1}-->`;
  });
  if (kept.length === 0) return undefined;
  return { xml: masked, restore: (out) => out.replace(/<!--docgen-value-(\d+)-->/g, (m, i: string) => kept[Number(i)] ?? m) };
}

const CUSTOM_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/custom-properties';
const VT_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes';
const FMTID = '{D5CDD505-2E9C-101B-9397-08002B2CF9AE}';

export type Embedded = Record<string, unknown>;

function vtValue(v: unknown): string {
  if (typeof v === 'boolean') return `<vt:bool>${v ? 'true' : 'false'}</vt:bool>`;
  if (typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 2 ** 31) return `<vt:i4>${v}</vt:i4>`;
  if (typeof v === 'number' && Number.isFinite(v)) return `<vt:r8>${v}</vt:r8>`;
  if (v instanceof Date && !Number.isNaN(v.getTime())) return `<vt:filetime>${v.toISOString().replace(/\.\d{3}Z$/, 'Z')}</vt:filetime>`;
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  return `<vt:lpwstr>${escapeXml(s)}</vt:lpwstr>`;
}

/**
 * Merges custom properties into docProps/custom.xml (replacing same-named ones), so the metadata
 * travels with the file and shows in File > Properties > Custom.
 */
export function mergeCustomProps(existing: string | undefined, props: Embedded): string {
  const keep: string[] = [];
  let maxPid = 1;
  if (existing !== undefined) {
    for (const m of existing.matchAll(/<property\b[^>]*?(?:\/>|>[\s\S]*?<\/property>)/g)) {
      const name = /\sname="([^"]*)"/.exec(m[0])?.[1];
      const pid = Number(/\spid="(\d+)"/.exec(m[0])?.[1] ?? 0);
      if (pid > maxPid) maxPid = pid;
      if (name !== undefined && Object.hasOwn(props, decodeName(name))) continue;
      keep.push(m[0]);
    }
  }
  const added = Object.entries(props).map(
    ([name, v]) => `<property fmtid="${FMTID}" pid="${++maxPid}" name="${escapeXml(name)}">${vtValue(v)}</property>`,
  );
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Properties xmlns="${CUSTOM_NS}" xmlns:vt="${VT_NS}">${keep.join('')}${added.join('')}</Properties>`;
}

function decodeName(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

const CUSTOM_PART = 'docProps/custom.xml';
const CUSTOM_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties';
const CUSTOM_CT = 'application/vnd.openxmlformats-officedocument.custom-properties+xml';

/**
 * The parts to write so a package carries `props` as custom properties: docProps/custom.xml (merged with
 * what is there) and, when the package had none, its content-type override and package relationship.
 * `read` gives a part's current text (undefined when absent). One writer for the engine (data.embedded at
 * render) and the converter (embedded on a same-format output).
 */
export function customPropsParts(read: (name: string) => string | undefined, props: Embedded): Map<string, string> {
  const out = new Map<string, string>();
  const existing = read(CUSTOM_PART);
  out.set(CUSTOM_PART, mergeCustomProps(existing, props));
  if (existing !== undefined) return out;
  const ct = read('[Content_Types].xml');
  if (ct !== undefined && !ct.includes(`PartName="/${CUSTOM_PART}"`)) {
    out.set('[Content_Types].xml', ct.replace('</Types>', `<Override PartName="/${CUSTOM_PART}" ContentType="${CUSTOM_CT}"/></Types>`));
  }
  const rels = read('_rels/.rels');
  if (rels !== undefined && !rels.includes(CUSTOM_REL)) {
    let n = 1;
    while (rels.includes(`Id="rId${n}"`)) n++;
    out.set(
      '_rels/.rels',
      rels.replace('</Relationships>', `<Relationship Id="rId${n}" Type="${CUSTOM_REL}" Target="${CUSTOM_PART}"/></Relationships>`),
    );
  }
  return out;
}

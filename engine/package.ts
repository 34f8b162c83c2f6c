import { TemplateError } from './errors.ts';
import { inflateEntry, readZip } from './zip.ts';
import type { ZipEntry, ZipLimits } from './zip.ts';
import { DEFAULT_LIMITS } from './zip.ts';
import { limitError } from './limits.ts';
import { getAttr } from './xml.ts';
import { canonicalPrefixes } from './namespaces.ts';

/** Stage "unzip": opens an OPC package, refuses unsafe content and finds out what it is. */

export type Format = 'docx' | 'pptx' | 'xlsx';

export interface OpcPackage {
  format: Format;
  /** Main part, e.g. word/document.xml (office365 files may use word/document2.xml). */
  main: string;
  entries: Map<string, ZipEntry>;
  /** Part name (no leading slash) -> content type, from [Content_Types].xml overrides. */
  overrides: Map<string, string>;
  /** Extension -> content type, from [Content_Types].xml defaults. */
  defaults: Map<string, string>;
  text(name: string): string | undefined;
}

const MAIN_TYPES: Array<[RegExp, Format]> = [
  [
    /^application\/vnd\.(openxmlformats-officedocument\.wordprocessingml\.(document|template)\.main|ms-word\.(document|template)\.macroEnabled(Template)?\.main)\+xml$/i,
    'docx',
  ],
  [
    /^application\/vnd\.(openxmlformats-officedocument\.presentationml\.(presentation|template|slideshow)\.main|ms-powerpoint\.(presentation|template|slideshow)\.macroEnabled\.main)\+xml$/i,
    'pptx',
  ],
  [
    /^application\/vnd\.(openxmlformats-officedocument\.spreadsheetml\.(sheet|template)\.main|ms-excel\.(sheet|template)\.macroEnabled(\.main)?)\+xml$/i,
    'xlsx',
  ],
];

// Macro-enabled packages (docm/pptm/xlsm) are accepted only when they carry no macro code, so a
// template can never smuggle VBA (or ActiveX binaries) into generated documents.
const MACRO_PART = /(^|\/)(vbaProject\.bin|vbaData\.xml|vbaProjectSignature[^/]*\.bin)$|(^|\/)activeX\/.*\.bin$/i;

export function openPackage(bytes: Uint8Array, limits: ZipLimits = DEFAULT_LIMITS): OpcPackage {
  if (!(bytes instanceof Uint8Array)) throw TemplateError.single('invalid_package', 'the template must be bytes (Uint8Array)');
  const entries = readZip(bytes, limits);
  const cache = new Map<string, string>();
  let inflatedTotal = 0;
  const text = (name: string): string | undefined => {
    const hit = cache.get(name);
    if (hit !== undefined) return hit;
    const e = entries.get(name);
    if (e === undefined) return undefined;
    inflatedTotal += e.size;
    if (inflatedTotal > limits.maxTotalBytes) {
      throw limitError('maxTotalBytes', `the package expands to more than ${limits.maxTotalBytes} bytes`, limits.maxTotalBytes);
    }
    let s = inflateEntry(e).toString('utf8');
    if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    // Namespaces by their usual prefixes, whatever the writer chose (`<x:sheet>` from the .NET SDK).
    if (/\.(xml|rels)$/i.test(name)) s = canonicalPrefixes(s, name);
    cache.set(name, s);
    return s;
  };

  for (const name of entries.keys()) {
    if (MACRO_PART.test(name))
      throw TemplateError.single('macros_refused', `the template contains macro code (${name}); macro-enabled content is refused`, {
        part: name,
      });
  }

  const ct = text('[Content_Types].xml');
  const overrides = new Map<string, string>();
  const defaults = new Map<string, string>();
  if (ct === undefined) throw TemplateError.single('invalid_package', 'the zip file is not an Office document (no [Content_Types].xml)');
  if (/<!doctype/i.test(ct))
    throw TemplateError.single('doctype_forbidden', '[Content_Types].xml: XML with a DOCTYPE declaration is refused', {
      part: '[Content_Types].xml',
    });
  for (const m of ct.matchAll(/<(Override|Default)\b[^>]*>/g)) {
    const tag = m[0];
    const type = getAttr(tag, 'ContentType') ?? '';
    if (m[1] === 'Override') {
      const part = getAttr(tag, 'PartName') ?? '';
      overrides.set(safeDecode(part.replace(/^\//, '')), type);
    } else {
      defaults.set((getAttr(tag, 'Extension') ?? '').toLowerCase(), type);
    }
  }
  for (const type of [...overrides.values(), ...defaults.values()]) {
    if (/vbaProject|macroEnabled.*vba/i.test(type))
      throw TemplateError.single('macros_refused', 'the template declares macro code; macro-enabled content is refused');
  }

  let format: Format | undefined;
  let main = '';
  for (const [part, type] of overrides) {
    for (const [re, f] of MAIN_TYPES) {
      if (re.test(type) && entries.has(part)) {
        format = f;
        main = part;
      }
    }
    if (format !== undefined) break;
  }
  if (format === undefined) {
    // Some generators only declare defaults; fall back to the conventional main part names.
    if (entries.has('word/document.xml')) [format, main] = ['docx', 'word/document.xml'];
    else if (entries.has('ppt/presentation.xml')) [format, main] = ['pptx', 'ppt/presentation.xml'];
    else if (entries.has('xl/workbook.xml')) [format, main] = ['xlsx', 'xl/workbook.xml'];
    else throw TemplateError.single('unsupported_format', 'the package is not a Word, PowerPoint or Excel document');
  }
  return { format, main, entries, overrides, defaults, text };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function contentTypeOf(pkg: OpcPackage, part: string): string {
  const o = pkg.overrides.get(part);
  if (o !== undefined) return o;
  const ext = part.slice(part.lastIndexOf('.') + 1).toLowerCase();
  return pkg.defaults.get(ext) ?? '';
}

/** Relationship targets of a part, resolved to package paths. */
export function relsOf(pkg: OpcPackage, part: string): Array<{ id: string; type: string; target: string; external: boolean }> {
  const slash = part.lastIndexOf('/');
  const dir = slash < 0 ? '' : part.slice(0, slash);
  const relsName = `${dir === '' ? '' : `${dir}/`}_rels/${part.slice(slash + 1)}.rels`;
  const xml = pkg.text(relsName);
  if (xml === undefined) return [];
  const out: Array<{ id: string; type: string; target: string; external: boolean }> = [];
  for (const m of xml.matchAll(/<Relationship\b[^>]*>/g)) {
    const tag = m[0];
    const external = getAttr(tag, 'TargetMode') === 'External';
    const target = getAttr(tag, 'Target') ?? '';
    out.push({
      id: getAttr(tag, 'Id') ?? '',
      type: getAttr(tag, 'Type') ?? '',
      target: external ? target : resolvePath(dir, target),
      external,
    });
  }
  return out;
}

export function resolvePath(dir: string, target: string): string {
  const segs = target.startsWith('/') ? [] : dir.split('/').filter((s) => s !== '');
  for (const s of target.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') segs.pop();
    else segs.push(s);
  }
  return segs.join('/');
}

export function relsPathOf(part: string): string {
  const slash = part.lastIndexOf('/');
  return `${slash < 0 ? '' : part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
}

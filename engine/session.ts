import type { ImageData } from './images.ts';
import type { OpcPackage } from './package.ts';
import { relsPathOf } from './package.ts';
import { escapeXml } from './xml.ts';

/**
 * Package changes gathered while rendering: new media files, the relationships pointing at them
 * and the content types they need. Applied once at the end so parts stay consistent.
 */

const IMAGE_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/image';

export function relativeTarget(fromPart: string, target: string): string {
  const from = fromPart.split('/').slice(0, -1);
  const to = target.split('/');
  let i = 0;
  while (i < from.length && i < to.length - 1 && from[i] === to[i]) i++;
  return [...from.slice(i).map(() => '..'), ...to.slice(i)].join('/');
}

export class RenderSession {
  readonly files = new Map<string, Uint8Array>();
  /** New XML parts (included slides' and sheets' relationships, carried parts that were edited). */
  readonly texts = new Map<string, string>();
  private readonly overrides = new Map<string, string>();
  /** Parts carried from included templates: key -> name in the host. */
  readonly carried = new Map<string, string>();
  private readonly reserved = new Set<string>();
  private readonly media = new Map<string, string>();
  private readonly rels = new Map<string, Array<{ id: string; type: string; target: string; external?: boolean }>>();
  private readonly exts = new Map<string, string>();
  private nextId = 1;
  docPrId = 90000;
  private readonly pkg: OpcPackage;
  private readonly mediaDir: string;

  constructor(pkg: OpcPackage, mediaDir: string) {
    this.pkg = pkg;
    this.mediaDir = mediaDir;
  }

  addFile(preferred: string, bytes: Uint8Array, key: string): string {
    const known = this.media.get(key);
    if (known !== undefined) return known;
    let name = preferred;
    let n = 1;
    const dot = preferred.lastIndexOf('.');
    while (this.taken(name)) name = `${preferred.slice(0, dot)}_${n++}${preferred.slice(dot)}`;
    this.files.set(name, bytes);
    this.media.set(key, name);
    return name;
  }

  /** Whether a part name is used by the host package or by something this render added. */
  taken(name: string): boolean {
    return this.pkg.entries.has(name) || this.files.has(name) || this.texts.has(name) || this.reserved.has(name);
  }

  /** Keeps a part name for something written outside the session (included sheets). */
  reserve(name: string): void {
    this.reserved.add(name);
  }

  /** A new part with its content type override. */
  addPart(preferred: string, xml: string, contentType: string): string {
    let name = preferred;
    const dot = preferred.lastIndexOf('.');
    for (let n = 1; this.taken(name); n++) name = `${preferred.slice(0, dot)}_${n}${preferred.slice(dot)}`;
    this.texts.set(name, xml);
    if (contentType !== '') this.overrides.set(name, contentType);
    return name;
  }

  addOverride(part: string, contentType: string): void {
    this.overrides.set(part, contentType);
  }

  pkgOf(): OpcPackage {
    return this.pkg;
  }

  addRel(part: string, type: string, target: string, external = false): string {
    let list = this.rels.get(part);
    if (list === undefined) {
      list = [];
      this.rels.set(part, list);
    }
    const rel = external ? target : relativeTarget(part, target);
    const hit = list.find((r) => r.target === rel && r.type === type);
    if (hit !== undefined) return hit.id;
    // Never reuse an id the part already has (a template may itself be a rendered document).
    const existing = this.texts.get(relsPathOf(part)) ?? this.pkg.text(relsPathOf(part)) ?? '';
    let id = `rIdDg${this.nextId++}`;
    while (existing.includes(`Id="${id}"`)) id = `rIdDg${this.nextId++}`;
    list.push(external ? { id, type, target: rel, external } : { id, type, target: rel });
    return id;
  }

  addImage(part: string, image: ImageData): string {
    const name = this.addFile(`${this.mediaDir}/docgen_${image.hash}.${image.ext}`, image.bytes, `img:${image.hash}`);
    this.exts.set(image.ext, image.mime);
    return this.addRel(part, IMAGE_REL, name);
  }

  needContentType(ext: string, mime: string): void {
    this.exts.set(ext, mime);
  }

  /** Writes the accumulated relationships and content types into `extra` (part -> XML). */
  apply(extra: Map<string, string>, read: (name: string) => string | undefined): void {
    // (A part edited after it was added, e.g. a carried drawing given pictures, is already in extra.)
    for (const [name, xml] of this.texts) if (!extra.has(name)) extra.set(name, xml);
    for (const [part, list] of this.rels) {
      const relsName = relsPathOf(part);
      const existing =
        extra.get(relsName) ??
        read(relsName) ??
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"></Relationships>';
      const add = list
        .map(
          (r) =>
            `<Relationship Id="${r.id}" Type="${r.type}" Target="${escapeXml(r.target)}"${r.external === true ? ' TargetMode="External"' : ''}/>`,
        )
        .join('');
      extra.set(
        relsName,
        existing.includes('</Relationships>')
          ? existing.replace('</Relationships>', `${add}</Relationships>`)
          : existing.replace(/<Relationships([^>]*)\/>/, `<Relationships$1>${add}</Relationships>`),
      );
    }
    const missing = [...this.exts].filter(([ext]) => !this.pkg.defaults.has(ext));
    if (missing.length > 0 || this.overrides.size > 0) {
      const ct = extra.get('[Content_Types].xml') ?? read('[Content_Types].xml') ?? '';
      const defaults = missing.map(([ext, mime]) => `<Default Extension="${escapeXml(ext)}" ContentType="${escapeXml(mime)}"/>`).join('');
      const overrides = [...this.overrides]
        .map(([part, type]) => `<Override PartName="/${escapeXml(part)}" ContentType="${escapeXml(type)}"/>`)
        .join('');
      extra.set('[Content_Types].xml', ct.replace('</Types>', `${defaults}${overrides}</Types>`));
    }
  }
}

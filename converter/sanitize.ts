/**
 * Pre-conversion hardening of OOXML packages (GUIDE §5, issue #4; Gotenberg's GHSA-2mrg-35hw-x3x9 and
 * GHSA-rm4c-xj6x-49mw are what happens without it: LibreOffice happily fetches linked images, linked
 * OLE objects and INCLUDETEXT targets from file:// and http:// while converting).
 *
 * Refused outright (BAD_INPUT): anything that is not a sane zip, macro parts, `<!DOCTYPE` in any XML
 * part. Stripped: every relationship with TargetMode="External" except http(s)/mailto hyperlinks
 * (those become clickable links and are never fetched), altChunk imports, and field codes that pull
 * content from elsewhere (INCLUDEPICTURE, INCLUDETEXT, LINK, DDE, DDEAUTO, IMPORT). The field's cached
 * result, if any, is what the author saw, and stays.
 *
 * This is the first line; the second is LibreOffice itself (no network namespace, macros off,
 * UpdateDocMode NO_UPDATE) — see pool.ts.
 */
import { ConvertError } from './errors.ts';
import { entryText, makeEntry, readZip, writeZip } from './zip.ts';
import type { ZipEntry } from './zip.ts';

export interface SanitizeResult {
  bytes: Uint8Array;
  /** Human-readable list of what was removed, empty when the input came back unchanged. */
  removed: string[];
}

const DANGEROUS_FIELD = /^\s*(INCLUDEPICTURE|INCLUDETEXT|LINK|DDE|DDEAUTO|IMPORT)\b/i;
const SAFE_EXTERNAL_HYPERLINK = /^(https?:|mailto:)/i;
const XML_PART = /\.(xml|rels|vml)$/i;

function decodeXmlAttr(v: string): string {
  return v.replace(/&(amp|lt|gt|quot|apos|#x[0-9a-f]+|#\d+);/gi, (m, g: string) => {
    const k = g.toLowerCase();
    if (k === 'amp') return '&';
    if (k === 'lt') return '<';
    if (k === 'gt') return '>';
    if (k === 'quot') return '"';
    if (k === 'apos') return "'";
    const code = k.startsWith('#x') ? parseInt(k.slice(2), 16) : parseInt(k.slice(1), 10);
    return Number.isFinite(code) ? String.fromCodePoint(code) : m;
  });
}

function attrs(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/g)) {
    out.set(m[1]!, decodeXmlAttr(m[3] ?? m[4] ?? ''));
  }
  return out;
}

/** The part a .rels file describes: word/_rels/document.xml.rels → word/document.xml. */
function sourcePartOf(relsName: string): string {
  const m = /^(.*?)_rels\/([^/]+)\.rels$/.exec(relsName);
  return m ? `${m[1]}${m[2]}` : '';
}

function stripRelationships(relsName: string, xml: string, removed: string[], altChunkIds: Set<string>): string {
  return xml.replace(/<Relationship\b[^>]*?(\/>|>[\s\S]*?<\/Relationship>)/g, (tag) => {
    const a = attrs(tag.slice(0, tag.indexOf('>') + 1));
    const type = a.get('Type') ?? '';
    const target = a.get('Target') ?? '';
    const id = a.get('Id') ?? '?';
    const shortType = type.slice(type.lastIndexOf('/') + 1);
    if (shortType === 'aFChunk') {
      altChunkIds.add(id);
      removed.push(`${relsName}#${id}: altChunk import of ${target}`);
      return '';
    }
    if ((a.get('TargetMode') ?? '').toLowerCase() !== 'external') return tag;
    if (shortType === 'hyperlink' && SAFE_EXTERNAL_HYPERLINK.test(target.trim())) return tag;
    removed.push(`${relsName}#${id}: external ${shortType} → ${target}`);
    return '';
  });
}

/**
 * Blanks the instructions of fields that import content. Field codes may be split over many
 * w:instrText runs and nest, so the instruction is reassembled per field before it is judged.
 */
function neutralizeFields(partName: string, xml: string, removed: string[]): string {
  const tokenRe = /<w:fldChar\b[^>]*?w:fldCharType\s*=\s*["'](begin|separate|end)["'][^>]*>|<w:instrText\b[^>]*?(?:\/>|>([\s\S]*?)<\/w:instrText>)|<w:fldSimple\b[^>]*>/g;
  interface Field { text: string; instr: Array<{ start: number; end: number }> }
  const stack: Field[] = [];
  const blank: Array<{ start: number; end: number; replacement: string }> = [];
  for (const m of xml.matchAll(tokenRe)) {
    const tok = m[0];
    const start = m.index;
    if (tok.startsWith('<w:fldSimple')) {
      const instr = attrs(tok).get('w:instr') ?? '';
      if (DANGEROUS_FIELD.test(instr)) {
        removed.push(`${partName}: field ${instr.trim().split(/\s+/).slice(0, 2).join(' ')}`);
        blank.push({ start, end: start + tok.length, replacement: tok.replace(/w:instr\s*=\s*("[^"]*"|'[^']*')/, 'w:instr=""') });
      }
      continue;
    }
    if (tok.startsWith('<w:fldChar')) {
      const kind = m[1];
      if (kind === 'begin') stack.push({ text: '', instr: [] });
      else if (kind === 'separate' || kind === 'end') {
        const f = stack[stack.length - 1];
        if (f && kind === 'separate') {
          // The instruction is complete at separate; runs after it belong to the cached result.
          judge(f);
          f.instr = [];
        }
        if (kind === 'end') {
          const done = stack.pop();
          if (done) judge(done);
        }
      }
      continue;
    }
    const f = stack[stack.length - 1];
    if (!f) continue;
    f.text += decodeXmlAttr(m[2] ?? '');
    f.instr.push({ start, end: start + tok.length });
  }
  function judge(f: Field): void {
    if (!f.instr.length || !DANGEROUS_FIELD.test(f.text)) return;
    removed.push(`${partName}: field ${f.text.trim().split(/\s+/).slice(0, 2).join(' ')}`);
    for (const r of f.instr) blank.push({ ...r, replacement: '<w:instrText xml:space="preserve"> </w:instrText>' });
    f.text = '';
  }
  if (!blank.length) return xml;
  blank.sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  for (const b of blank) {
    out += xml.slice(pos, b.start) + b.replacement;
    pos = b.end;
  }
  return out + xml.slice(pos);
}

export function sanitizeOoxml(input: Uint8Array, format: string): SanitizeResult {
  const entries = readZip(input);
  if (!entries.some((e) => e.name === '[Content_Types].xml')) {
    throw new ConvertError('BAD_INPUT', `not an OOXML ${format} package (no [Content_Types].xml)`);
  }
  const removed: string[] = [];
  const replaced = new Map<string, string>();
  const texts = new Map<string, string>();
  for (const e of entries) {
    if (/(^|\/)vbaProject\.bin$|(^|\/)vbaData\.xml$/i.test(e.name)) {
      throw new ConvertError('BAD_INPUT', `macro-enabled documents are refused (${e.name})`);
    }
    if (!XML_PART.test(e.name)) continue;
    const text = entryText(e);
    if (/<!DOCTYPE/i.test(text)) throw new ConvertError('BAD_INPUT', `DOCTYPE declarations are refused (${e.name})`);
    texts.set(e.name, text);
  }
  const ct = texts.get('[Content_Types].xml') ?? '';
  if (/macroEnabled/i.test(ct)) throw new ConvertError('BAD_INPUT', 'macro-enabled documents are refused');

  const altChunkParts = new Set<string>();
  for (const [name, text] of texts) {
    if (!name.endsWith('.rels')) continue;
    const ids = new Set<string>();
    const next = stripRelationships(name, text, removed, ids);
    if (next !== text) replaced.set(name, next);
    if (ids.size) altChunkParts.add(sourcePartOf(name));
  }
  for (const [name, text] of texts) {
    if (!/^word\/[^/]+\.xml$/.test(name)) continue;
    let next = neutralizeFields(name, text, removed);
    if (altChunkParts.has(name)) next = next.replace(/<w:altChunk\b[^>]*?(\/>|>[\s\S]*?<\/w:altChunk>)/g, '');
    if (next !== text) replaced.set(name, next);
  }
  if (!replaced.size) return { bytes: input, removed };
  const out: ZipEntry[] = entries.map((e) => {
    const t = replaced.get(e.name);
    return t === undefined ? e : makeEntry(e.name, t);
  });
  return { bytes: writeZip(out), removed };
}

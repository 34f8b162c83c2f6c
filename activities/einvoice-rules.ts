// The official e-invoice validation artefacts (docs/einvoice.md, decision 037): the standards' XSDs and the
// EN 16931 / XRechnung / Factur-X Schematron, fetched once from Maven Central (each jar checked against the
// sha1 beside it), extracted, and the Schematron XSLTs compiled to SaxonJS's SEF, into one directory per
// set of versions under ~/.cache/docgen. `docgen start` and `docgen worker` prepare it (minutes, once),
// `docgen einvoice-rules` does it alone (CI, images); activities/einvoice-validate.ts reads it.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';

const MAVEN = 'https://repo1.maven.org/maven2';

interface Jar {
  group: string;
  artifact: string;
  version: string;
  /** Entries copied out of the jar: its path (a prefix when it ends with /) -> the path in the rules directory. */
  take: [string, string][];
}

/** The versions of the rules, one place: the directory's name and the docs name them. */
export const RULE_VERSIONS = { en16931: '1.3.15', xrechnung: '3.0.2', facturx: '1.07 (Mustang validator 2.26.0)' } as const;

export const JARS: Jar[] = [
  {
    // The CEN/TC 434 EN 16931 Schematron (ConnectingEurope), as phive packs it; EUPL 1.2 (the XSLTs' header).
    group: 'com.helger.phive.rules',
    artifact: 'phive-rules-en16931',
    version: '4.3.7',
    take: [
      ['external/schematron/1.3.15/cii/EN16931-CII-validation.xslt', 'xsl/en16931-cii.xslt'],
      ['external/schematron/1.3.15/ubl/EN16931-UBL-validation.xslt', 'xsl/en16931-ubl.xslt'],
      ['LICENSE', 'licenses/phive-rules-en16931-LICENSE'],
      ['NOTICE', 'licenses/phive-rules-en16931-NOTICE'],
    ],
  },
  {
    // KoSIT's XRechnung 3.0.2 Schematron (Apache 2.0).
    group: 'com.helger.phive.rules',
    artifact: 'phive-rules-xrechnung',
    version: '4.2.3',
    take: [
      ['external/schematron/3.0.2/XRechnung-CII-validation.xslt', 'xsl/xrechnung-cii.xslt'],
      ['external/schematron/3.0.2/XRechnung-UBL-validation.xslt', 'xsl/xrechnung-ubl.xslt'],
      ['LICENSE', 'licenses/phive-rules-xrechnung-LICENSE'],
      ['NOTICE', 'licenses/phive-rules-xrechnung-NOTICE'],
    ],
  },
  {
    // The Mustang project's validator (Apache 2.0; the jar CI's Mustang-CLI runs): the Factur-X 1.07 profile
    // XSDs, the UBL 2.1 XSDs, Factur-X's MINIMUM and BASIC WL Schematron with their code lists.
    group: 'org.mustangproject',
    artifact: 'validator',
    version: '2.26.0',
    take: [
      ['schema/ZF_250/', 'xsd/facturx/'],
      ['schema/UBL_21/', 'xsd/ubl21/'],
      ['xslt/ZF_250/FACTUR-X_MINIMUM.xslt', 'xsl/facturx-minimum.xslt'],
      ['xslt/ZF_250/FACTUR-X_MINIMUM_codedb.xml', 'xsl/FACTUR-X_MINIMUM_codedb.xml'],
      ['xslt/ZF_250/FACTUR-X_BASIC-WL.xslt', 'xsl/facturx-basicwl.xslt'],
      ['xslt/ZF_250/FACTUR-X_BASIC-WL_codedb.xml', 'xsl/FACTUR-X_BASIC-WL_codedb.xml'],
    ],
  },
  {
    // UN/CEFACT's CII D16B XSDs (XRechnung CII), as ph-cii packs them (Apache 2.0).
    group: 'com.helger.cii',
    artifact: 'ph-cii-d16b',
    version: '4.1.1',
    take: [
      ['external/schemas/d16b/', 'xsd/d16b/'],
      ['LICENSE', 'licenses/ph-cii-d16b-LICENSE'],
    ],
  },
];

/** The Schematron XSLTs compiled to SEF (xsl/<name>.xslt -> sef/<name>.sef.json). */
export const STYLESHEETS = ['en16931-cii', 'en16931-ubl', 'xrechnung-cii', 'xrechnung-ubl', 'facturx-minimum', 'facturx-basicwl'] as const;
export type Stylesheet = (typeof STYLESHEETS)[number];

/** Bumped when what this file makes of the jars changes (patches, layout). */
const LAYOUT = 1;

let configured: string | undefined;

/** EINVOICE_RULES_DIR (config/env.ts), set by the commands that start a worker; undefined: the default. */
export function configureEInvoiceRules(dir: string | undefined): void {
  configured = dir ? path.resolve(dir) : undefined;
}

/** The rules directory: EINVOICE_RULES_DIR, else ~/.cache/docgen/einvoice-rules-<layout>-<hash of the jars' versions>. */
export function rulesDir(): string {
  if (configured) return configured;
  const key = JARS.map((j) => `${j.artifact}-${j.version}`).join('_');
  return path.join(
    os.homedir(),
    '.cache',
    'docgen',
    `einvoice-rules-${LAYOUT}-${createHash('sha1').update(key).digest('hex').slice(0, 10)}`,
  );
}

/** The directory is complete (its manifest is written last). */
export function rulesReady(dir = rulesDir()): boolean {
  return fs.existsSync(path.join(dir, 'manifest.json'));
}

const jarUrl = (j: Jar) => `${MAVEN}/${j.group.replaceAll('.', '/')}/${j.artifact}/${j.version}/${j.artifact}-${j.version}.jar`;

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** A jar from Maven Central, checked against the sha1 file beside it. */
async function fetchJar(j: Jar): Promise<Buffer> {
  const url = jarUrl(j);
  const [bytes, sha1] = await Promise.all([download(url), download(`${url}.sha1`)]);
  const expected = sha1.toString('latin1').trim().split(/\s+/)[0]!.toLowerCase();
  const actual = createHash('sha1').update(bytes).digest('hex');
  if (actual !== expected) throw new Error(`${url}: sha1 ${actual}, Maven Central says ${expected}`);
  return bytes;
}

/** The entries of a zip (a jar): name -> bytes, through its central directory (stored or deflated). */
export function unzip(zip: Buffer): Map<string, Buffer> {
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  if (eocd < 0) throw new Error('not a zip file');
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('a damaged zip central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLen = zip.readUInt16LE(at + 28);
    const extraLen = zip.readUInt16LE(at + 30);
    const commentLen = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
    at += 46 + nameLen + extraLen + commentLen;
    if (name.endsWith('/')) continue;
    const dataAt = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const compressed = zip.subarray(dataAt, dataAt + compressedSize);
    const bytes = method === 0 ? Buffer.from(compressed) : inflateRawSync(compressed);
    if (bytes.length !== size) throw new Error(`${name}: ${bytes.length} bytes, the zip says ${size}`);
    out.set(name, bytes);
  }
  return out;
}

/** SaxonJS 2.7 computes `xs:integer mod` through binary floats past 2^53, so XRechnung's IBAN check (BR-DE-19:
 *  the IBAN as a 20-30 digit integer, mod 97) fails for every valid IBAN. The patch routes that expression
 *  through dg:mod97, which folds nine digits at a time (exact), and declares it in the stylesheet. */
export function patchMod97(xslt: string): { text: string; patched: number } {
  const open = 'xs:integer(string-join(';
  let out = '';
  let from = 0;
  let patched = 0;
  for (let at = xslt.indexOf(open, from); at >= 0; at = xslt.indexOf(open, from)) {
    // The parenthesis that closes xs:integer(.
    let depth = 0;
    let end = at + 'xs:integer'.length;
    for (; end < xslt.length; end++) {
      if (xslt[end] === '(') depth++;
      else if (xslt[end] === ')' && --depth === 0) break;
    }
    const after = xslt.slice(end + 1).match(/^\s*mod\s+97/);
    if (!after) {
      out += xslt.slice(from, end + 1);
      from = end + 1;
      continue;
    }
    out += xslt.slice(from, at) + 'dg:mod97(' + xslt.slice(at + 'xs:integer('.length, end) + ')';
    from = end + 1 + after[0].length;
    patched++;
  }
  out += xslt.slice(from);
  if (patched === 0) return { text: xslt, patched };
  const fn =
    '<xsl:function xmlns:dg="urn:docgen:einvoice" name="dg:mod97" as="xs:integer"><xsl:param name="digits" as="xs:string"/>' +
    '<xsl:sequence select="if (string-length($digits) le 9) then xs:integer($digits) mod 97 else dg:mod97(concat(string(xs:integer(substring($digits, 1, 9)) mod 97), substring($digits, 10)))"/>' +
    '</xsl:function>';
  out = out
    .replace(/<xsl:stylesheet\b/, '<xsl:stylesheet xmlns:dg="urn:docgen:einvoice"')
    .replace(/<\/xsl:stylesheet>\s*$/, `${fn}</xsl:stylesheet>\n`);
  return { text: out, patched };
}

function xslt3Script(): string {
  return createRequire(import.meta.url).resolve('xslt3/xslt3.js');
}

/** xslt3 (SaxonJS's compiler, in Node: no Java) turns an XSLT into a SEF file. */
function compile(xsl: string, sef: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [xslt3Script(), `-xsl:${xsl}`, `-export:${sef}`, '-nogo', '-relocate:on'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 && fs.existsSync(sef) ? resolve() : reject(new Error(`xslt3 ${path.basename(xsl)}: exit ${code}: ${err.slice(-500)}`)),
    );
  });
}

let preparing: Promise<string> | undefined;
let lastFailure: string | undefined;

/** The rules directory, fetched and compiled when absent (once per process; concurrent processes each build
 *  into their own staging directory, the first rename wins). Throws with the reason when it cannot. */
export function prepareEInvoiceRules(log: (line: string) => void = () => {}, dir = rulesDir()): Promise<string> {
  if (rulesReady(dir)) return Promise.resolve(dir);
  preparing ??= build(dir, log).then(
    (ready) => {
      preparing = undefined;
      lastFailure = undefined;
      return ready;
    },
    (err: unknown) => {
      preparing = undefined;
      lastFailure = err instanceof Error ? err.message : String(err);
      throw err;
    },
  );
  return preparing;
}

/** This process's preparation under way, if any (a check waits for it), and why the last one failed. */
export function preparationState(): { underway?: Promise<string>; failed?: string } {
  return { ...(preparing ? { underway: preparing } : {}), ...(lastFailure ? { failed: lastFailure } : {}) };
}

async function build(dir: string, log: (line: string) => void): Promise<string> {
  const staging = `${dir}.partial-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  try {
    log(`E-invoice rules: fetching ${JARS.map((j) => `${j.artifact} ${j.version}`).join(', ')} from Maven Central (once)...`);
    const jars = await Promise.all(JARS.map(async (j) => ({ j, entries: unzip(await fetchJar(j)) })));
    for (const { j, entries } of jars) {
      for (const [from, to] of j.take) {
        const names = from.endsWith('/') ? [...entries.keys()].filter((n) => n.startsWith(from)) : [from];
        if (names.length === 0 || !entries.has(names[0]!)) throw new Error(`${j.artifact}-${j.version}.jar has no ${from}`);
        for (const name of names) {
          const target = path.join(staging, from.endsWith('/') ? to + name.slice(from.length) : to);
          fs.mkdirSync(path.dirname(target), { recursive: true });
          let bytes = entries.get(name)!;
          if (to.startsWith('xsl/xrechnung-')) {
            const { text, patched } = patchMod97(bytes.toString('utf8'));
            if (patched === 0) throw new Error(`${name}: the IBAN check (mod 97) to patch was not found`);
            bytes = Buffer.from(text, 'utf8');
          }
          fs.writeFileSync(target, bytes);
        }
      }
    }
    fs.mkdirSync(path.join(staging, 'sef'));
    for (const name of STYLESHEETS) {
      const started = performance.now();
      await compile(path.join(staging, 'xsl', `${name}.xslt`), path.join(staging, 'sef', `${name}.sef.json`));
      log(`E-invoice rules: compiled ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    }
    fs.writeFileSync(
      path.join(staging, 'manifest.json'),
      JSON.stringify({ layout: LAYOUT, versions: RULE_VERSIONS, jars: JARS.map((j) => ({ url: jarUrl(j) })) }, null, 2),
    );
    try {
      fs.renameSync(staging, dir);
    } catch (err) {
      // Another process finished first: use theirs.
      if (!rulesReady(dir)) throw err;
      fs.rmSync(staging, { recursive: true, force: true });
    }
    log(`E-invoice rules: ready in ${dir}`);
    return dir;
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

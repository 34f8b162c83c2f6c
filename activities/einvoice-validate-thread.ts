// The thread that runs the official e-invoice checks (activities/einvoice-validate.ts): libxml2 (wasm) for
// the XSDs, SaxonJS for the Schematron's compiled SEF. Each schema and stylesheet is loaded once, on first
// use, and kept for the thread's life; jobs run one after another.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { XmlDocument, XmlParseError, XmlValidateError, XsdValidator } from 'libxml2-wasm';
import { xmlRegisterFsInputProviders } from 'libxml2-wasm/lib/nodejs.mjs';

export interface ValidateJob {
  id: number;
  xml: string;
  xsd: string;
  schematron: string[];
}
export interface Finding {
  rule: string;
  flag: string;
  location: string;
  message: string;
}
export type ValidateReply = { id: number; ok: true; findings: Finding[]; xsdFailed: boolean } | { id: number; ok: false; message: string };

interface SaxonJSApi {
  transform(
    options: { stylesheetInternal: unknown; stylesheetBaseURI: string; sourceText: string; destination: 'serialized' },
    mode: 'sync',
  ): { principalResult: string };
}

const dir = (workerData as { dir: string }).dir;
const SaxonJS = createRequire(import.meta.url)('saxon-js') as SaxonJSApi;
xmlRegisterFsInputProviders();

const schemas = new Map<string, XsdValidator>();
const stylesheets = new Map<string, unknown>();

function schema(rel: string): XsdValidator {
  let v = schemas.get(rel);
  if (!v) {
    const file = path.join(dir, rel);
    const doc = XmlDocument.fromBuffer(fs.readFileSync(file), { url: file });
    v = XsdValidator.fromDoc(doc);
    schemas.set(rel, v);
  }
  return v;
}

function stylesheet(name: string): unknown {
  let s = stylesheets.get(name);
  if (!s) {
    s = JSON.parse(fs.readFileSync(path.join(dir, 'sef', `${name}.sef.json`), 'utf8'));
    stylesheets.set(name, s);
  }
  return s;
}

const decode = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) =>
    e === 'lt'
      ? '<'
      : e === 'gt'
        ? '>'
        : e === 'quot'
          ? '"'
          : e === 'apos'
            ? "'"
            : e === 'amp'
              ? '&'
              : String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))),
  );

/** The failed asserts and successful reports of an SVRL report. */
export function svrlFindings(svrl: string): Finding[] {
  const out: Finding[] = [];
  for (const m of svrl.matchAll(
    /<svrl:(?:failed-assert|successful-report)\b([^>]*)>([\s\S]*?)<\/svrl:(?:failed-assert|successful-report)>/g,
  )) {
    const attrs = Object.fromEntries([...m[1]!.matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1]!, decode(a[2]!)]));
    const text = decode(/<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(m[2]!)?.[1] ?? '')
      .replace(/\s+/g, ' ')
      .trim();
    out.push({ rule: attrs.id ?? 'SCHEMATRON', flag: attrs.flag ?? 'error', location: attrs.location ?? '', message: text });
  }
  return out;
}

function run(job: ValidateJob): ValidateReply {
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromString(job.xml);
  } catch (err) {
    const detail = err instanceof XmlParseError ? err.details.map((d) => `line ${d.line}: ${d.message.trim()}`).join('; ') : String(err);
    return {
      id: job.id,
      ok: true,
      xsdFailed: true,
      findings: [{ rule: 'XML', flag: 'fatal', location: '/', message: `not well-formed XML: ${detail}` }],
    };
  }
  try {
    schema(job.xsd).validate(doc);
  } catch (err) {
    if (!(err instanceof XmlValidateError)) throw err;
    const xsdName = path.basename(job.xsd);
    return {
      id: job.id,
      ok: true,
      xsdFailed: true,
      findings: err.details.map((d) => ({
        rule: 'XSD',
        flag: 'fatal',
        location: d.xpath ?? `line ${d.line}`,
        message: `does not match ${xsdName}: ${d.message.trim()}`,
      })),
    };
  } finally {
    doc.dispose();
  }
  const findings: Finding[] = [];
  for (const name of job.schematron) {
    const result = SaxonJS.transform(
      {
        stylesheetInternal: stylesheet(name),
        // Factur-X's stylesheets read their code lists beside them (document('..._codedb.xml')).
        stylesheetBaseURI: pathToFileURL(path.join(dir, 'xsl', `${name}.xslt`)).href,
        sourceText: job.xml,
        destination: 'serialized',
      },
      'sync',
    );
    findings.push(...svrlFindings(result.principalResult));
  }
  return { id: job.id, ok: true, xsdFailed: false, findings };
}

parentPort?.on('message', (job: ValidateJob) => {
  let reply: ValidateReply;
  try {
    reply = run(job);
  } catch (err) {
    reply = { id: job.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  parentPort!.postMessage(reply);
});

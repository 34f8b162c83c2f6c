// An e-invoice's XML checked by the standards' own artefacts before delivery (docs/einvoice.md, decision
// 037): the XSD of its syntax and profile, then the official Schematron (EN 16931's CEN rules for every
// invoice that claims EN 16931, XRechnung's CIUS rules for xrechnung-*, Factur-X's own for MINIMUM and
// BASIC WL, which are not EN 16931 invoices). The artefacts come from activities/einvoice-rules.ts; the work
// runs in one thread per process (activities/einvoice-validate-thread.ts), so the event loop that runs
// activities and heartbeats never waits on it.
import { Worker } from 'node:worker_threads';
import type { EInvoiceOption } from '../core/einvoice.ts';
import { callerFailure } from '../core/failures.ts';
import type { Problem } from '../einvoice/index.ts';
import { preparationState, RULE_VERSIONS, rulesDir, rulesReady, type Stylesheet } from './einvoice-rules.ts';
import type { Finding, ValidateJob, ValidateReply } from './einvoice-validate-thread.ts';

const THREAD = new URL('./einvoice-validate-thread.ts', import.meta.url);

/** The XSD (in the rules directory) and the Schematron stylesheets that judge an option's XML. */
export function checksOf(option: EInvoiceOption): { xsd: string; schematron: Stylesheet[] } {
  switch (option.standard === 'zugferd' ? 'facturx' : option.standard) {
    case 'xrechnung-cii':
      return { xsd: 'xsd/d16b/data/standard/CrossIndustryInvoice_100pD16B.xsd', schematron: ['en16931-cii', 'xrechnung-cii'] };
    case 'xrechnung-ubl':
      return { xsd: 'xsd/ubl21/maindoc/UBL-Invoice-2.1.xsd', schematron: ['en16931-ubl', 'xrechnung-ubl'] };
    default:
      switch (option.profile) {
        case 'MINIMUM':
          return { xsd: 'xsd/facturx/MINIMUM/FACTUR-X_MINIMUM.xsd', schematron: ['facturx-minimum'] };
        case 'BASIC WL':
          return { xsd: 'xsd/facturx/BASIC-WL/FACTUR-X_BASICWL.xsd', schematron: ['facturx-basicwl'] };
        default: {
          const p = option.profile as 'BASIC' | 'EN16931' | 'EXTENDED';
          return { xsd: `xsd/facturx/${p}/FACTUR-X_${p}.xsd`, schematron: ['en16931-cii'] };
        }
      }
  }
}

/** A Schematron location without its namespace tests: /CrossIndustryInvoice/SupplyChainTradeTransaction/... */
export function shortLocation(location: string): string {
  return location
    .replace(/\*:([\w.-]+)\[namespace-uri\(\)='[^']*'\]/g, '$1')
    .replace(/\[1\]/g, '')
    .replace(/Q\{[^}]*\}/g, '');
}

/** A finding as the einvoice problems list it: its rule, its level, the XPath as the field, the rule's own text. */
export function problemOf(f: Finding): Problem {
  const message = f.message.replace(new RegExp(`^\\[${f.rule.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\]\\s*-?\\s*`), '');
  return {
    rule: f.rule,
    field: shortLocation(f.location) || '/',
    level: f.flag === 'warning' || f.flag === 'information' ? 'warning' : 'error',
    message: message || f.rule,
  };
}

/** The largest XML judged (characters): past it, a 400 TEMPLATE_TOO_COMPLEX (an XML template's loop can make
 *  any size; the Schematron's time grows with it). */
export const MAX_VALIDATED_XML = 16 * 1024 * 1024;
/** One check's time limit: past it the thread is ended (with every check it held) and this one is a 400
 *  TEMPLATE_TOO_COMPLEX, so no invoice holds the thread that every tenant's e-invoices share. */
export const VALIDATION_TIMEOUT_MS = 30_000;

let thread: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve(r: ValidateReply): void; reject(e: Error): void }>();

function threadOf(dir: string): Worker {
  if (thread) return thread;
  const w = new Worker(THREAD, {
    workerData: { dir },
    // A bounded young generation: the transforms' garbage is collected early instead of growing the RSS. A
    // bounded heap: a check that would need more ends the thread, not the process.
    resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 1_024 },
    stdout: false,
    stderr: false,
  });
  w.unref();
  w.on('message', (reply: ValidateReply) => {
    const p = pending.get(reply.id);
    pending.delete(reply.id);
    // An idle thread does not keep the process alive; one with work does.
    if (pending.size === 0) w.unref();
    p?.resolve(reply);
  });
  const fail = (err: Error) => {
    if (thread === w) thread = undefined;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`the e-invoice validation thread exited (${code})`)));
  thread = w;
  return w;
}

/**
 * The XML of an e-invoice judged by its XSD, then (when the XSD passes) by the official Schematron of its
 * standard and profile: one Problem per failed assert (the rule's id, `error` for fatal/error asserts and
 * `warning` for warning ones, the assert's location as the field, its text as the message); an XSD failure
 * or a malformed XML is rule `XSD` / `XML`. Waits for a preparation under way in this process (a start's);
 * throws NOT_SUPPORTED (nothing is delivered) when this machine has no rules directory (never prepared, or
 * the preparation failed: offline), with the reason.
 */
export async function checkInvoiceXml(xml: string, option: EInvoiceOption): Promise<Problem[]> {
  const dir = rulesDir();
  // A start prepares them in the background: the first e-invoices wait for it.
  await preparationState().underway?.catch(() => undefined);
  if (!rulesReady(dir)) {
    const failed = preparationState().failed;
    throw callerFailure(
      'NOT_SUPPORTED',
      `document.einvoice: this worker has no official EN 16931 validation rules (XSD + Schematron, EN 16931 ${RULE_VERSIONS.en16931}, XRechnung ${RULE_VERSIONS.xrechnung}) in ${dir}${failed ? ` (preparing them failed: ${failed})` : ''}, so it delivers no e-invoice; they are fetched from Maven Central at start, or by \`npx docgen einvoice-rules\``,
    );
  }
  if (xml.length > MAX_VALIDATED_XML)
    throw callerFailure(
      'TEMPLATE_TOO_COMPLEX',
      `document.einvoice: the e-invoice's XML has ${xml.length} characters; the most this service validates is ${MAX_VALIDATED_XML}`,
    );
  const { xsd, schematron } = checksOf(option);
  const id = nextId++;
  const w = threadOf(dir);
  let timer: NodeJS.Timeout | undefined;
  const reply = await new Promise<ValidateReply | 'timeout'>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, xml, xsd, schematron } satisfies ValidateJob);
    timer = setTimeout(() => {
      pending.delete(id);
      resolve('timeout');
      if (thread === w) thread = undefined;
      void w.terminate();
    }, VALIDATION_TIMEOUT_MS);
  }).finally(() => clearTimeout(timer));
  if (reply === 'timeout')
    throw callerFailure(
      'TEMPLATE_TOO_COMPLEX',
      `document.einvoice: validating the e-invoice's XML took longer than ${VALIDATION_TIMEOUT_MS / 1000} s, the limit of one check`,
    );
  if (!reply.ok) throw new Error(`the e-invoice validation failed: ${reply.message}`);
  return reply.findings.map(problemOf);
}

/** Ends the validation thread (tests, benchmarks); the next check starts another. */
export async function stopInvoiceChecks(): Promise<void> {
  const w = thread;
  thread = undefined;
  await w?.terminate();
}

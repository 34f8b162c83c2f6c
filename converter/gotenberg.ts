/**
 * Scale-out converter: a Gotenberg 8 server (GOTENBERG_URL) through its HTTP API,
 * POST {url}/forms/libreoffice/convert with the document as the multipart field `files`.
 *
 * Documents are sanitized here exactly as for the embedded pool: Gotenberg's own advisories
 * (GHSA-2mrg-35hw-x3x9, GHSA-rm4c-xj6x-49mw) were about LibreOffice following external links.
 * Gotenberg has no csv output and no plain PDF version switch; those are refused with UNSUPPORTED
 * so the caller hears it before any upload.
 */
import { converterSettings } from './settings.ts';
import { ConvertError } from './errors.ts';
import { planConversion } from './options.ts';
import { resolveLimits } from '../engine/limits.ts';
import { checkPdfPages, pdfaIdentification } from './pdf.ts';
import { sanitizeOoxml } from './sanitize.ts';
import type { Converter, ConverterStatus, ConvertOptions } from './types.ts';

export interface GotenbergOptions {
  /** Base URL, e.g. http://gotenberg:3000; user:password@ in it becomes basic auth. */
  url: string;
  /** Per-request deadline; default CONVERTER_TIMEOUT_MS or 120 000. */
  timeoutMs?: number;
  /** Concurrent requests in flight; default 8. Beyond it requests queue, up to queueLimit. */
  concurrency?: number;
  queueLimit?: number;
}

const PDFA: Record<number, string> = { 1: 'PDF/A-1b', 2: 'PDF/A-2b', 3: 'PDF/A-3b' };

export class GotenbergConverter implements Converter {
  readonly kind = 'gotenberg' as const;
  readonly endpoint: string;
  private readonly base: string;
  private readonly auth: string | null;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly queueLimit: number;
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];
  private lastProbeOk = false;
  private stopped = false;

  constructor(opts: GotenbergOptions) {
    let u: URL;
    try {
      u = new URL(opts.url);
    } catch {
      throw new ConvertError('BAD_OPTIONS', `GOTENBERG_URL is not a URL: '${opts.url}'`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ConvertError('BAD_OPTIONS', `GOTENBERG_URL must be http(s), got ${u.protocol}`);
    this.auth = u.username
      ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`
      : null;
    u.username = '';
    u.password = '';
    this.base = u.href.replace(/\/+$/, '');
    this.endpoint = `${this.base}/forms/libreoffice/convert`;
    this.timeoutMs = opts.timeoutMs ?? converterSettings().timeoutMs;
    this.concurrency = opts.concurrency ?? 8;
    this.queueLimit = opts.queueLimit ?? converterSettings().queueLimit;
  }

  async start(): Promise<void> {
    await this.ready();
  }

  /** GET /health; rejects with CONVERTER_UNAVAILABLE when the server does not answer 200. */
  async ready(): Promise<void> {
    try {
      const res = await fetch(`${this.base}/health`, { headers: this.headers(), signal: AbortSignal.timeout(5000) });
      await res.body?.cancel();
      this.lastProbeOk = res.ok;
      if (!res.ok) throw new Error(`health answered ${res.status}`);
    } catch (e) {
      this.lastProbeOk = false;
      throw new ConvertError('CONVERTER_UNAVAILABLE', `Gotenberg at ${this.base} is not reachable: ${(e as Error).message}`, { cause: e });
    }
  }

  private headers(): Record<string, string> {
    return this.auth ? { authorization: this.auth } : {};
  }

  async convert(input: Uint8Array, options: ConvertOptions): Promise<Uint8Array> {
    if (this.stopped) throw new ConvertError('SHUTDOWN', 'the converter has been stopped');
    const plan = planConversion(options);
    if (plan.to !== 'pdf')
      throw new ConvertError(
        'UNSUPPORTED',
        `Gotenberg converts to pdf only; ${plan.to} needs the embedded LibreOffice pool (unset GOTENBERG_URL)`,
      );
    if (plan.accessible) {
      throw new ConvertError(
        'UNSUPPORTED',
        "an accessible pdf needs the embedded LibreOffice pool: docgen sets the document's title and language before LibreOffice exports it, which Gotenberg's API cannot (unset GOTENBERG_URL)",
      );
    }
    if (plan.filterData?.SelectPdfVersion !== undefined && plan.pdfaPart === undefined && !plan.filterData.PDFUACompliance) {
      throw new ConvertError(
        'UNSUPPORTED',
        'Gotenberg cannot select a plain PDF version; request a PDF/A conformance or use the embedded pool',
      );
    }
    options.signal?.throwIfAborted();
    const { bytes } = sanitizeOoxml(input, plan.from);
    await this.acquire(options.signal);
    try {
      const form = new FormData();
      form.append('files', new Blob([bytes as Uint8Array<ArrayBuffer>]), `document.${plan.from}`);
      if (plan.pdfaPart !== undefined) form.append('pdfa', PDFA[plan.pdfaPart]!);
      if (plan.filterData?.PDFUACompliance) form.append('pdfua', 'true');
      if (plan.embedded) form.append('metadata', JSON.stringify(plan.embedded));
      const signals = [AbortSignal.timeout(this.timeoutMs), ...(options.signal ? [options.signal] : [])];
      let res: Response;
      try {
        res = await fetch(this.endpoint, { method: 'POST', body: form, headers: this.headers(), signal: AbortSignal.any(signals) });
      } catch (e) {
        if (options.signal?.aborted) throw new ConvertError('ABORTED', 'conversion cancelled', { cause: options.signal.reason });
        if ((e as Error).name === 'TimeoutError')
          throw new ConvertError('TIMEOUT', `Gotenberg did not answer within ${this.timeoutMs} ms`, { cause: e });
        throw new ConvertError('CONVERTER_UNAVAILABLE', `Gotenberg at ${this.base} is not reachable: ${(e as Error).message}`, {
          cause: e,
        });
      }
      let body: Uint8Array;
      try {
        body = new Uint8Array(await res.arrayBuffer());
      } catch (e) {
        if (options.signal?.aborted) throw new ConvertError('ABORTED', 'conversion cancelled', { cause: options.signal.reason });
        throw new ConvertError('TIMEOUT', `reading Gotenberg's answer failed: ${(e as Error).message}`, { cause: e });
      }
      if (!res.ok) {
        const text = new TextDecoder().decode(body.subarray(0, 500)).trim();
        // 4xx: Gotenberg refused this document or these options; 5xx/503: its side (busy, timeout).
        const code =
          res.status === 503 || res.status >= 500 ? (res.status === 503 ? 'QUEUE_FULL' : 'CONVERSION_FAILED') : 'CONVERSION_FAILED';
        throw new ConvertError(code, `Gotenberg answered ${res.status}: ${text || res.statusText}`);
      }
      if (Buffer.from(body.subarray(0, 5)).toString('latin1') !== '%PDF-')
        throw new ConvertError('CONVERSION_FAILED', 'Gotenberg answered 200 without a PDF');
      if (plan.pdfaPart !== undefined && pdfaIdentification(body)?.part !== plan.pdfaPart) {
        throw new ConvertError('CONVERSION_FAILED', `requested PDF/A-${plan.pdfaPart} but Gotenberg's output does not identify as such`);
      }
      this.lastProbeOk = true;
      checkPdfPages(body, resolveLimits(converterSettings().limits).maxPages);
      return body;
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    if (this.inFlight < this.concurrency) {
      this.inFlight++;
      return Promise.resolve();
    }
    if (this.waiters.length >= this.queueLimit) {
      return Promise.reject(
        new ConvertError('QUEUE_FULL', `converter queue is full (${this.waiters.length} waiting, limit ${this.queueLimit}); retry later`),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const go = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.inFlight++;
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(go);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new ConvertError('ABORTED', 'conversion cancelled while queued', { cause: signal?.reason }));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(go);
    });
  }

  private release(): void {
    this.inFlight--;
    this.waiters.shift()?.();
  }

  status(): ConverterStatus {
    return {
      kind: 'gotenberg',
      ready: this.lastProbeOk,
      started: true,
      queued: this.waiters.length,
      queueLimit: this.queueLimit,
      running: this.inFlight,
      instances: [],
      networkIsolation: 'remote (Gotenberg)',
      sandbox: 'remote (Gotenberg)',
      isolation: "Gotenberg's own (its container)",
    };
  }

  stop(): Promise<void> {
    this.stopped = true;
    return Promise.resolve();
  }
}

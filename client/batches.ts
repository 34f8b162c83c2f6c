// Batches (extension): one durable job that generates a document per row of a data file (the SDK side of
// POST /documents/document/generate/batch, GET /documents/batch/{id}, /rows and /cancel). Self-contained:
// its types are the OpenAPI document's (client/openapi.ts), like the rest of the SDK's.
import type { RequestOptions, Transport } from './http.ts';
import type { components } from './openapi.ts';
import type { SuccessEnvelope } from './types.ts';

export type BatchRequest = components['schemas']['BatchRequest'];
export type BatchProgress = components['schemas']['BatchProgress'];
export type BatchRow = components['schemas']['BatchRow'];
export type BatchStarted = components['schemas']['BatchStarted'];

export interface BatchStartOptions extends RequestOptions {
  /** X-Client-Authorization (common.createClientToken): the batch's summary is POSTed to its callback at the end. */
  clientAuthorization?: string;
}

export interface BatchWaitOptions {
  /** Between progress reads; default 1 s. */
  intervalMs?: number;
  /** Called with every progress read (a live progress line). */
  onProgress?: (progress: BatchProgress) => void;
  signal?: AbortSignal;
}

const seg = (s: string) => encodeURIComponent(s);

export class BatchesClient {
  private readonly t: Transport;
  constructor(t: Transport) {
    this.t = t;
  }

  /** Starts a batch: answers once it runs (201), with its id and row count; a bad request or a first row
   *  that does not merge rejects with the 400 and nothing runs. */
  async start(body: BatchRequest, opts: BatchStartOptions = {}): Promise<SuccessEnvelope<{ batch: BatchStarted }>> {
    const { clientAuthorization, ...rest } = opts;
    return this.t.json('POST', '/documents/document/generate/batch', {
      ...rest,
      json: body,
      headers: { ...rest.headers, ...(clientAuthorization ? { 'x-client-authorization': clientAuthorization } : {}) },
    });
  }

  /** Progress: counters, rate, estimated end, the combined output once written, a page of failures. */
  async get(id: string, page: { top?: number; skip?: number } = {}, opts: RequestOptions = {}): Promise<BatchProgress> {
    const env = await this.t.json<SuccessEnvelope<{ batch: BatchProgress }>>('GET', `/documents/batch/${seg(id)}`, {
      ...opts,
      query: { top: page.top, skip: page.skip },
    });
    return env.result.data.batch;
  }

  /** A page of the rows processed so far, in row order (only done or failed ones with `status`). */
  async rows(
    id: string,
    q: { status?: 'done' | 'failed'; top?: number; skip?: number } = {},
    opts: RequestOptions = {},
  ): Promise<{ rowCount: number; rows: BatchRow[] }> {
    const env = await this.t.json<SuccessEnvelope<{ rowCount: number; rows: BatchRow[] }>>('GET', `/documents/batch/${seg(id)}/rows`, {
      ...opts,
      query: { ...q },
    });
    return env.result.data;
  }

  /** Every processed row (of `status`), page after page. */
  async *allRows(id: string, status?: 'done' | 'failed', pageSize = 500): AsyncGenerator<BatchRow> {
    for (let skip = 0; ; skip += pageSize) {
      const page = await this.rows(id, { ...(status ? { status } : {}), top: pageSize, skip });
      yield* page.rows;
      if (page.rows.length < pageSize) return;
    }
  }

  /** Cancels the batch: no row starts any more, the rows in progress finish (rows done stay, no combined
   *  output is made); the answer says cancelling until the batch has stopped. */
  async cancel(id: string, opts: RequestOptions = {}): Promise<BatchProgress> {
    const env = await this.t.json<SuccessEnvelope<{ batch: BatchProgress }>>('POST', `/documents/batch/${seg(id)}/cancel`, opts);
    return env.result.data.batch;
  }

  /** Reads the progress until the batch has ended; resolves with its last progress. */
  async wait(id: string, opts: BatchWaitOptions = {}): Promise<BatchProgress> {
    for (;;) {
      const p = await this.get(id, {}, opts.signal ? { signal: opts.signal } : {});
      opts.onProgress?.(p);
      if (p.status !== 'running' && p.status !== 'cancelling') return p;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, opts.intervalMs ?? 1_000);
        opts.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(opts.signal?.reason);
          },
          { once: true },
        );
      });
    }
  }
}

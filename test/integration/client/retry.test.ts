// Retries of the SDK transport against a tiny real HTTP server (node:http, no fetch mocks): 503 then 200,
// honouring Retry-After in seconds and as an HTTP date; POSTs are retried only with an Idempotency-Key;
// a Retry-After beyond the policy's bound is not waited for.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DocgenClient,
  DocgenError,
  type GenerateRequest,
  NetworkError,
  parseRetryAfter,
  RateLimitError,
  ServerError,
  ValidationError,
} from '../../../client/index.ts';

interface Seen {
  method: string;
  url: string;
  at: number;
  headers: http.IncomingHttpHeaders;
}

describe('SDK retries (real HTTP)', () => {
  let server: http.Server;
  let base: string;
  let seen: Seen[];
  /** Answers per attempt: [status, headers, body]; the last one repeats. */
  let script: [number, Record<string, string>, unknown][];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', at: Date.now(), headers: req.headers });
        const [status, headers, body] = script[Math.min(seen.length - 1, script.length - 1)]!;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(body === undefined ? '' : JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  beforeEach(() => {
    seen = [];
  });

  const ok = (data: unknown) => ({ result: { statusCode: 200, message: 'OK', data }, origin: 'x', dateTime: 'x', operationId: 'op' });
  const unavailable = (retryAfter: string): [number, Record<string, string>, unknown] => [
    503,
    { 'retry-after': retryAfter },
    {
      error: { statusCode: 503, message: 'busy', innerErrors: [{ code: 'BUSY', message: 'busy', userMessage: 'busy' }] },
      operationId: 'op-503',
    },
  ];
  const sdk = (retries = 3) => new DocgenClient({ baseUrl: base, apiKey: 'key', accessToken: 'tok', retries, retry: { baseDelayMs: 10 } });

  it('waits Retry-After (seconds) after a 503, then succeeds', async () => {
    script = [unavailable('1'), [200, {}, ok({ documentSolutions: [], rowCount: 0 })]];
    const page = await sdk().solutions.list();
    expect(page.rowCount).toBe(0);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
    expect(seen[0]!.url).toBe('/v1/documents/solution/list');
    expect(seen[0]!.headers['x-api-key']).toBe('key');
    expect(seen[0]!.headers.authorization).toBe('Bearer tok');
  });

  it('waits Retry-After given as an HTTP date', async () => {
    script = [unavailable(new Date(Date.now() + 2000).toUTCString()), [200, {}, ok({ documentTemplate: { id: 't' } })]];
    const t = await sdk().templates.get('t');
    expect(t.id).toBe('t');
    expect(seen).toHaveLength(2);
    // HTTP dates have a one-second resolution.
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it('retries 408 and 429 too, and gives up after the bounded attempts with the typed error', async () => {
    script = [[408, {}, undefined], [429, { 'retry-after': '0' }, undefined], unavailable('0')];
    const err = await sdk(2)
      .templates.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).code).toBe('BUSY');
    expect((err as ServerError).operationId).toBe('op-503');
    expect(seen).toHaveLength(3);
  });

  it('does not retry a POST without an Idempotency-Key, and does with one', async () => {
    script = [
      unavailable('0'),
      [201, {}, { ...ok({ document: { urn: 'u' } }), result: { statusCode: 201, message: 'Created', data: { document: { urn: 'u' } } } }],
    ];
    const body: GenerateRequest = {
      template: { fileFormat: 'docx' },
      data: { loadMethod: 'Storage', urn: 'd' },
      document: { name: 'n', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en' },
    };
    await expect(sdk().generation.generate(body)).rejects.toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
    seen = [];
    const res = await sdk().generation.generate(body, { idempotencyKey: 'key-1' });
    expect(res.result.data.document.urn).toBe('u');
    expect(seen.map((s) => s.headers['idempotency-key'])).toEqual(['key-1', 'key-1']);
  });

  it('never retries a 4xx other than 408/429', async () => {
    script = [
      [
        400,
        {},
        { error: { statusCode: 400, message: 'bad', innerErrors: [{ code: 'VALIDATION_ERROR', message: 'bad', userMessage: 'bad' }] } },
      ],
    ];
    await expect(sdk().templates.get('x')).rejects.toBeInstanceOf(ValidationError);
    expect(seen).toHaveLength(1);
  });

  it('does not wait for a Retry-After beyond the bound', async () => {
    // Waiting an hour would outlast the test's own time limit; one request and the error prove no wait.
    script = [unavailable('3600')];
    await expect(sdk().templates.get('x')).rejects.toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
  });

  it('throws a 429 as RateLimitError with the Retry-After, once retrying is over or the wait is past the bound', async () => {
    const limited = (after: string): [number, Record<string, string>, unknown] => [
      429,
      { 'retry-after': after },
      {
        error: {
          statusCode: 429,
          message: 'slow down',
          innerErrors: [{ code: 'TOO_MANY_REQUESTS', message: 'slow down', userMessage: 'slow down' }],
        },
        operationId: 'op-429',
      },
    ];
    script = [limited('0'), limited('0')];
    const spent = await sdk(1)
      .templates.list()
      .catch((e: unknown) => e);
    expect(spent).toBeInstanceOf(RateLimitError);
    expect(seen).toHaveLength(2);
    expect(spent).toMatchObject({ status: 429, code: 'TOO_MANY_REQUESTS', operationId: 'op-429', retryAfterMs: 0, retryAfter: 0 });
    seen = [];
    // Past maxRetryAfterMs: not waited for; the caller gets the wait to schedule its own retry.
    script = [limited('120')];
    const later = await sdk()
      .templates.list()
      .catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(later).toBeInstanceOf(RateLimitError);
    expect((later as RateLimitError).retryAfter).toBe(120);
    expect((later as RateLimitError).retryAfterMs).toBe(120_000);
    // A RateLimitError is still a DocgenError (callers catching the base keep working).
    expect(later).toBeInstanceOf(DocgenError);
  });

  it('maps a refused connection to NetworkError after retrying', async () => {
    const dead = new DocgenClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k', accessToken: 't', retries: 1, retry: { baseDelayMs: 1 } });
    const err = await dead.templates.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).status).toBe(0);
  });

  it('parses Retry-After', () => {
    expect(parseRetryAfter('2', 0)).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('SDK construction', () => {
  it('says plainly that baseUrl is missing or not a URL, instead of failing at the first request', () => {
    const given = (baseUrl: unknown) => () =>
      new DocgenClient({ baseUrl, apiKey: 'k', accessToken: 't' } as ConstructorParameters<typeof DocgenClient>[0]);
    expect(given(undefined)).toThrow(/^DocgenClient: baseUrl is required: the service's URL, e\.g\. http:\/\/127\.0\.0\.1:8080/);
    expect(given('')).toThrow(/baseUrl is required/);
    expect(given('localhost:8080')).toThrow(/baseUrl "localhost:8080" must be an http or https URL/);
    expect(given('not a url')).toThrow(/baseUrl "not a url" is not a URL/);
    expect(new DocgenClient({ baseUrl: 'http://127.0.0.1:8080/', apiKey: 'k', accessToken: 't' }).transport.baseUrl).toBe(
      'http://127.0.0.1:8080/v1',
    );
  });
});

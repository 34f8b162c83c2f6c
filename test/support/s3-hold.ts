// A pass-through HTTP proxy in front of the run's S3 server (versitygw, started by global-setup.ts in every
// run where it is installed) that can hold one chosen request: a test points `docgen worker`/`docgen api`
// processes at it (STORAGE_URL + S3_ENDPOINT, see `s3ProxyEnv`), waits until the blob operation it cares
// about is in flight (`arrived`), SIGKILLs the worker, then lets the request go or drops it. Requests are
// forwarded byte for byte with their own Host header, so the SigV4 signatures the clients made stay valid.
//
//   when 'request' (default): held before it reaches S3, so nothing is applied until `release()`.
//   when 'answer': S3 applies it; its answer is held, so the client never learns that it succeeded.
//   drop: on `release()` the client's connection is closed without an answer instead.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../config/env.ts';
import { s3Env, s3Settings } from './s3.ts';

export interface S3Call {
  method: string;
  /** The URL path, decoded, without the query: `/<bucket>/<key>` (path-style addressing). */
  path: string;
}

export interface HoldOptions {
  when?: 'request' | 'answer';
  drop?: boolean;
}

export interface Held {
  /** Resolves when the matching request reaches the proxy (`when: 'request'`) or S3 has answered it. */
  arrived: Promise<S3Call>;
  release(): void;
}

export interface S3Proxy {
  endpoint: string;
  /** Every request seen, in order; status 0 when the client got no answer (dropped, or client gone). */
  log: (S3Call & { status: number })[];
  /** Holds the next request that matches (once). */
  hold(match: (call: S3Call) => boolean, opts?: HoldOptions): Held;
  close(): Promise<void>;
}

interface Pending {
  match: (call: S3Call) => boolean;
  opts: HoldOptions;
  hit: (call: S3Call) => void;
  released: Promise<void>;
}

export async function startS3Proxy(upstream: string): Promise<S3Proxy> {
  if (!upstream) throw new Error('no S3 server in this test run: versitygw was not found (see test/support/s3.ts)');
  const target = new URL(upstream);
  const log: S3Proxy['log'] = [];
  const holds: Pending[] = [];

  const server = http.createServer((req, res) => {
    const call: S3Call = { method: req.method ?? 'GET', path: decodeURIComponent(new URL(req.url ?? '/', 'http://proxy').pathname) };
    const entry = { ...call, status: 0 };
    log.push(entry);
    const index = holds.findIndex((h) => h.match(call));
    const held = index >= 0 ? holds.splice(index, 1)[0] : undefined;
    const when = held?.opts.when ?? 'request';
    const drop = () => req.socket.destroy();
    void (async () => {
      if (held && when === 'request') {
        held.hit(call);
        await held.released;
        if (held.opts.drop) return drop();
      }
      // Node answered any `Expect: 100-continue` already; the body is piped as it arrives.
      const headers = { ...req.headers };
      delete headers.expect;
      const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
        void (async () => {
          if (held && when === 'answer') {
            held.hit(call);
            await held.released;
            if (held.opts.drop) {
              answer.resume();
              return drop();
            }
          }
          if (res.destroyed) return answer.resume();
          entry.status = answer.statusCode ?? 0;
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        })();
      });
      out.on('error', () => drop());
      // A client killed mid-request (the SIGKILLed worker) ends its side; the forwarded request goes too.
      req.on('error', () => out.destroy());
      res.on('error', () => undefined);
      req.pipe(out);
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log,
    hold(match, opts = {}) {
      let hit!: (call: S3Call) => void;
      const arrived = new Promise<S3Call>((r) => (hit = r));
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      holds.push({ match, opts, hit, released });
      return { arrived, release };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A fresh bucket on the run's S3 server (created directly), and the environment that points `docgen`
 *  processes at it through `proxy`. */
export async function s3ProxyEnv(proxy: S3Proxy, prefix = 'docgen'): Promise<{ env: Record<string, string>; settings: Partial<Config> }> {
  const settings = await s3Settings(prefix);
  return { settings, env: s3Env({ ...settings, s3Endpoint: proxy.endpoint }) };
}

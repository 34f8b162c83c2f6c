// A real HTTP callback receiver for the async tests: records every request and answers from a per-path
// script (status and headers, consumed in order; 200 once the script is used up).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  script(path: string, answers: Answer[]): void;
  at(path: string): Delivery[];
  /** Resolves with the deliveries to `path` once there are at least `n`; rejects after `timeoutMs`. */
  waitFor(path: string, n?: number, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

/** Listens on `port` (a free one by default; a given port lets a test bring a receiver back up where a
 *  callback expects it). */
export async function startReceiver(host = '127.0.0.1', port = 0): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  const scripts = new Map<string, Answer[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      deliveries.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = scripts.get(path)?.shift() ?? { status: 200 };
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  const at = (path: string) => deliveries.filter((d) => d.path === path);
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    port: bound,
    deliveries,
    script: (path, answers) => void scripts.set(path, [...answers]),
    at,
    async waitFor(path, n = 1, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (at(path).length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} deliveries to ${path}, got ${at(path).length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return at(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

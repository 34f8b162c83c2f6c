// A local HTTPS server for fakes of services whose clients insist on https:// (Microsoft Graph's client
// strips the bearer token from any other URL). Its certificate (test/support/tls) is issued by the test CA
// that vitest.config.ts hands to every test process through NODE_EXTRA_CA_CERTS.
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TLS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tls');
export const TEST_CA_FILE = path.join(TLS, 'ca.pem');

export interface HttpsServer {
  /** https://localhost:PORT */
  url: string;
  /** https://127.0.0.1:PORT: the same server under a second host name (e.g. for upload URLs that must not get the token). */
  ipUrl: string;
  port: number;
  server: https.Server;
  close(): Promise<void>;
}

export async function startHttps(handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<HttpsServer> {
  const server = https.createServer(
    { cert: fs.readFileSync(path.join(TLS, 'server.pem')), key: fs.readFileSync(path.join(TLS, 'server-key.pem')) },
    (req, res) => {
      Promise.resolve(handler(req, res)).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'fakeFailure', message: String(err) } }));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://localhost:${port}`,
    ipUrl: `https://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// A batch's admission is bounded by the caller's wait (GENERATE_TIMEOUT_MS is its run's time limit). When
// the server stops it there (its rows' GraphQL source holds the answer), the 504 names that limit and says
// that whether the batch was made is not known: never the 24 h of a generate's or a manage's own runs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../../support/http.ts';
import { makeDocx } from '../../support/office.ts';
import { type Stack, startStack } from '../../support/stack.ts';

describe("a batch admission past the caller's wait", () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on(
      'end',
      () =>
        void held.then(() =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { customers: [{ name: 'Ada' }] } })),
        ),
    );
  });

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    stack = await startStack({ generateTimeoutMs: 1_000, outboundAllow: ['127.0.0.1'] });
    api = client(await stack.credentials());
  });
  afterAll(async () => {
    release();
    await stack?.stop();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("504 naming the admission's own limit and the batch", async () => {
    const upload = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(['Dear {name}']) }]);
    const res = await api.call('POST', '/documents/document/generate/batch', {
      json: {
        template: { urn: upload.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
        data: {
          loadMethod: 'GraphQL',
          urn: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
          query: '{ customers { name } }',
          rowsPath: 'customers',
        },
        document: { name: 'Letter {name}', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(504);
    const message = JSON.stringify(res.body.error);
    expect(message).toContain('time limit (1 s)');
    expect(message).toContain('whether it made its batch is not known');
  });
});

// Stopping the service lets an in-flight request finish, then does not hang on its keep-alive
// connection: Fastify closes only the connections that are idle when close() starts, and Node's
// server.close() would otherwise wait out the keep-alive timeout of one that became idle later. The stack's
// keep-alive timeout is 10 minutes, far past the test's own bound: a stop that waited for it fails the test
// by its timeout, while a loaded machine that is merely slow does not.
import http from 'node:http';
import { expect, it } from 'vitest';
import { startGraphqlEndpoint } from '../support/async-e2e.ts';
import { client } from '../support/http.ts';
import { makeDocx } from '../support/office.ts';
import { startStack } from '../support/stack.ts';

it('stop waits for a generate in progress, answers it, then closes its keep-alive connection at once', async () => {
  const stack = await startStack({ outboundAllow: ['127.0.0.1'], keepAliveTimeoutMs: 600_000 });
  const graphql = await startGraphqlEndpoint({ hold: true });
  const agent = new http.Agent({ keepAlive: true });
  let stopped = false;
  try {
    const creds = await stack.credentials();
    const t = await client(creds).upload('template', [{ name: 't.docx', bytes: makeDocx(['Hello {customer.name}']) }]);
    const body = JSON.stringify({
      template: { urn: t.body.result.data.files[0].id, loadMethod: 'Storage', fileFormat: 'docx' },
      data: { loadMethod: 'GraphQL', urn: graphql.url, query: '{ customer { name } }' },
      document: { name: 'late', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    });
    // A sync generate on a keep-alive connection, held inside the load-data step.
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `${creds.baseUrl}/documents/document/generate`,
        {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${creds.accessToken}`, 'x-api-key': creds.apiKey, 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    await graphql.firstHit;

    const stopping = stack.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(stopped).toBe(false);
    graphql.release();
    const res = await answered;
    expect(res.status, res.body).toBe(201);
    // Promptly after the answer; without the idle sweep this waits out the keep-alive timeout and the
    // test times out.
    await stopping;
  } finally {
    graphql.release();
    if (!stopped) await stack.stop().catch(() => undefined);
    agent.destroy();
    await graphql.close();
  }
}, 240_000);

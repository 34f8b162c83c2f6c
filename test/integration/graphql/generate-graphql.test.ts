// GraphQL data (spec 4.5, 4.8: data.loadMethod GraphQL) and images from URLs, end to end: the real service
// (API + worker + Temporal dev server), a real graphql-yoga server and a real node:http image server on
// loopback. The stack's OUTBOUND_ALLOW names 127.0.0.1 only, so servers on 127.0.0.2 stand for addresses
// the guarded client must refuse.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readZip } from '../../../engine/zip.ts';
import { PNG_2x1 } from '../../unit/engine/helpers.ts';
import { docxParagraphs, makeDocx } from '../../support/office.ts';
import { client } from '../../support/http.ts';
import { type Stack, startStack } from '../../support/stack.ts';
import { generateWorkflowId } from '../../../api/temporal.ts';

interface Server {
  url: string;
  hits: string[];
  close(): Promise<void>;
}

async function listen(handler: http.RequestListener, host: string): Promise<Server> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const customers: Record<string, { id: string; name: string; logo: string; orders: { ref: string; total: number }[] }> = {
  c1: {
    id: 'c1',
    name: 'Ada Lovelace',
    logo: '',
    orders: [
      { ref: 'A-1', total: 12.5 },
      { ref: 'A-2', total: 30 },
    ],
  },
};

function graphqlServer(host: string, imageBase: () => string): Promise<Server> {
  const yoga = createYoga({
    logging: false,
    maskedErrors: false,
    graphqlEndpoint: '/graphql',
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        type Order {
          ref: String!
          total: Float!
        }
        type Customer {
          id: ID!
          name: String!
          logo: String!
          orders(limit: Int): [Order!]!
        }
        type Query {
          customer(id: ID!): Customer
          secret: String!
        }
      `,
      resolvers: {
        Query: {
          customer: (_: unknown, args: { id: string }) => {
            const c = customers[args.id];
            if (!c) throw new GraphQLError(`no customer with id ${args.id}`);
            return { ...c, logo: `${imageBase()}/logo.png` };
          },
          secret: (_: unknown, __: unknown, ctx: { request: Request }) => {
            if (ctx.request.headers.get('authorization') !== 'Bearer s3cret')
              throw new GraphQLError('not authorized: a valid bearer token is required');
            return 'the treasure';
          },
        },
        Customer: {
          orders: (c: { orders: unknown[] }, args: { limit?: number | null }) => (args.limit ? c.orders.slice(0, args.limit) : c.orders),
        },
      },
    }),
  });
  return listen((req, res) => void yoga(req, res), host);
}

function imageServer(host: string, redirectTo?: () => string): Promise<Server> {
  return listen((req, res) => {
    if (req.url === '/logo.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_2x1);
    } else if (req.url === '/page') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an image</html>');
    } else if (req.url === '/redirect' && redirectTo) {
      res.writeHead(302, { location: `${redirectTo()}/logo.png` }).end();
    } else {
      res.writeHead(404).end();
    }
  }, host);
}

const QUERY = 'query Customer($id: ID!, $limit: Int) { customer(id: $id) { name logo orders(limit: $limit) { ref total } } }';

describe('generate with GraphQL data and images from URLs', () => {
  let stack: Stack;
  let api: ReturnType<typeof client>;
  let subscriptionId: string;
  let gql: Server;
  let blockedGql: Server;
  let images: Server;
  let blockedImages: Server;

  beforeAll(async () => {
    blockedImages = await imageServer('127.0.0.2');
    images = await imageServer('127.0.0.1', () => blockedImages.url);
    [stack, gql, blockedGql] = await Promise.all([
      startStack({ outboundAllow: ['127.0.0.1'], outboundTimeoutMs: 5_000 }),
      graphqlServer('127.0.0.1', () => images.url),
      graphqlServer('127.0.0.2', () => images.url),
    ]);
    const creds = await stack.credentials();
    subscriptionId = creds.subscriptionId;
    api = client(creds);
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([gql?.close(), blockedGql?.close(), images?.close(), blockedImages?.close()]);
  });

  /** Uploads are consumed by a generate: every request gets a fresh template. */
  async function template(paragraphs: string[]): Promise<string> {
    const t = await api.upload('template', [{ name: 't.docx', bytes: makeDocx(paragraphs) }]);
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    return t.body.result.data.files[0].id as string;
  }
  async function dataFile(data: unknown): Promise<string> {
    const d = await api.upload('data', [{ name: 'd.json', bytes: JSON.stringify(data) }]);
    return d.body.result.data.files[0].id as string;
  }
  function body(templateUrn: string, data: Record<string, unknown>) {
    return {
      template: { urn: templateUrn, loadMethod: 'Storage', fileFormat: 'docx' },
      data,
      document: { name: 'out', fileFormat: 'docx', deliveryMethod: 'Storage', path: 'root', timezone: 'UTC', locale: 'en-US' },
    };
  }
  const generate = (json: unknown) => api.call('POST', '/documents/document/generate', { json });
  async function downloaded(res: { body: Record<string, any> }) {
    const file = await api.download(res.body.result.data.document.urn as string);
    expect(file.status).toBe(200);
    return file.bytes;
  }

  it('merges the query result, with graphql variables, into a docx', async () => {
    const urn = await template(['Dear {customer.name},', '{#customer.orders}{ref}: {total}{/customer.orders}', 'Limit {limit}']);
    const res = await generate(
      body(urn, {
        loadMethod: 'GraphQL',
        urn: `${gql.url}/graphql`,
        query: QUERY,
        variables: [
          { name: 'id', value: 'c1', type: 'graphql' },
          { name: 'limit', value: 1, type: 'graphql' },
        ],
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(docxParagraphs(await downloaded(res))).toEqual(['Dear Ada Lovelace,', 'A-1: 12.5', 'Limit 1']);
  });

  it('accepts the query as JSON text with its variables, and sends header variables to the endpoint only', async () => {
    const urn = await template(['{secret} / {customer.orders.length} orders / [{Authorization}]']);
    const res = await generate(
      body(urn, {
        loadMethod: 'GraphQL',
        urn: `${gql.url}/graphql`,
        query: JSON.stringify({ query: 'query($id: ID!) { secret customer(id: $id) { orders { ref } } }', variables: { id: 'c1' } }),
        variables: [{ name: 'Authorization', value: 'Bearer s3cret', type: 'header' }],
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // The credential is not template data.
    expect(docxParagraphs(await downloaded(res))).toEqual(['the treasure / 2 orders / []']);
    // Nor is it in the workflow's history (what the Temporal UI shows): it travels sealed.
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const history = await new Client({ connection }).workflow
        .getHandle(generateWorkflowId(subscriptionId, res.body.operationId))
        .fetchHistory();
      // Every payload of every event, decoded.
      const decoded: string[] = [];
      const walk = (v: unknown): void => {
        if (v instanceof Uint8Array) decoded.push(Buffer.from(v).toString());
        else if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === 'object') Object.values(v).forEach(walk);
      };
      walk(history.events);
      expect(decoded.join('\n')).toMatch(/"Authorization","value":"sealed:/);
      expect(decoded.join('\n')).not.toContain('s3cret');
    } finally {
      await connection.close();
    }
  });

  it('leaves no scratch file when the merge fails after the query ran', async () => {
    const urn = await template(['{#customer}{name}']);
    const res = await generate(
      body(urn, {
        loadMethod: 'GraphQL',
        urn: `${gql.url}/graphql`,
        query: QUERY,
        variables: [{ name: 'id', value: 'c1', type: 'graphql' }],
      }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_ERROR');
    // The query's result was written to the run's scratch before the merge failed.
    expect(await stack.blobs.list(`scratch/${generateWorkflowId(subscriptionId, res.body.operationId)}/`)).toEqual([]);
  });

  it("answers 400 with the GraphQL server's messages", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ query: QUERY, variables: [{ name: 'id', value: 'nobody', type: 'graphql' }] }, /no customer with id nobody/],
      [{ query: '{ customer(id: "c1") { shoeSize } }' }, /Cannot query field "shoeSize" on type "Customer"/],
      [
        { query: '{ secret }', variables: [{ name: 'Authorization', value: 'Bearer wrong', type: 'header' }] },
        /not authorized: a valid bearer token is required/,
      ],
    ];
    for (const [data, message] of cases) {
      const res = await generate(body(await template(['{customer.name}']), { loadMethod: 'GraphQL', urn: `${gql.url}/graphql`, ...data }));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
      expect(res.body.error.innerErrors.map((e: { message: string }) => e.message).join('\n')).toMatch(message);
      expect(res.body.error.innerErrors[0].message).toMatch(/^GraphQL: /);
    }
  });

  it('answers 400 for an endpoint the allow-list does not cover, an unreachable one, or a non-GraphQL answer', async () => {
    const cases: [string, RegExp][] = [
      [`${blockedGql.url}/graphql`, /127\.0\.0\.2 is not reachable from this service \(loopback\).*OUTBOUND_ALLOW/],
      [`http://[::ffff:127.0.0.2]:${new URL(blockedGql.url).port}/graphql`, /not reachable from this service/],
      [`${images.url}/nothing-here`, /answered HTTP 404 without a GraphQL result/],
      [`${images.url}/redirect`, /answered HTTP 302/],
      ['http://127.0.0.1:1/graphql', /cannot be reached|failed/],
    ];
    for (const [endpoint, message] of cases) {
      const res = await generate(
        body(await template(['{customer.name}']), { loadMethod: 'GraphQL', urn: endpoint, query: '{ customer(id: "c1") { name } }' }),
      );
      expect(res.status, `${endpoint}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('DATA_NOT_FOUND');
      expect(res.body.error.message, endpoint).toMatch(message);
    }
    expect(blockedGql.hits).toEqual([]);
    expect(blockedImages.hits).toEqual([]);
  });

  it('validates the GraphQL request before anything is queued', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ urn: `${gql.url}/graphql` }, /data\.query is required/],
      [{ urn: `${gql.url}/graphql`, query: '  ' }, /data\.query is required/],
      [{ urn: `${gql.url}/graphql`, query: 'query { customer(id: ' }, /not a valid GraphQL document/],
      [{ urn: 'not a url', query: '{ secret }' }, /absolute http or https URL/],
      [{ urn: 'ftp://example.com/graphql', query: '{ secret }' }, /http or https URL/],
      [{ urn: `http://user:pw@127.0.0.1:1/graphql`, query: '{ secret }' }, /must not carry credentials/],
      [
        { urn: `${gql.url}/graphql`, query: '{ secret }', variables: [{ name: 'Host', value: 'x', type: 'header' }] },
        /cannot be sent as a header/,
      ],
      [{ urn: `${gql.url}/graphql`, query: '{ secret }', variables: [{ name: 'X-A', value: 'a\r\nb', type: 'header' }] }, /single-line/],
      [
        { urn: `${gql.url}/graphql`, query: '{ secret }', variables: [{ name: '1x', value: 1, type: 'graphql' }] },
        /not a GraphQL variable name/,
      ],
    ];
    const before = gql.hits.length;
    for (const [data, message] of cases) {
      const res = await generate(body('3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11', { loadMethod: 'GraphQL', ...data }));
      expect(res.status, JSON.stringify(data)).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('VALIDATION_ERROR');
      expect(res.body.error.message, JSON.stringify(data)).toMatch(message);
    }
    const unknown = await generate(body('3f1e9a43-1111-4c1f-9f3e-3d2b0c8a9e11', { loadMethod: 'Ftp', urn: 'x' }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/data\.loadMethod must be one of Storage, DriveA, DriveB, GraphQL/);
    expect(gql.hits.length).toBe(before);
  });

  it('renders an image given as a URL (from GraphQL data and from a data file) into word/media', async () => {
    const fromGraphql = await generate(
      body(await template(['{customer.name}', '{%customer.logo}']), {
        loadMethod: 'GraphQL',
        urn: `${gql.url}/graphql`,
        query: '{ customer(id: "c1") { name logo } }',
      }),
    );
    expect(fromGraphql.status, JSON.stringify(fromGraphql.body)).toBe(201);
    const files = [...readZip(await downloaded(fromGraphql)).keys()];
    expect(files.some((f) => /^word\/media\/.+\.png$/.test(f))).toBe(true);

    const fromFile = await generate(
      body(await template(['{%logo}']), {
        loadMethod: 'Storage',
        urn: await dataFile({ logo: { data: `${images.url}/logo.png`, width: 50 } }),
      }),
    );
    expect(fromFile.status, JSON.stringify(fromFile.body)).toBe(201);
    expect([...readZip(await downloaded(fromFile)).keys()].some((f) => f.startsWith('word/media/'))).toBe(true);
    expect(images.hits.filter((h) => h === '/logo.png').length).toBeGreaterThanOrEqual(2);
  });

  it('fails cleanly (400 TEMPLATE_ERROR at the tag) for a blocked, redirected-to-blocked or non-image URL', async () => {
    const cases: [string, RegExp][] = [
      [`${blockedImages.url}/logo.png`, /could not be fetched: .*127\.0\.0\.2 is not reachable from this service/],
      [`${images.url}/redirect`, /could not be fetched: .*127\.0\.0\.2 is not reachable from this service/],
      [`${images.url}/page`, /could not be fetched: the answer is text\/html, not an image/],
      [`${images.url}/missing.png`, /could not be fetched: HTTP 404/],
    ];
    for (const [url, message] of cases) {
      const res = await generate(body(await template(['Logo: {%logo}']), { loadMethod: 'Storage', urn: await dataFile({ logo: url }) }));
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.innerErrors[0].code).toBe('TEMPLATE_ERROR');
      expect(res.body.error.innerErrors[0].message, url).toMatch(message);
    }
    expect(blockedImages.hits).toEqual([]);
  });
});

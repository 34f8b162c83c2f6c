// A local Salesforce for tests: the slice of the REST API the crm location uses, faithful enough that the
// real client (@jsforce/jsforce-node) talks to it unchanged over plain HTTP.
//   POST /services/oauth2/token            client_credentials (client_id/secret in the form or Basic auth) and
//                                          JWT bearer (RS256 assertion: iss client id, sub username, aud login
//                                          URL, exp); answers {access_token, instance_url, id, ...}; jsforce
//                                          needs `id` (.../id/<org>/<user>).
//   POST /services/data/vNN.N/sobjects/ContentVersion   JSON (VersionData base64) or multipart/form-data
//                                          (a JSON part, named entity_content or after the sObject, and a
//                                          binary part named VersionData, in either order); with
//                                          ContentDocumentId a new version of that file.
//   GET  /services/data/vNN.N/query?q=SELECT f1, f2 FROM ContentVersion WHERE Field = '...' [AND IsLatest = true]
//   GET  /services/data/vNN.N/sobjects/ContentVersion/{id}[/VersionData]
//   DELETE /services/data/vNN.N/sobjects/ContentDocument/{id}   (all versions)
// Errors are Salesforce's array body [{message, errorCode, fields}]. Faults: expireSessions() makes every
// issued token answer 401 INVALID_SESSION_ID (a new token works), failNext() answers the next N data
// requests with a status (503), jsonBodyLimit refuses larger JSON bodies with 413 like the real body limit.
// Where the vendor documentation is silent, the fake is strict on purpose (marked as our reading, not
// Salesforce's documented behaviour): a new version (ContentDocumentId) refuses FirstPublishLocationId and
// NetworkId, the 413 status and REQUEST_ENTITY_TOO_LARGE code of an over-limit JSON body are this fake's.
import { createPublicKey, randomBytes, verify as verifySignature } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SalesforceClient {
  clientId: string;
  /** client_credentials flow; the run-as user is `userId`. */
  clientSecret?: string;
  /** JWT bearer flow: the PEM public key that verifies the assertion, and the usernames it may name. */
  publicKeyPem?: string;
  usernames?: string[];
  userId?: string;
}

export interface ContentVersionRow {
  Id: string;
  ContentDocumentId: string;
  Title: string;
  PathOnClient: string;
  FileExtension: string;
  FileType: string;
  VersionNumber: string;
  IsLatest: boolean;
  FirstPublishLocationId: string | null;
  NetworkId: string | null;
  OwnerId: string;
  ContentSize: number;
  data: Buffer;
  /** How it arrived: 'json' or 'multipart', and the part order for multipart. */
  uploadedVia: 'json' | 'multipart';
  /** The client id whose token created it. */
  createdByClient: string;
}

export interface SalesforceFake {
  url: string;
  orgId: string;
  versions: Map<string, ContentVersionRow>;
  /** ContentDocument id -> its version ids, oldest first. */
  documents: Map<string, string[]>;
  /** Record ids a FirstPublishLocationId / OwnerId / NetworkId may name (Accounts, Users, Networks). */
  knownIds: Set<string>;
  /** Every request: method, path (without query), the token's client id when it had one. */
  requests: { method: string; path: string; client?: string; status: number; contentType?: string }[];
  tokenGrants: { grant: string; clientId: string; ok: boolean }[];
  /** Largest JSON body accepted by sobject inserts (the real limit is about 50 MB). */
  jsonBodyLimit: number;
  expireSessions(): void;
  failNext(status: number, count?: number): void;
  addClient(c: SalesforceClient): void;
  close(): Promise<void>;
}

const ID_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** An 18-character Salesforce id with the given 3-character key prefix (068 ContentVersion, 069 ContentDocument). */
export function sfId(prefix: string): string {
  const bytes = randomBytes(15);
  let s = prefix;
  for (let i = 0; i < 15; i++) s += ID_CHARS[bytes[i]! % ID_CHARS.length];
  return s;
}

const QUERY_COLUMNS = new Set(['Id', 'ContentDocumentId', 'Title', 'PathOnClient', 'FileExtension', 'FileType', 'VersionNumber', 'IsLatest', 'FirstPublishLocationId', 'NetworkId', 'OwnerId', 'ContentSize']);

const FILE_TYPES: Record<string, string> = { docx: 'WORD_X', xlsx: 'EXCEL_X', pptx: 'POWER_POINT_X', pdf: 'PDF', csv: 'CSV' };

interface Token {
  clientId: string;
  userId: string;
  expired: boolean;
}

type Errors = { message: string; errorCode: string; fields?: string[] }[];

export async function startSalesforceFake(opts: { clients?: SalesforceClient[]; jsonBodyLimit?: number } = {}): Promise<SalesforceFake> {
  const clients = new Map<string, SalesforceClient>();
  for (const c of opts.clients ?? []) clients.set(c.clientId, c);
  const tokens = new Map<string, Token>();
  const orgId = '00D' + 'x'.repeat(12) + 'AAA';
  let failures: { status: number; left: number } | undefined;
  const fake: SalesforceFake = {
    url: '',
    orgId,
    versions: new Map(),
    documents: new Map(),
    knownIds: new Set(),
    requests: [],
    tokenGrants: [],
    jsonBodyLimit: opts.jsonBodyLimit ?? 50 * 1024 * 1024,
    expireSessions() {
      for (const t of tokens.values()) t.expired = true;
    },
    failNext(status, count = 1) {
      failures = { status, left: count };
    },
    addClient(c) {
      clients.set(c.clientId, c);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', fake.url);
      const entry: SalesforceFake['requests'][number] = { method: req.method ?? 'GET', path: url.pathname, status: 0, contentType: req.headers['content-type'] };
      fake.requests.push(entry);
      const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
        entry.status = status;
        if (payload === undefined) {
          res.writeHead(status, headers).end();
        } else if (Buffer.isBuffer(payload)) {
          res.writeHead(status, { 'content-type': 'application/octet-stream', ...headers }).end(payload);
        } else {
          res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers }).end(JSON.stringify(payload));
        }
      };
      const fail = (status: number, errorCode: string, message: string, fields: string[] = []) => send(status, [{ message, errorCode, fields }] satisfies Errors);
      try {
        if (url.pathname === '/services/oauth2/token' && req.method === 'POST') return token(req, body, send);
        const m = /^\/services\/data\/v(\d+\.\d+)(\/.*)$/.exec(url.pathname);
        if (!m) return fail(404, 'NOT_FOUND', `The requested resource does not exist: ${url.pathname}`);
        const auth = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
        const tok = auth ? tokens.get(auth[1]!) : undefined;
        if (!tok || tok.expired) return fail(401, 'INVALID_SESSION_ID', 'Session expired or invalid');
        entry.client = tok.clientId;
        if (failures && failures.left > 0) {
          failures.left--;
          return fail(failures.status, 'SERVER_UNAVAILABLE', 'The server is temporarily unavailable');
        }
        return data(req.method ?? 'GET', m[2]!, url, req.headers['content-type'] ?? '', body, tok, send, fail);
      } catch (err) {
        return fail(500, 'UNKNOWN_EXCEPTION', (err as Error).message);
      }
    });
  });

  function token(req: http.IncomingMessage, body: Buffer, send: (s: number, p?: unknown) => void) {
    const form = new URLSearchParams(body.toString('utf8'));
    const grant = form.get('grant_type') ?? '';
    const refuse = (clientId: string, error: string, description: string) => {
      fake.tokenGrants.push({ grant, clientId, ok: false });
      send(400, { error, error_description: description });
    };
    let clientId: string;
    let userId: string;
    if (grant === 'client_credentials') {
      let id = form.get('client_id') ?? '';
      let secret = form.get('client_secret') ?? '';
      const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
      if (basic) [id = '', secret = ''] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      const c = clients.get(id);
      if (!c) return refuse(id, 'invalid_client_id', 'client identifier invalid');
      if (!c.clientSecret || c.clientSecret !== secret) return refuse(id, 'invalid_client', 'invalid client credentials');
      clientId = id;
      userId = c.userId ?? '005' + 'u'.repeat(12) + 'AAA';
    } else if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const parts = (form.get('assertion') ?? '').split('.');
      if (parts.length !== 3) return refuse('', 'invalid_grant', 'invalid assertion');
      let header: Record<string, unknown>;
      let claims: Record<string, unknown>;
      try {
        header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
        claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
      } catch {
        return refuse('', 'invalid_grant', 'invalid assertion');
      }
      const c = clients.get(String(claims.iss));
      if (!c || !c.publicKeyPem) return refuse(String(claims.iss), 'invalid_client_id', 'client identifier invalid');
      const ok =
        header.alg === 'RS256' &&
        verifySignature('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), createPublicKey(c.publicKeyPem), Buffer.from(parts[2]!, 'base64url'));
      if (!ok) return refuse(c.clientId, 'invalid_grant', 'invalid assertion signature');
      if (typeof claims.exp !== 'number' || claims.exp < Date.now() / 1000) return refuse(c.clientId, 'invalid_grant', 'expired authorization code');
      if (claims.aud !== fake.url && claims.aud !== 'https://login.salesforce.com' && claims.aud !== 'https://test.salesforce.com') {
        return refuse(c.clientId, 'invalid_grant', 'audience is invalid');
      }
      if (!(c.usernames ?? []).includes(String(claims.sub))) return refuse(c.clientId, 'invalid_grant', 'user hasn\'t approved this consumer');
      clientId = c.clientId;
      userId = c.userId ?? '005' + 'j'.repeat(12) + 'AAA';
    } else {
      return refuse('', 'unsupported_grant_type', 'grant type not supported');
    }
    const access = `${orgId}!${randomBytes(24).toString('base64url')}`;
    tokens.set(access, { clientId, userId, expired: false });
    fake.tokenGrants.push({ grant, clientId, ok: true });
    send(200, {
      access_token: access,
      instance_url: fake.url,
      id: `${fake.url}/id/${orgId}/${userId}`,
      token_type: 'Bearer',
      issued_at: String(Date.now()),
      signature: randomBytes(32).toString('base64'),
    });
  }

  function data(
    method: string,
    path: string,
    url: URL,
    contentType: string,
    body: Buffer,
    tok: Token,
    send: (s: number, p?: unknown, h?: Record<string, string>) => void,
    fail: (s: number, code: string, message: string, fields?: string[]) => void,
  ) {
    if (method === 'POST' && path === '/sobjects/ContentVersion') {
      let fields: Record<string, unknown>;
      let bytes: Buffer | undefined;
      let via: 'json' | 'multipart';
      if (/^multipart\/form-data/i.test(contentType)) {
        via = 'multipart';
        const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
        if (!boundary) return fail(400, 'INVALID_MULTIPART_REQUEST', 'Multipart message has no boundary');
        const parts = parseMultipart(body, boundary[1] ?? boundary[2]!);
        const json = parts.find((p) => /application\/json/i.test(p.contentType ?? '') && (p.name === 'entity_content' || p.name === 'ContentVersion'));
        if (!json) return fail(400, 'INVALID_MULTIPART_REQUEST', 'Multipart message must include a non-binary part');
        try {
          fields = JSON.parse(json.body.toString('utf8')) as Record<string, unknown>;
        } catch {
          return fail(400, 'JSON_PARSER_ERROR', 'The non-binary part is not JSON');
        }
        const bin = parts.find((p) => p !== json && p.name === 'VersionData');
        if (!bin) return fail(400, 'INVALID_MULTIPART_REQUEST', 'Multipart message must include a binary part named VersionData');
        bytes = bin.body;
      } else {
        via = 'json';
        if (body.length > fake.jsonBodyLimit) return fail(413, 'REQUEST_ENTITY_TOO_LARGE', `The request body exceeds ${fake.jsonBodyLimit} bytes; use a multipart request`);
        try {
          fields = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        } catch {
          return fail(400, 'JSON_PARSER_ERROR', 'The request body is not JSON');
        }
        if (typeof fields.VersionData === 'string') bytes = Buffer.from(fields.VersionData, 'base64');
      }
      const known = new Set(['Title', 'PathOnClient', 'VersionData', 'FirstPublishLocationId', 'NetworkId', 'OwnerId', 'ContentDocumentId', 'Description', 'ReasonForChange']);
      const unknown = Object.keys(fields).filter((k) => !known.has(k));
      if (unknown.length) return fail(400, 'INVALID_FIELD', `No such column '${unknown[0]}' on sobject of type ContentVersion`, unknown);
      if (typeof fields.PathOnClient !== 'string' || !fields.PathOnClient) return fail(400, 'REQUIRED_FIELD_MISSING', 'Required fields are missing: [PathOnClient]', ['PathOnClient']);
      if (!bytes) return fail(400, 'REQUIRED_FIELD_MISSING', 'Required fields are missing: [VersionData]', ['VersionData']);
      const ref = (name: string) => {
        const v = fields[name];
        if (v === undefined || v === null || v === '') return null;
        if (typeof v !== 'string' || !fake.knownIds.has(v)) throw Object.assign(new Error(`invalid cross reference id: ${name}`), { field: name });
        return v;
      };
      let docId: string;
      let parent: string | null;
      let network: string | null;
      let owner: string;
      try {
        owner = ref('OwnerId') ?? tok.userId;
        if (typeof fields.ContentDocumentId === 'string' && fields.ContentDocumentId) {
          // A new version of an existing file: the location, network and first publish are the file's.
          const versions = fake.documents.get(fields.ContentDocumentId);
          if (!versions) return fail(400, 'INVALID_CROSS_REFERENCE_KEY', 'invalid cross reference id', ['ContentDocumentId']);
          if (fields.FirstPublishLocationId) return fail(400, 'FIELD_INTEGRITY_EXCEPTION', 'FirstPublishLocationId can be set on the first version only', ['FirstPublishLocationId']);
          if (fields.NetworkId) return fail(400, 'FIELD_INTEGRITY_EXCEPTION', 'NetworkId can be set on the first version only', ['NetworkId']);
          docId = fields.ContentDocumentId;
          const first = fake.versions.get(versions[0]!)!;
          parent = first.FirstPublishLocationId;
          network = first.NetworkId;
        } else {
          docId = sfId('069');
          fake.documents.set(docId, []);
          parent = ref('FirstPublishLocationId');
          network = ref('NetworkId');
        }
      } catch (err) {
        const field = (err as { field?: string }).field ?? '';
        return fail(400, 'INVALID_CROSS_REFERENCE_KEY', `invalid cross reference id`, [field]);
      }
      const versions = fake.documents.get(docId)!;
      for (const id of versions) fake.versions.get(id)!.IsLatest = false;
      const pathOnClient = fields.PathOnClient;
      const ext = /\.([^.]+)$/.exec(pathOnClient)?.[1]?.toLowerCase() ?? '';
      const row: ContentVersionRow = {
        Id: sfId('068'),
        ContentDocumentId: docId,
        Title: typeof fields.Title === 'string' && fields.Title ? fields.Title : pathOnClient.replace(/\.[^.]+$/, ''),
        PathOnClient: pathOnClient,
        FileExtension: ext,
        FileType: FILE_TYPES[ext] ?? 'UNKNOWN',
        VersionNumber: String(versions.length + 1),
        IsLatest: true,
        FirstPublishLocationId: parent,
        NetworkId: network,
        OwnerId: owner,
        ContentSize: bytes.length,
        data: bytes,
        uploadedVia: via,
        createdByClient: tok.clientId,
      };
      fake.versions.set(row.Id, row);
      versions.push(row.Id);
      return send(201, { id: row.Id, success: true, errors: [] });
    }
    if (method === 'GET' && path === '/query') {
      const q = url.searchParams.get('q') ?? '';
      const m = /^\s*SELECT\s+(.+?)\s+FROM\s+ContentVersion\s+WHERE\s+(\w+)\s*=\s*'([^']*)'(\s+AND\s+IsLatest\s*=\s*true)?\s*$/i.exec(q);
      if (!m) return fail(400, 'MALFORMED_QUERY', `this fake understands SELECT ... FROM ContentVersion WHERE Field = '...' [AND IsLatest = true], not: ${q}`);
      const cols = m[1]!.split(',').map((s) => s.trim());
      const where = m[2]!;
      const rows = [...fake.versions.values()].filter((v) => String((v as unknown as Record<string, unknown>)[where]) === m[3] && (!m[4] || v.IsLatest));
      for (const c of [...cols, where]) if (!QUERY_COLUMNS.has(c)) return fail(400, 'INVALID_FIELD', `No such column '${c}' on entity 'ContentVersion'`);
      return send(200, {
        totalSize: rows.length,
        done: true,
        records: rows.map((r) => ({
          attributes: { type: 'ContentVersion', url: `/services/data/v${url.pathname.split('/v')[1]?.split('/')[0]}/sobjects/ContentVersion/${r.Id}` },
          ...Object.fromEntries(cols.map((c) => [c, (r as unknown as Record<string, unknown>)[c]])),
        })),
      });
    }
    const cv = /^\/sobjects\/ContentVersion\/(\w+)(\/VersionData)?$/.exec(path);
    if (method === 'GET' && cv) {
      const row = fake.versions.get(cv[1]!);
      if (!row) return fail(404, 'NOT_FOUND', 'The requested resource does not exist');
      if (cv[2]) return send(200, row.data);
      const { data: _bytes, uploadedVia: _via, createdByClient: _by, ...fields } = row;
      return send(200, { attributes: { type: 'ContentVersion' }, ...fields });
    }
    const cd = /^\/sobjects\/ContentDocument\/(\w+)$/.exec(path);
    if (method === 'DELETE' && cd) {
      const versions = fake.documents.get(cd[1]!);
      if (!versions) return fail(404, 'ENTITY_IS_DELETED', 'entity is deleted');
      for (const id of versions) fake.versions.delete(id);
      fake.documents.delete(cd[1]!);
      return send(204);
    }
    return fail(404, 'NOT_FOUND', `The requested resource does not exist: ${method} ${path}`);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

interface Part {
  name?: string;
  filename?: string;
  contentType?: string;
  body: Buffer;
}

function parseMultipart(body: Buffer, boundary: string): Part[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Part[] = [];
  let pos = body.indexOf(delimiter);
  while (pos >= 0) {
    const start = pos + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    // Skip the CRLF after the delimiter; the part ends with CRLF before the next delimiter.
    const part = body.subarray(start + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    if (split >= 0) {
      const head = part.subarray(0, split).toString('utf8');
      const p: Part = { body: Buffer.from(part.subarray(split + 4)) };
      for (const line of head.split('\r\n')) {
        const [k, ...rest] = line.split(':');
        const v = rest.join(':').trim();
        if (/^content-disposition$/i.test(k ?? '')) {
          p.name = /\bname="([^"]*)"/.exec(v)?.[1];
          p.filename = /\bfilename="([^"]*)"/.exec(v)?.[1];
        } else if (/^content-type$/i.test(k ?? '')) {
          p.contentType = v;
        }
      }
      parts.push(p);
    }
    pos = next;
  }
  return parts;
}

// A local Google API server for tests: Drive v3 (files, uploads, export, copy, parents, trash, permissions),
// Docs v1, Sheets v4, Slides v1 and the OAuth token endpoint, on one plain-HTTP loopback port (the real
// googleapis / google-auth-library clients talk to it; paths of the four APIs do not collide). Stateful
// and strict where docgen can get it wrong: bearer tokens per identity, files visible only to their owner
// or a shared drive's members, shared-drive items hidden unless the call says supportsAllDrives /
// includeItemsFromAllDrives, the 256 KiB rule of resumable uploads, the 10 MB export cap, service accounts
// without storage quota, no notification e-mail to an address without a Google account.
//
// Native files hold the Office package they were converted from (office-model.ts): export returns it;
// the Docs/Sheets/Slides calls read and rewrite its text. PDF export is not rendered (docgen converts
// with its own converter).
//
// Every request is logged with its Host; the server is also an HTTP proxy that serves nothing: a test sets
// HTTP(S)_PROXY to it, so a request the client sends to any other host (e.g. www.googleapis.com) lands
// in `foreign` instead of leaving the machine.
import { createHash, createPublicKey, randomUUID, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  docReplaceAllText,
  docResource,
  presentationResource,
  sheetFindReplace,
  slideCount,
  slidesRemoveShapesContaining,
  slidesReplaceAllText,
  spreadsheetResource,
  spreadsheetValues,
} from './office-model.ts';

export const MIME = {
  folder: 'application/vnd.google-apps.folder',
  document: 'application/vnd.google-apps.document',
  spreadsheet: 'application/vnd.google-apps.spreadsheet',
  presentation: 'application/vnd.google-apps.presentation',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  pdf: 'application/pdf',
  json: 'application/json',
} as const;

/** Native type -> the Office type it converts from and exports to. */
const TWIN: Record<string, string> = { [MIME.document]: MIME.docx, [MIME.spreadsheet]: MIME.xlsx, [MIME.presentation]: MIME.pptx };
const EXPORTS: Record<string, string[]> = {
  [MIME.document]: [MIME.docx, MIME.pdf, 'text/plain'],
  [MIME.spreadsheet]: [MIME.xlsx, MIME.pdf, 'text/csv'],
  [MIME.presentation]: [MIME.pptx, MIME.pdf],
};
const CHUNK = 256 * 1024;

export interface FakeFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  owner: string;
  driveId?: string;
  trashed: boolean;
  content: Buffer;
  appProperties: Record<string, string>;
  permissions: FakePermission[];
  /** Slides images placed by replaceAllShapesWithImage (the fake fetched each URL). */
  images: { pageObjectId: string; objectId: string; sourceUrl: string; sha256: string; contentType: string }[];
  createdTime: string;
}

export interface FakePermission {
  id: string;
  type: string;
  role: string;
  emailAddress?: string;
  allowFileDiscovery?: boolean;
  sendNotificationEmail: boolean;
}

export interface LoggedRequest {
  method: string;
  host: string;
  path: string;
  query: Record<string, string>;
  /** The identity of the bearer token (user e-mail or service account), if any. */
  user?: string;
  status?: number;
}

interface Identity {
  user: string;
  /** A service account acting as itself (no domain-wide delegation): no storage quota. */
  serviceAccount: boolean;
}

interface Session {
  meta: Record<string, unknown>;
  total: number;
  contentType: string;
  received: Buffer[];
  size: number;
  identity: Identity;
  query: Record<string, string>;
  done?: FakeFile;
}

interface Fault {
  status: number;
  reason: string;
  match: (r: LoggedRequest) => boolean;
}

export interface GoogleFake {
  url: string;
  files: Map<string, FakeFile>;
  requests: LoggedRequest[];
  /** Hosts of requests that reached the proxy side (i.e. were meant for somewhere else). */
  foreign: string[];
  /** Issued access tokens -> identity. */
  tokensIssued: { grant: string; user: string }[];
  /** Export cap (Drive: 10 MB); tests lower it. */
  exportCapBytes: number;
  addOAuthClient(c: { clientId: string; clientSecret: string; refreshToken: string; user: string }): void;
  addServiceAccount(sa: { clientEmail: string; publicKeyPem: string; /** users it may impersonate (domain-wide delegation) */ delegates?: string[] }): void;
  addSharedDrive(driveId: string, members: string[]): void;
  /** The My Drive root folder id of a user. */
  rootOf(user: string): string;
  /** Puts a file directly (a user's own upload in Drive). Native types take the Office package. */
  put(f: { name: string; mimeType: string; parent: string; owner: string; content: Uint8Array | string; driveId?: string }): FakeFile;
  folder(name: string, parent: string, owner: string, driveId?: string): FakeFile;
  /** Children (not trashed) of a folder. */
  childrenOf(folderId: string): FakeFile[];
  /** The next `count` requests matching `match` answer with a rate-limit error. */
  failNext(count: number, fault: { status: 403 | 429 | 500 | 503; reason?: string }, match?: (r: LoggedRequest) => boolean): void;
  /** Holds the answer to the next resumable chunk after `chunks` chunks were stored, or ('final') the
   *  answer to the last chunk once the file exists; `held` resolves then. */
  holdUpload(chunks: number | 'final'): { held: Promise<void>; release(): void };
  close(): Promise<void>;
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
  res.end(text);
}

function apiError(res: http.ServerResponse, status: number, reason: string, message: string, domain = 'global') {
  json(res, status, { error: { code: status, message, errors: [{ domain, reason, message }] } });
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function parseJson(buf: Buffer): Record<string, unknown> {
  if (buf.length === 0) return {};
  return JSON.parse(buf.toString('utf8')) as Record<string, unknown>;
}

/** multipart/related: [metadata JSON, media] with their content types. */
function parseMultipart(body: Buffer, contentType: string): { meta: Record<string, unknown>; media: Buffer; mediaType: string } {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) throw new Error('no boundary');
  const delim = Buffer.from(`--${boundary}`);
  const partsOut: { headers: string; body: Buffer }[] = [];
  let pos = body.indexOf(delim);
  while (pos >= 0) {
    const start = pos + delim.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delim, start);
    if (next < 0) break;
    let part = body.subarray(start, next);
    if (part.subarray(0, 2).toString() === '\r\n') part = part.subarray(2);
    if (part.subarray(part.length - 2).toString() === '\r\n') part = part.subarray(0, part.length - 2);
    const sep = part.indexOf('\r\n\r\n');
    partsOut.push({ headers: part.subarray(0, sep).toString('latin1'), body: part.subarray(sep + 4) });
    pos = next;
  }
  if (partsOut.length !== 2) throw new Error(`expected 2 parts, got ${partsOut.length}`);
  const mediaType = /content-type:\s*([^\r\n;]+)/i.exec(partsOut[1]!.headers)?.[1]?.trim() ?? 'application/octet-stream';
  return { meta: parseJson(partsOut[0]!.body), media: partsOut[1]!.body, mediaType };
}

const unq = (s: string) => s.replace(/\\(.)/g, '$1');

/** The subset of Drive's query language docgen uses, joined by `and`. */
function compileQuery(q: string, alias: (id: string) => string): ((f: FakeFile) => boolean) | string {
  const S = "'((?:[^'\\\\]|\\\\.)*)'";
  const term = new RegExp(
    `\\s*(?:(name|mimeType)\\s*(=|!=)\\s*${S}|${S}\\s+in\\s+parents|trashed\\s*=\\s*(true|false)|appProperties\\s+has\\s+\\{\\s*key\\s*=\\s*${S}\\s+and\\s+value\\s*=\\s*${S}\\s*\\})\\s*(and\\b|$)`,
    'y',
  );
  const tests: ((f: FakeFile) => boolean)[] = [];
  let at = 0;
  while (at < q.length) {
    term.lastIndex = at;
    const m = term.exec(q);
    if (!m) return `Invalid Value at ${at}: ${q.slice(at)}`;
    at = term.lastIndex;
    if (m[1]) {
      const field = m[1] as 'name' | 'mimeType';
      const value = unq(m[3]!);
      const eq = m[2] === '=';
      tests.push((f) => (f[field] === value) === eq);
    } else if (m[4] !== undefined) {
      const parent = alias(unq(m[4]));
      tests.push((f) => f.parents.includes(parent));
    } else if (m[5]) {
      const t = m[5] === 'true';
      tests.push((f) => f.trashed === t);
    } else if (m[6] !== undefined) {
      const k = unq(m[6]);
      const v = unq(m[7]!);
      tests.push((f) => f.appProperties[k] === v);
    }
    if (!m[8]) break;
  }
  return (f) => tests.every((t) => t(f));
}

export async function startGoogleFake(): Promise<GoogleFake> {
  const files = new Map<string, FakeFile>();
  const requests: LoggedRequest[] = [];
  const foreign: string[] = [];
  const tokensIssued: { grant: string; user: string }[] = [];
  const oauthClients: { clientId: string; clientSecret: string; refreshToken: string; user: string }[] = [];
  const serviceAccounts = new Map<string, { publicKeyPem: string; delegates: string[] }>();
  const sharedDrives = new Map<string, string[]>();
  const accessTokens = new Map<string, Identity>();
  const sessions = new Map<string, Session>();
  const faults: Fault[] = [];
  let hold: { after: number; chunks: number; reached: () => void; gate: Promise<void> } | undefined;
  let finalHold: { reached: () => void; gate: Promise<void> } | undefined;
  let base = '';

  const now = () => new Date().toISOString();
  const rootOf = (user: string) => `root-${user.replace(/[^A-Za-z0-9]/g, '_')}`;

  function newFile(f: Omit<FakeFile, 'id' | 'trashed' | 'appProperties' | 'permissions' | 'images' | 'createdTime'> & Partial<FakeFile>): FakeFile {
    const file: FakeFile = { id: `f${randomUUID().replace(/-/g, '').slice(0, 20)}`, trashed: false, appProperties: {}, permissions: [], images: [], createdTime: now(), ...f };
    files.set(file.id, file);
    return file;
  }

  function ensureRoot(user: string) {
    const id = rootOf(user);
    if (!files.has(id)) files.set(id, { id, name: 'My Drive', mimeType: MIME.folder, parents: [], owner: user, trashed: false, content: Buffer.alloc(0), appProperties: {}, permissions: [], images: [], createdTime: now() });
    return id;
  }

  function canSee(id: Identity, f: FakeFile): boolean {
    if (f.driveId) return (sharedDrives.get(f.driveId) ?? []).includes(id.user);
    return f.owner === id.user || f.permissions.some((p) => p.type === 'anyone' || p.emailAddress === id.user);
  }

  function resource(f: FakeFile) {
    const native = TWIN[f.mimeType] !== undefined;
    const kind = f.mimeType === MIME.document ? 'document' : f.mimeType === MIME.spreadsheet ? 'spreadsheets' : f.mimeType === MIME.presentation ? 'presentation' : undefined;
    return {
      kind: 'drive#file',
      id: f.id,
      name: f.name,
      mimeType: f.mimeType,
      parents: f.parents,
      trashed: f.trashed,
      createdTime: f.createdTime,
      ...(f.driveId ? { driveId: f.driveId } : {}),
      appProperties: f.appProperties,
      webViewLink: kind ? `https://docs.google.com/${kind}/d/${f.id}/edit?usp=drivesdk` : `https://drive.google.com/file/d/${f.id}/view?usp=drivesdk`,
      ...(native
        ? { exportLinks: Object.fromEntries((EXPORTS[f.mimeType] ?? []).map((m) => [m, `${base}/export-links/${f.id}?mimeType=${encodeURIComponent(m)}`])) }
        : f.mimeType === MIME.folder
          ? {}
          : { size: String(f.content.length), webContentLink: `https://drive.google.com/uc?id=${f.id}&export=download` }),
    };
  }

  /** Conversion on upload: a native target type needs its Office twin as the media. */
  function createFile(identity: Identity, meta: Record<string, unknown>, media: Buffer, mediaType: string, query: Record<string, string>): FakeFile | { error: [number, string, string] } {
    const parents = ((meta.parents as string[] | undefined) ?? ['root']).map((p) => (p === 'root' ? ensureRoot(identity.user) : p));
    const parent = files.get(parents[0]!);
    if (!parent || !canSee(identity, parent) || parent.mimeType !== MIME.folder) return { error: [404, 'notFound', `File not found: ${parents[0]}.`] };
    if (parent.driveId && query.supportsAllDrives !== 'true') return { error: [404, 'notFound', `File not found: ${parents[0]}.`] };
    if (!parent.driveId && identity.serviceAccount && (meta.mimeType as string | undefined) !== MIME.folder) {
      return { error: [403, 'storageQuotaExceeded', 'Service Accounts do not have storage quota. Leverage shared drives, or use OAuth delegation instead.'] };
    }
    let mimeType = (meta.mimeType as string | undefined) ?? mediaType;
    if (TWIN[mimeType] !== undefined && mediaType !== mimeType) {
      if (TWIN[mimeType] !== mediaType) return { error: [400, 'badRequest', `Conversion of ${mediaType} to ${mimeType} is not supported.`] };
    } else if (mimeType.startsWith('application/vnd.google-apps.') && mimeType !== MIME.folder && media.length > 0 && mediaType !== mimeType) {
      return { error: [400, 'badRequest', `Conversion to ${mimeType} is not supported.`] };
    }
    if (mimeType === 'application/octet-stream' && meta.mimeType === undefined) mimeType = mediaType;
    return newFile({
      name: (meta.name as string | undefined) ?? 'Untitled',
      mimeType,
      parents: [parent.id],
      owner: identity.user,
      ...(parent.driveId ? { driveId: parent.driveId } : {}),
      content: media,
      appProperties: { ...((meta.appProperties as Record<string, string> | undefined) ?? {}) },
    });
  }

  async function handleToken(req: http.IncomingMessage, res: http.ServerResponse) {
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    const grant = form.get('grant_type');
    let identity: Identity | undefined;
    if (grant === 'refresh_token') {
      const c = oauthClients.find((x) => x.clientId === form.get('client_id'));
      if (!c || c.clientSecret !== form.get('client_secret')) return json(res, 401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
      if (c.refreshToken !== form.get('refresh_token')) return json(res, 400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
      identity = { user: c.user, serviceAccount: false };
    } else if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const assertion = form.get('assertion') ?? '';
      const [h, p, s] = assertion.split('.');
      let claims: Record<string, unknown>;
      try {
        claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
      } catch {
        return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT.' });
      }
      const sa = serviceAccounts.get(String(claims.iss));
      const ok = sa && verify('RSA-SHA256', Buffer.from(`${h}.${p}`), createPublicKey(sa.publicKeyPem), Buffer.from(s ?? '', 'base64url'));
      if (!sa || !ok) return json(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      if (typeof claims.sub === 'string' && claims.sub !== claims.iss) {
        if (!sa.delegates.includes(claims.sub)) return json(res, 401, { error: 'unauthorized_client', error_description: 'Client is unauthorized to retrieve access tokens using this method.' });
        identity = { user: claims.sub, serviceAccount: false };
      } else {
        identity = { user: String(claims.iss), serviceAccount: true };
      }
    } else {
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    const token = `ya29.${randomUUID()}`;
    accessTokens.set(token, identity);
    tokensIssued.push({ grant: grant ?? '', user: identity.user });
    ensureRoot(identity.user);
    json(res, 200, { access_token: token, expires_in: 3599, token_type: 'Bearer', scope: 'https://www.googleapis.com/auth/drive' });
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse, log: LoggedRequest) {
    const u = new URL(req.url ?? '/', base);
    const path = u.pathname;
    const q = log.query;
    const method = req.method ?? 'GET';
    if (path === '/token' && method === 'POST') return handleToken(req, res);

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const identity = bearer ? accessTokens.get(bearer) : undefined;
    // A resumable session URI is its own credential.
    const sessionId = path === '/upload/drive/v3/files' && q.uploadType === 'resumable' ? q.upload_id : undefined;
    if (!identity && !(sessionId && method === 'PUT')) return apiError(res, 401, 'authError', 'Request had invalid authentication credentials.');
    if (identity) log.user = identity.user;
    const fault = faults.findIndex((f) => f.match(log));
    if (fault >= 0) {
      const f = faults.splice(fault, 1)[0]!;
      return apiError(res, f.status, f.reason, f.reason === 'userRateLimitExceeded' ? 'User rate limit exceeded.' : 'Quota exceeded.', 'usageLimits');
    }
    const who = identity!;
    const find = (id: string | undefined): FakeFile | undefined => {
      const f = id ? files.get(id === 'root' ? rootOf(who.user) : id) : undefined;
      if (!f || !canSee(who, f)) return undefined;
      if (f.driveId && q.supportsAllDrives !== 'true' && method !== 'GET') return undefined;
      return f;
    };
    const notFound = (id: string | undefined) => apiError(res, 404, 'notFound', `File not found: ${id}.`);

    // ---- uploads
    if (path === '/upload/drive/v3/files') {
      if (method === 'POST' && q.uploadType === 'multipart') {
        let parsed;
        try {
          parsed = parseMultipart(await readBody(req), req.headers['content-type'] ?? '');
        } catch (err) {
          return apiError(res, 400, 'badContent', `Malformed multipart body: ${(err as Error).message}`);
        }
        const made = createFile(who, parsed.meta, parsed.media, parsed.mediaType, q);
        if ('error' in made) return apiError(res, ...made.error);
        return json(res, 200, resource(made));
      }
      if (method === 'POST' && q.uploadType === 'resumable') {
        const meta = parseJson(await readBody(req));
        const total = Number(req.headers['x-upload-content-length'] ?? NaN);
        const sid = randomUUID().replace(/-/g, '');
        sessions.set(sid, { meta, total, contentType: String(req.headers['x-upload-content-type'] ?? 'application/octet-stream'), received: [], size: 0, identity: who, query: q });
        res.writeHead(200, { location: `${base}/upload/drive/v3/files?uploadType=resumable&upload_id=${sid}`, 'content-length': '0' });
        return res.end();
      }
      if (method === 'PUT' && sessionId) {
        const s = sessions.get(sessionId);
        const body = await readBody(req);
        if (!s) return apiError(res, 404, 'notFound', 'Upload session not found.');
        const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$|^bytes \*\/(\d+)$/.exec(String(req.headers['content-range'] ?? ''));
        const incomplete = () => {
          res.writeHead(308, { ...(s.size > 0 ? { range: `bytes=0-${s.size - 1}` } : {}), 'content-length': '0' });
          res.end();
        };
        if (!range) return apiError(res, 400, 'badContent', 'Content-Range is required.');
        if (range[4] !== undefined) return s.done ? json(res, 200, resource(s.done)) : incomplete();
        const from = Number(range[1]);
        const to = Number(range[2]);
        if (from !== s.size || to - from + 1 !== body.length) return apiError(res, 400, 'badContent', `Content-Range ${String(req.headers['content-range'])} does not continue at ${s.size}.`);
        const last = to + 1 === s.total;
        if (!last && body.length % CHUNK !== 0) return apiError(res, 400, 'badContent', `Chunk size ${body.length} is not a multiple of 256 KiB.`);
        s.received.push(body);
        s.size += body.length;
        if (hold && !last) {
          hold.chunks++;
          if (hold.chunks === hold.after) {
            const h = hold;
            hold = undefined;
            h.reached();
            await h.gate;
          }
        }
        if (!last) return incomplete();
        const made = createFile(s.identity, s.meta, Buffer.concat(s.received), s.contentType, s.query);
        if ('error' in made) return apiError(res, ...made.error);
        s.done = made;
        if (finalHold) {
          // The file exists; its creator does not know yet.
          const h = finalHold;
          finalHold = undefined;
          h.reached();
          await h.gate;
        }
        return json(res, 200, resource(made));
      }
      return apiError(res, 400, 'badRequest', `uploadType ${q.uploadType} is not served by this fake`);
    }

    // ---- export links (authorized download, no export cap)
    const link = /^\/export-links\/([^/]+)$/.exec(path);
    if (link && method === 'GET') {
      const f = find(link[1]);
      if (!f) return notFound(link[1]);
      return exportFile(res, f, q.mimeType ?? '', Number.POSITIVE_INFINITY);
    }

    // ---- Drive files
    if (path === '/drive/v3/files' && method === 'GET') {
      const test = compileQuery(q.q ?? '', (id) => (id === 'root' ? rootOf(who.user) : id));
      if (typeof test === 'string') return apiError(res, 400, 'invalid', test);
      const allDrives = q.includeItemsFromAllDrives === 'true' && q.supportsAllDrives === 'true';
      const list = [...files.values()].filter((f) => canSee(who, f) && f.id !== rootOf(who.user) && (!f.driveId || allDrives) && (!q.driveId || f.driveId === q.driveId) && test(f));
      return json(res, 200, { kind: 'drive#fileList', files: list.map(resource) });
    }
    if (path === '/drive/v3/files' && method === 'POST') {
      const made = createFile(who, parseJson(await readBody(req)), Buffer.alloc(0), 'application/octet-stream', q);
      if ('error' in made) return apiError(res, ...made.error);
      return json(res, 200, resource(made));
    }
    const exp = /^\/drive\/v3\/files\/([^/]+)\/export$/.exec(path);
    if (exp && method === 'GET') {
      const f = find(exp[1]);
      if (!f) return notFound(exp[1]);
      return exportFile(res, f, q.mimeType ?? '', fake.exportCapBytes);
    }
    const copy = /^\/drive\/v3\/files\/([^/]+)\/copy$/.exec(path);
    if (copy && method === 'POST') {
      const f = find(copy[1]);
      if (!f) return notFound(copy[1]);
      const meta = parseJson(await readBody(req));
      const made = createFile(who, { parents: f.parents, name: `Copy of ${f.name}`, ...meta, mimeType: f.mimeType }, f.content, f.mimeType, q);
      if ('error' in made) return apiError(res, ...made.error);
      made.images = f.images.map((i) => ({ ...i }));
      return json(res, 200, resource(made));
    }
    const perms = /^\/drive\/v3\/files\/([^/]+)\/permissions$/.exec(path);
    if (perms) {
      const f = find(perms[1]);
      if (!f) return notFound(perms[1]);
      if (method === 'GET') return json(res, 200, { permissions: f.permissions });
      if (method === 'POST') {
        const body = parseJson(await readBody(req));
        const notify = q.sendNotificationEmail !== 'false';
        const type = String(body.type);
        const role = String(body.role);
        if (!['reader', 'commenter', 'writer'].includes(role) || !['anyone', 'user', 'group', 'domain'].includes(type)) return apiError(res, 400, 'invalid', 'Invalid permission.');
        const email = typeof body.emailAddress === 'string' ? body.emailAddress : undefined;
        if (type === 'user' && (!email || !/^[^@\s]+@[^@\s]+$/.test(email))) return apiError(res, 400, 'invalid', 'Invalid email address.');
        if (type === 'user' && email!.endsWith('@nogoogle.test') && !notify) {
          return apiError(res, 400, 'invalidSharingRequest', `Bad Request. User message: "You are trying to invite ${email}. Since there is no Google account associated with this email address, you must check the 'Notify people' box to invite this recipient."`);
        }
        if (type === 'anyone') f.permissions = f.permissions.filter((p) => p.type !== 'anyone');
        const p: FakePermission = { id: `p${randomUUID().slice(0, 8)}`, type, role, ...(email ? { emailAddress: email } : {}), ...(body.allowFileDiscovery !== undefined ? { allowFileDiscovery: Boolean(body.allowFileDiscovery) } : {}), sendNotificationEmail: notify };
        f.permissions.push(p);
        return json(res, 200, { kind: 'drive#permission', id: p.id, type, role, ...(email ? { emailAddress: email } : {}) });
      }
    }
    const one = /^\/drive\/v3\/files\/([^/]+)$/.exec(path);
    if (one) {
      const f = find(one[1]);
      if (!f) return notFound(one[1]);
      if (method === 'GET') {
        if (q.alt === 'media') {
          if (TWIN[f.mimeType] || f.mimeType === MIME.folder) return apiError(res, 403, 'fileNotDownloadable', 'Only files with binary content can be downloaded. Use Export with Docs Editors files.');
          res.writeHead(200, { 'content-type': f.mimeType, 'content-length': String(f.content.length) });
          return res.end(f.content);
        }
        return json(res, 200, resource(f));
      }
      if (method === 'PATCH') {
        const body = parseJson(await readBody(req));
        if (typeof body.name === 'string') f.name = body.name;
        if (typeof body.trashed === 'boolean') f.trashed = body.trashed;
        if (body.appProperties && typeof body.appProperties === 'object') Object.assign(f.appProperties, body.appProperties);
        const alias = (p: string) => (p === 'root' ? rootOf(who.user) : p);
        const add = (q.addParents ?? '').split(',').filter(Boolean).map(alias);
        const remove = (q.removeParents ?? '').split(',').filter(Boolean).map(alias);
        for (const p of add) {
          const parent = find(p);
          if (!parent || parent.mimeType !== MIME.folder) return notFound(p);
          if (parent.driveId !== f.driveId) return apiError(res, 403, 'teamDrivesParentLimit', 'Moving items between drives is not supported by this fake.');
        }
        f.parents = [...f.parents.filter((p) => !remove.includes(p)), ...add.filter((p) => !f.parents.includes(p))];
        return json(res, 200, resource(f));
      }
      if (method === 'DELETE') {
        const gone = [f.id];
        for (let i = 0; i < gone.length; i++) for (const c of files.values()) if (c.parents.includes(gone[i]!)) gone.push(c.id);
        for (const id of gone) files.delete(id);
        res.writeHead(204);
        return res.end();
      }
    }

    // ---- Docs / Sheets / Slides
    const native = /^\/v1\/documents\/([^/:]+)(:batchUpdate)?$|^\/v4\/spreadsheets\/([^/:]+)(:batchUpdate|\/values\/(.+))?$|^\/v1\/presentations\/([^/:]+)(:batchUpdate)?$/.exec(path);
    if (native) {
      const id = native[1] ?? native[3] ?? native[6];
      const f = find(id);
      const want = native[1] ? MIME.document : native[3] ? MIME.spreadsheet : MIME.presentation;
      if (!f || f.mimeType !== want) return apiError(res, 404, 'notFound', `Requested entity was not found.`);
      const batch = Boolean(native[2] || native[4] === ':batchUpdate' || native[7]);
      if (!batch && method === 'GET') {
        if (native[5]) {
          const v = spreadsheetValues(f.content, decodeURIComponent(native[5]), q.valueRenderOption === 'UNFORMATTED_VALUE');
          if (!v) return apiError(res, 400, 'badRequest', `Unable to parse range: ${native[5]}`);
          return json(res, 200, { range: v.range, majorDimension: 'ROWS', values: v.values });
        }
        if (want === MIME.document) return json(res, 200, docResource(f.id, f.name, f.content));
        if (want === MIME.spreadsheet) return json(res, 200, spreadsheetResource(f.id, f.name, f.content));
        return json(res, 200, presentationResource(f.id, f.name, f.content, f.images));
      }
      if (batch && method === 'POST') {
        const body = parseJson(await readBody(req));
        const replies: unknown[] = [];
        for (const r of (body.requests as Record<string, any>[] | undefined) ?? []) {
          if (r.replaceAllText && want !== MIME.spreadsheet) {
            const { text, matchCase } = r.replaceAllText.containsText ?? {};
            if (typeof text !== 'string' || text === '') return apiError(res, 400, 'badRequest', 'replaceAllText.containsText.text is required');
            const out = (want === MIME.document ? docReplaceAllText : slidesReplaceAllText)(f.content, text, String(r.replaceAllText.replaceText ?? ''), Boolean(matchCase));
            f.content = Buffer.from(out.pkg);
            replies.push({ replaceAllText: { occurrencesChanged: out.count } });
          } else if (r.findReplace && want === MIME.spreadsheet) {
            const { find: text, replacement, matchCase, allSheets } = r.findReplace;
            if (typeof text !== 'string' || text === '' || allSheets !== true) return apiError(res, 400, 'badRequest', 'findReplace needs find and allSheets (this fake)');
            const out = sheetFindReplace(f.content, text, String(replacement ?? ''), Boolean(matchCase));
            f.content = Buffer.from(out.pkg);
            replies.push({ findReplace: { occurrencesChanged: out.count, valuesChanged: out.count } });
          } else if (r.replaceAllShapesWithImage && want === MIME.presentation) {
            const { containsText, imageUrl } = r.replaceAllShapesWithImage;
            if (typeof imageUrl !== 'string') return apiError(res, 400, 'badRequest', 'imageUrl is required');
            // Google fetches the image itself: so does the fake (the URL must be reachable without our credentials).
            let image: Response;
            try {
              image = await fetch(imageUrl);
            } catch (err) {
              return apiError(res, 400, 'badRequest', `Invalid requests[0].replaceAllShapesWithImage: There was a problem retrieving the image (${(err as Error).message}).`);
            }
            const type = image.headers.get('content-type') ?? '';
            if (!image.ok || !/^image\/(png|jpeg|gif)/.test(type)) {
              return apiError(res, 400, 'badRequest', `Invalid requests[0].replaceAllShapesWithImage: There was a problem retrieving the image (HTTP ${image.status}, ${type}).`);
            }
            const bytes = Buffer.from(await image.arrayBuffer());
            const out = slidesRemoveShapesContaining(f.content, String(containsText?.text ?? ''), Boolean(containsText?.matchCase));
            f.content = Buffer.from(out.pkg);
            for (const at of out.removed) f.images.push({ ...at, objectId: `img_${randomUUID().slice(0, 8)}`, sourceUrl: imageUrl, sha256: createHash('sha256').update(bytes).digest('hex'), contentType: type });
            replies.push({ replaceAllShapesWithImage: { occurrencesChanged: out.removed.length } });
          } else {
            return apiError(res, 400, 'badRequest', `Invalid request: ${Object.keys(r).join(',')} is not served by this fake for ${want}`);
          }
        }
        return json(res, 200, { [want === MIME.document ? 'documentId' : want === MIME.spreadsheet ? 'spreadsheetId' : 'presentationId']: f.id, replies });
      }
    }
    return apiError(res, 404, 'notFound', `${method} ${path} is not served by this fake`);
  }

  function exportFile(res: http.ServerResponse, f: FakeFile, mimeType: string, cap: number) {
    const twin = TWIN[f.mimeType];
    if (!twin) return apiError(res, 403, 'fileNotExportable', 'Export only supports Docs Editors files.');
    if (!(EXPORTS[f.mimeType] ?? []).includes(mimeType)) return apiError(res, 400, 'badRequest', `The requested conversion is not supported: ${mimeType}.`);
    if (mimeType !== twin) return apiError(res, 501, 'notImplemented', `this fake exports ${f.mimeType} as ${twin} only`);
    if (f.content.length > cap) return apiError(res, 403, 'exportSizeLimitExceeded', 'This file is too large to be exported.');
    res.writeHead(200, { 'content-type': mimeType, 'content-length': String(f.content.length) });
    res.end(f.content);
  }

  const server = http.createServer((req, res) => {
    // An absolute-form request target is a proxied request for another host.
    if (req.url && /^https?:\/\//.test(req.url)) {
      foreign.push(new URL(req.url).host);
      res.writeHead(502);
      res.end('not a proxy');
      return;
    }
    const u = new URL(req.url ?? '/', base);
    const log: LoggedRequest = { method: req.method ?? 'GET', host: req.headers.host ?? '', path: u.pathname, query: Object.fromEntries(u.searchParams) };
    requests.push(log);
    res.on('finish', () => (log.status = res.statusCode));
    route(req, res, log).catch((err: unknown) => {
      if (!res.headersSent) apiError(res, 500, 'backendError', (err as Error).message);
      else res.destroy();
    });
  });
  // CONNECT = a proxied HTTPS request for another host.
  server.on('connect', (req: http.IncomingMessage, socket: Socket) => {
    foreign.push(req.url ?? '');
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: GoogleFake = {
    url: base,
    files,
    requests,
    foreign,
    tokensIssued,
    exportCapBytes: 10 * 1024 * 1024,
    addOAuthClient: (c) => void oauthClients.push(c),
    addServiceAccount: (sa) => void serviceAccounts.set(sa.clientEmail, { publicKeyPem: sa.publicKeyPem, delegates: sa.delegates ?? [] }),
    addSharedDrive(driveId, members) {
      sharedDrives.set(driveId, members);
      files.set(driveId, { id: driveId, name: driveId, mimeType: MIME.folder, parents: [], owner: members[0] ?? '', driveId, trashed: false, content: Buffer.alloc(0), appProperties: {}, permissions: [], images: [], createdTime: now() });
    },
    rootOf: (user) => ensureRoot(user),
    put(f) {
      return newFile({ name: f.name, mimeType: f.mimeType, parents: [f.parent], owner: f.owner, content: Buffer.from(f.content), ...(f.driveId ? { driveId: f.driveId } : {}) });
    },
    folder(name, parent, owner, driveId) {
      return newFile({ name, mimeType: MIME.folder, parents: [parent], owner, content: Buffer.alloc(0), ...(driveId ? { driveId } : {}) });
    },
    childrenOf: (folderId) => [...files.values()].filter((f) => f.parents.includes(folderId) && !f.trashed),
    failNext(count, fault, match = () => true) {
      for (let i = 0; i < count; i++) faults.push({ status: fault.status, reason: fault.reason ?? (fault.status === 429 ? 'rateLimitExceeded' : 'userRateLimitExceeded'), match });
    },
    holdUpload(chunks) {
      let reached!: () => void;
      let release!: () => void;
      const held = new Promise<void>((r) => (reached = r));
      const gate = new Promise<void>((r) => (release = r));
      if (chunks === 'final') finalHold = { reached, gate };
      else hold = { after: chunks, chunks: 0, reached, gate };
      return { held, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/** The number of slides of a native presentation's model (for tests). */
export { slideCount };

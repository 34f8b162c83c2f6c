// A stateful fake of the slice of Microsoft Graph (and the Entra token endpoint) that DriveA uses, over
// HTTPS (the test CA, test/support/tls): drives holding an item tree, path addressing (`root:/A/b.docx:`),
// conflictBehavior, folders, simple PUT, upload sessions (320 KiB rule, 416 on a resent range,
// nextExpectedRanges, no Authorization on the upload URL, which lives on https://127.0.0.1:PORT while the
// API is https://localhost:PORT), createLink (201 new / 200 existing; anonymous links refusable by
// "tenant policy"), invite (207 partial success), async copy (202 + an off-host monitor URL), PATCH move,
// DELETE (recycle bin) and permanentDelete, 302 downloads to a pre-authenticated URL, the
// client-credentials token endpoint, and fault injection (429/503 with Retry-After, an expired token).
// Names follow OneDrive/SharePoint's rules (Microsoft's "Restrictions and limitations in OneDrive and
// SharePoint"): none of " * : < > ? / \ |, no leading or trailing space, not .lock, CON, PRN, AUX, NUL,
// COM0-9, LPT0-9 or desktop.ini, not starting with ~$, no _vti_ anywhere, no folder "forms" at the root,
// and a decoded path (the drive's own site and library prefix included, `pathPrefix`) of at most 400
// characters; a refused name is 400 invalidRequest, whichever request names it.
// Written from Microsoft's documentation (../shared/design/connectors.md section 1); every request is
// logged so tests can count attempts. `barrier(n, match)` holds the first n matching requests until all n
// have arrived (concurrent deliveries made to meet at one point).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startHttps } from '../../support/https.ts';
import { barriers } from '../shared.ts';

export const CHUNK_UNIT = 320 * 1024;

export interface FakeItem {
  id: string;
  driveId: string;
  name: string;
  parentId?: string;
  folder: boolean;
  content?: Buffer;
  /** 'recycled' after DELETE (recoverable), removed from the map after permanentDelete. */
  state: 'live' | 'recycled';
  permissions: { id: string; roles: string[]; link?: { type: string; scope: string; webUrl: string }; email?: string }[];
  created: string;
  modified: string;
  version: number;
}

export interface Fault {
  status: 429 | 503 | 500 | 401;
  retryAfter?: number;
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Which requests: method and a substring or regex of the path (default: every /v1.0 API request;
   *  a path may also name uploads, monitors or the token endpoint). */
  method?: string;
  path?: string | RegExp;
}

export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
  authorization: boolean;
  host: string;
  /** The application whose token the request carried. */
  clientId?: string;
}

export interface GraphFakeOptions {
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  /** Seconds a token lives (default 3600). */
  tokenLifetime?: number;
  /** Polls of the copy monitor that answer inProgress before completed (default 1). */
  copyPolls?: number;
}

type Json = Record<string, unknown>;

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export async function startGraphFake(opts: GraphFakeOptions = {}) {
  const tenantId = opts.tenantId ?? 'tenant-1';
  const clientId = opts.clientId ?? 'client-1';
  const clientSecret = opts.clientSecret ?? 'secret-1';
  const tokenLifetime = opts.tokenLifetime ?? 3600;

  const drives = new Map<string, { id: string; rootId: string; items: Map<string, FakeItem>; pathPrefix: string }>();
  const sites = new Map<string, string>();
  const users = new Map<string, string>();
  const tokens = new Map<string, { expired: boolean; clientId: string }>();
  /** Applications of the tenant; `drives` limits what one may touch (403 accessDenied elsewhere). */
  const clients = new Map<string, { secret: string; drives?: Set<string> }>([[clientId, { secret: clientSecret }]]);
  const sessions = new Map<
    string,
    { driveId: string; parentId: string; name: string; conflict: string; size?: number; parts: Buffer[]; next: number; done?: FakeItem }
  >();
  const copies = new Map<
    string,
    {
      polls: number;
      driveId: string;
      parentId: string;
      name: string;
      conflict: string;
      content?: Buffer;
      result?: FakeItem;
      failed?: string;
    }
  >();
  const downloads = new Map<string, { driveId: string; itemId: string }>();
  // A throttling answer's Retry-After is enforced as Graph does: a matching request that comes sooner is
  // throttled again (and counted), so a client that does not wait shows in the request count.
  const faults: (Fault & { left: number; until?: number })[] = [];
  let earlyRetries = 0;
  /** A throttling window (SharePoint's long throttling, reported with Retry-After of 41 s, then 315 s):
   *  until `until`, every matching request answers 429 with the Retry-After still to go. */
  let window: { until: number; match: (method: string, path: string) => boolean; times: number[] } | undefined;
  /** Upload sessions that expire once they hold `afterBytes` (404 itemNotFound on their URL), `left` times. */
  let expiring: { afterBytes: number; left: number } | undefined;
  /** Bytes a drive may hold (507 quotaLimitReached past it). */
  const quotas = new Map<string, number>();
  const log: LoggedRequest[] = [];
  const invites: { recipients: string[]; roles: string[]; requireSignIn?: boolean; sendInvitation?: boolean }[] = [];
  let counter = 0;
  let refuseAnonymousLinks = false;
  const refusedRecipients = new Set<string>();
  let hold: { match: (method: string, path: string) => boolean; hit: () => void; released: Promise<void>; drop: boolean } | undefined;
  const meeting = barriers<{ method: string; path: string }>();

  const newId = () => `01FAKE${String(++counter).padStart(6, '0')}${randomUUID().slice(0, 8).toUpperCase()}`;
  const now = () => new Date().toISOString();

  /** `pathPrefix`: what SharePoint counts before the drive's own paths in its 400-character limit (the
   *  site and library, e.g. "sites/Finance/Shared Documents"). */
  function addDrive(id: string, owner: { site?: string; user?: string; pathPrefix?: string } = {}) {
    const rootId = newId();
    const items = new Map<string, FakeItem>();
    items.set(rootId, {
      id: rootId,
      driveId: id,
      name: 'root',
      folder: true,
      state: 'live',
      permissions: [],
      created: now(),
      modified: now(),
      version: 1,
    });
    drives.set(id, { id, rootId, items, pathPrefix: owner.pathPrefix ?? 'personal/user/Documents' });
    if (owner.site) sites.set(owner.site, id);
    if (owner.user) users.set(owner.user, id);
    return id;
  }

  const server = await startHttps((req, res) => {
    void handle(req, res);
  });
  const base = server.url;
  const uploadBase = server.ipUrl;

  // ---- the item tree --------------------------------------------------------------------------------
  const drive = (id: string) => {
    const d = drives.get(id);
    if (!d) throw new HttpError(404, 'itemNotFound', `The drive ${id} does not exist`);
    return d;
  };
  const children = (driveId: string, parentId: string) =>
    [...drive(driveId).items.values()].filter((i) => i.parentId === parentId && i.state === 'live');
  const childNamed = (driveId: string, parentId: string, name: string) =>
    children(driveId, parentId).find((i) => i.name.toLowerCase() === name.toLowerCase());
  const liveItem = (driveId: string, id: string) => {
    const i = drive(driveId).items.get(id);
    if (!i || i.state !== 'live') throw new HttpError(404, 'itemNotFound', 'The resource could not be found.');
    return i;
  };
  function pathOf(item: FakeItem): string {
    const d = drive(item.driveId);
    const names: string[] = [];
    let cur: FakeItem | undefined = item;
    while (cur && cur.id !== d.rootId) {
      names.unshift(cur.name);
      cur = cur.parentId ? d.items.get(cur.parentId) : undefined;
    }
    return names.join('/');
  }
  /** Resolves a path below an item; `create` makes missing folders (what a simple PUT by path does). */
  function walk(driveId: string, fromId: string, segments: string[], create = false): FakeItem {
    let cur = liveItem(driveId, fromId);
    for (const seg of segments) {
      let next = childNamed(driveId, cur.id, seg);
      if (!next) {
        if (!create) throw new HttpError(404, 'itemNotFound', 'The resource could not be found.');
        next = makeItem(driveId, cur.id, seg, true);
      } else if (!next.folder && create) throw new HttpError(409, 'nameAlreadyExists', `${seg} is a file`);
      cur = next;
    }
    return cur;
  }
  /** OneDrive / SharePoint's naming rules for a new or renamed item in `parentId`. */
  function checkName(driveId: string, parentId: string, name: string, folder: boolean): void {
    const refuse = (why: string) => new HttpError(400, 'invalidRequest', `The provided name is not valid: ${why}`);
    if (name === '' || /["*:<>?/\\|]/.test(name)) throw refuse('it contains a character that is not allowed');
    if (name !== name.trim()) throw refuse('leading or trailing spaces are not allowed');
    if (/^(\.lock|con|prn|aux|nul|com[0-9]|lpt[0-9]|desktop\.ini)$/i.test(name)) throw refuse(`${name} is a reserved name`);
    if (name.startsWith('~$') || /_vti_/i.test(name)) throw refuse('names starting with ~$ or containing _vti_ are not allowed');
    const d = drive(driveId);
    if (folder && parentId === d.rootId && name.toLowerCase() === 'forms') throw refuse('forms is reserved at the root of a library');
    const parent = d.items.get(parentId);
    const full = [d.pathPrefix, parent ? pathOf(parent) : '', name].filter(Boolean).join('/');
    if (full.length > 400)
      throw new HttpError(400, 'invalidRequest', `The provided path is too long: ${full.length} characters, 400 at most`);
  }
  function makeItem(driveId: string, parentId: string, name: string, folder: boolean, content?: Buffer): FakeItem {
    checkName(driveId, parentId, name, folder);
    const item: FakeItem = {
      id: newId(),
      driveId,
      name,
      parentId,
      folder,
      content,
      state: 'live',
      permissions: [],
      created: now(),
      modified: now(),
      version: 1,
    };
    drive(driveId).items.set(item.id, item);
    return item;
  }
  /** Graph's conflict behaviours: fail (409), replace (the existing item gets the new content, same id), rename ("name 1.ext"). */
  function place(
    driveId: string,
    parentId: string,
    name: string,
    conflict: string,
    content: Buffer | undefined,
    folder = false,
  ): { item: FakeItem; created: boolean } {
    checkQuota(driveId, content?.length ?? 0);
    const existing = childNamed(driveId, parentId, name);
    if (!existing) return { item: makeItem(driveId, parentId, name, folder, content), created: true };
    if (conflict === 'fail') throw new HttpError(409, 'nameAlreadyExists', 'The specified item name already exists.');
    if (conflict === 'replace') {
      if (folder) return { item: existing, created: false };
      existing.content = content;
      existing.modified = now();
      existing.version++;
      return { item: existing, created: false };
    }
    return { item: makeItem(driveId, parentId, freeName(driveId, parentId, name), folder, content), created: true };
  }
  /** Graph's answer to a write into a full drive: 507 Insufficient Storage, quotaLimitReached. */
  function checkQuota(driveId: string, adding: number): void {
    const quota = quotas.get(driveId);
    if (quota === undefined) return;
    const used = [...drive(driveId).items.values()].filter((i) => i.state === 'live').reduce((n, i) => n + (i.content?.length ?? 0), 0);
    if (used + adding > quota)
      throw new HttpError(507, 'quotaLimitReached', 'Insufficient Space Available: the maximum storage quota has been reached.');
  }
  function freeName(driveId: string, parentId: string, name: string): string {
    const dot = name.lastIndexOf('.');
    const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    for (let n = 1; ; n++) {
      const candidate = `${stem} ${n}${ext}`;
      if (!childNamed(driveId, parentId, candidate)) return candidate;
    }
  }
  function itemJson(item: FakeItem): Json {
    const d = drive(item.driveId);
    const parent = item.parentId ? d.items.get(item.parentId) : undefined;
    const p = pathOf(item);
    const out: Json = {
      id: item.id,
      name: item.name,
      eTag: `"{${item.id}},${item.version}"`,
      cTag: `"c:{${item.id}},${item.version}"`,
      createdDateTime: item.created,
      lastModifiedDateTime: item.modified,
      webUrl: `https://contoso.example/drive/${encodeURIComponent(item.driveId)}/${p.split('/').map(encodeURIComponent).join('/')}`,
      parentReference: parent
        ? {
            driveId: item.driveId,
            driveType: 'business',
            id: parent.id,
            path: `/drives/${item.driveId}/root:${pathOf(parent) ? `/${pathOf(parent)}` : ''}`,
          }
        : { driveId: item.driveId },
    };
    if (item.folder) out.folder = { childCount: children(item.driveId, item.id).length };
    else {
      out.size = item.content?.length ?? 0;
      out.file = { mimeType: mimeOf(item.name) };
      out['@microsoft.graph.downloadUrl'] = downloadUrl(item);
    }
    if (item.id === d.rootId) out.root = {};
    return out;
  }
  function downloadUrl(item: FakeItem): string {
    const token = randomUUID();
    downloads.set(token, { driveId: item.driveId, itemId: item.id });
    return `${uploadBase}/download/${token}/${encodeURIComponent(item.name)}`;
  }

  // ---- requests -------------------------------------------------------------------------------------
  async function body(req: IncomingMessage): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    return Buffer.concat(parts);
  }
  function send(res: ServerResponse, status: number, json?: unknown, headers: Record<string, string> = {}) {
    if (json === undefined) {
      res.writeHead(status, headers);
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(json));
  }
  const graphError = (code: string, message: string) => ({
    error: { code, message, innerError: { date: now(), 'request-id': randomUUID(), 'client-request-id': randomUUID() } },
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    const entry: LoggedRequest = {
      method,
      path: url.pathname + url.search,
      status: 0,
      authorization: req.headers.authorization !== undefined,
      host: req.headers.host ?? '',
    };
    log.push(entry);
    res.on('finish', () => (entry.status = res.statusCode));
    try {
      if (hold?.match(method, url.pathname)) {
        const h = hold;
        hold = undefined;
        h.hit();
        await h.released;
        if (h.drop) {
          // Lost on the way: the connection goes without an answer and the request is not applied.
          req.socket.destroy();
          return;
        }
      }
      // Held until the barrier's last request has arrived, then all answered together.
      await meeting.pass({ method, path: url.pathname });
      // Faults apply to API calls, or to any path (uploads, monitors, the token endpoint) a fault names.
      const matches = (f: Fault) =>
        (!f.method || f.method === method) &&
        (f.path
          ? typeof f.path === 'string'
            ? url.pathname.includes(f.path)
            : f.path.test(url.pathname)
          : url.pathname.startsWith('/v1.0/'));
      if (window && Date.now() < window.until && window.match(method, url.pathname)) {
        window.times.push(Date.now());
        await body(req);
        return send(res, 429, graphError('TooManyRequests', 'The request has been throttled'), {
          'retry-after': String(Math.ceil((window.until - Date.now()) / 1000)),
        });
      }
      const early = faults.find((f) => f.until !== undefined && Date.now() < f.until && matches(f));
      if (early) {
        earlyRetries++;
        await body(req);
        return send(res, 429, graphError('TooManyRequests', 'retried before Retry-After'), {
          'retry-after': String(Math.ceil((early.until! - Date.now()) / 1000)),
        });
      }
      const fault = faults.find((f) => f.left > 0 && matches(f));
      if (fault) {
        fault.left--;
        if (fault.status === 429 && fault.retryAfter) fault.until = Date.now() + fault.retryAfter * 1000;
        await body(req);
        if (fault.status === 401)
          return send(res, 401, graphError('InvalidAuthenticationToken', 'Access token has expired or is not yet valid.'));
        return send(
          res,
          fault.status,
          graphError(fault.status === 429 ? 'TooManyRequests' : 'serviceNotAvailable', 'injected fault'),
          fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {},
        );
      }
      if (method === 'POST' && /^\/[^/]+\/oauth2\/v2\.0\/token$/.test(url.pathname))
        return await token(req, res, url.pathname.split('/')[1]!);
      if (url.pathname.startsWith('/up/')) return await upload(req, res, method, url.pathname.slice(4));
      if (url.pathname.startsWith('/monitor/')) return monitor(res, url.pathname.slice(9));
      if (url.pathname.startsWith('/download/')) {
        const d = downloads.get(url.pathname.split('/')[2] ?? '');
        if (!d) throw new HttpError(404, 'itemNotFound', 'download URL expired');
        const item = liveItem(d.driveId, d.itemId);
        res.writeHead(200, { 'content-type': mimeOf(item.name), 'content-length': String(item.content?.length ?? 0) });
        res.end(item.content ?? Buffer.alloc(0));
        return;
      }
      if (!url.pathname.startsWith('/v1.0/')) throw new HttpError(404, 'BadRequest', `Unknown path ${url.pathname}`);
      const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const t = auth ? tokens.get(auth) : undefined;
      if (!t) return send(res, 401, graphError('InvalidAuthenticationToken', 'Access token is empty or invalid.'));
      entry.clientId = t.clientId;
      if (t.expired) {
        tokens.delete(auth!);
        return send(res, 401, graphError('InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.'));
      }
      await api(req, res, method, url, clients.get(t.clientId)?.drives);
    } catch (err) {
      if (err instanceof HttpError) return send(res, err.status, graphError(err.code, err.message), err.headers);
      send(res, 500, graphError('generalException', String(err)));
    }
  }

  async function token(req: IncomingMessage, res: ServerResponse, tenant: string) {
    const form = new URLSearchParams((await body(req)).toString());
    if (tenant !== tenantId)
      return send(res, 400, { error: 'invalid_request', error_description: `AADSTS90002: Tenant '${tenant}' not found.` });
    if (form.get('grant_type') !== 'client_credentials')
      return send(res, 400, { error: 'unsupported_grant_type', error_description: 'AADSTS70003' });
    const client = clients.get(form.get('client_id') ?? '');
    if (!client)
      return send(res, 400, {
        error: 'unauthorized_client',
        error_description: `AADSTS700016: Application with identifier '${form.get('client_id')}' was not found.`,
      });
    if (form.get('client_secret') !== client.secret)
      return send(res, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
    if (form.get('scope') !== 'https://graph.microsoft.com/.default')
      return send(res, 400, { error: 'invalid_scope', error_description: 'AADSTS1002012' });
    const access = `fake-${randomUUID()}`;
    tokens.set(access, { expired: false, clientId: form.get('client_id')! });
    send(res, 200, { token_type: 'Bearer', expires_in: tokenLifetime, ext_expires_in: tokenLifetime, access_token: access });
  }

  /** /v1.0/{drives/{d} | sites/{s}/drive | users/{u}/drive}{ /root | /root:/p: | /items/{id} | /items/{id}:/p: }{/action} */
  async function api(req: IncomingMessage, res: ServerResponse, method: string, url: URL, allowed?: Set<string>) {
    let rest = url.pathname.slice('/v1.0'.length);
    let driveId: string | undefined;
    let m: RegExpExecArray | null;
    if ((m = /^\/drives\/([^/]+)/.exec(rest))) driveId = decodeURIComponent(m[1]!);
    else if ((m = /^\/sites\/([^/]+)\/drive/.exec(rest))) driveId = sites.get(decodeURIComponent(m[1]!));
    else if ((m = /^\/users\/([^/]+)\/drive/.exec(rest))) driveId = users.get(decodeURIComponent(m[1]!));
    if (!m) throw new HttpError(400, 'BadRequest', `Unsupported segment ${rest}`);
    if (!driveId) throw new HttpError(404, 'itemNotFound', 'The drive does not exist');
    if (allowed && !allowed.has(driveId)) throw new HttpError(403, 'accessDenied', 'Access denied');
    const d = drive(driveId);
    rest = rest.slice(m[0].length);
    if (rest === '' && method === 'GET') return send(res, 200, { id: d.id, driveType: 'business', name: 'Documents' });
    let anchor: string;
    if ((m = /^\/root/.exec(rest))) anchor = d.rootId;
    else if ((m = /^\/items\/([^/:]+)/.exec(rest))) anchor = decodeURIComponent(m[1]!);
    else throw new HttpError(400, 'BadRequest', `Unsupported segment ${rest}`);
    rest = rest.slice(m[0].length);
    let segments: string[] = [];
    if ((m = /^:(\/[^:]*):?/.exec(rest))) {
      segments = m[1]!.split('/').filter(Boolean).map(decodeURIComponent);
      rest = rest.slice(m[0].length);
    }
    const action = rest.replace(/^\//, '');
    const conflictParam = url.searchParams.get('@microsoft.graph.conflictBehavior');

    if (action === 'content' && method === 'PUT') {
      // Simple upload: by path it creates missing folders; default conflict behaviour is replace.
      const bytes = await body(req);
      if (segments.length === 0) {
        const item = liveItem(driveId, anchor);
        item.content = bytes;
        item.version++;
        return send(res, 200, itemJson(item));
      }
      const parent = walk(driveId, anchor, segments.slice(0, -1), true);
      const { item, created } = place(driveId, parent.id, segments.at(-1)!, conflictParam ?? 'replace', bytes);
      return send(res, created ? 201 : 200, itemJson(item));
    }
    if (action === 'createUploadSession' && method === 'POST') {
      const b = JSON.parse((await body(req)).toString() || '{}') as { item?: Json };
      if (segments.length === 0) throw new HttpError(400, 'invalidRequest', 'createUploadSession needs a path');
      // The parent must exist (upload sessions do not create folders).
      const parent = walk(driveId, anchor, segments.slice(0, -1));
      const conflict = String(b.item?.['@microsoft.graph.conflictBehavior'] ?? 'replace');
      const name = String(b.item?.name ?? segments.at(-1));
      if (!childNamed(driveId, parent.id, name)) checkName(driveId, parent.id, name, false);
      if (conflict === 'fail' && childNamed(driveId, parent.id, name))
        throw new HttpError(409, 'nameAlreadyExists', 'The specified item name already exists.');
      const id = randomUUID();
      sessions.set(id, { driveId, parentId: parent.id, name, conflict, parts: [], next: 0 });
      return send(res, 200, {
        uploadUrl: `${uploadBase}/up/${id}`,
        expirationDateTime: new Date(Date.now() + 3600_000).toISOString(),
        nextExpectedRanges: ['0-'],
      });
    }
    const item = walk(driveId, anchor, segments);
    if (action === '' && method === 'GET') return send(res, 200, itemJson(item));
    if (action === 'children' && method === 'GET') return send(res, 200, { value: children(driveId, item.id).map(itemJson) });
    if (action === 'children' && method === 'POST') {
      const b = JSON.parse((await body(req)).toString()) as Json;
      if (typeof b.name !== 'string' || !b.folder) throw new HttpError(400, 'invalidRequest', 'name and folder are required');
      const conflict = String(b['@microsoft.graph.conflictBehavior'] ?? 'fail');
      const { item: made } = place(driveId, item.id, b.name, conflict, undefined, true);
      return send(res, 201, itemJson(made));
    }
    if (action === 'content' && method === 'GET') {
      if (item.folder) throw new HttpError(400, 'invalidRequest', 'A folder has no content');
      return send(res, 302, undefined, { location: downloadUrl(item) });
    }
    if (action === '' && method === 'PATCH') {
      const b = JSON.parse((await body(req)).toString()) as { name?: string; parentReference?: { id?: string; driveId?: string } };
      if (b.parentReference?.driveId && b.parentReference.driveId !== driveId)
        throw new HttpError(400, 'invalidRequest', 'Cannot move an item to another drive');
      const parentId = b.parentReference?.id ?? item.parentId!;
      const parent = liveItem(driveId, parentId);
      if (!parent.folder) throw new HttpError(400, 'invalidRequest', 'The new parent is not a folder');
      let name = b.name ?? item.name;
      if (name !== item.name || parentId !== item.parentId) checkName(driveId, parentId, name, item.folder);
      const clash = childNamed(driveId, parentId, name);
      if (clash && clash.id !== item.id) {
        const conflict = conflictParam ?? 'fail';
        if (conflict === 'fail') throw new HttpError(409, 'nameAlreadyExists', 'The specified item name already exists.');
        if (conflict === 'replace') drive(driveId).items.delete(clash.id);
        else name = freeName(driveId, parentId, name);
      }
      item.parentId = parentId;
      item.name = name;
      item.modified = now();
      return send(res, 200, itemJson(item));
    }
    if (action === '' && method === 'DELETE') {
      if (item.id === d.rootId) throw new HttpError(403, 'accessDenied', 'Cannot delete the root');
      item.state = 'recycled';
      return send(res, 204);
    }
    if (action === 'permanentDelete' && method === 'POST') {
      drive(driveId).items.delete(item.id);
      return send(res, 204);
    }
    if (action === 'createLink' && method === 'POST') {
      const b = JSON.parse((await body(req)).toString()) as { type?: string; scope?: string };
      if (b.type !== 'view' && b.type !== 'edit' && b.type !== 'embed') throw new HttpError(400, 'invalidRequest', 'Invalid link type');
      const scope = b.scope ?? 'anonymous';
      if (scope === 'anonymous' && refuseAnonymousLinks)
        throw new HttpError(403, 'accessDenied', 'Sharing links with scope anonymous are disabled by the tenant policy.');
      const existing = item.permissions.find((p) => p.link?.type === b.type && p.link?.scope === scope);
      if (existing) return send(res, 200, permissionJson(existing));
      const p = {
        id: randomUUID(),
        roles: [b.type === 'edit' ? 'write' : 'read'],
        link: { type: b.type, scope, webUrl: `https://contoso.example/:w:/s/${b.type}-${scope}-${randomUUID().slice(0, 8)}` },
      };
      item.permissions.push(p);
      return send(res, 201, permissionJson(p));
    }
    if (action === 'invite' && method === 'POST') {
      const b = JSON.parse((await body(req)).toString()) as {
        recipients?: { email?: string }[];
        roles?: string[];
        requireSignIn?: boolean;
        sendInvitation?: boolean;
      };
      invites.push({
        recipients: (b.recipients ?? []).map((r) => String(r.email)),
        roles: b.roles ?? [],
        requireSignIn: b.requireSignIn,
        sendInvitation: b.sendInvitation,
      });
      if (!Array.isArray(b.recipients) || b.recipients.length === 0) throw new HttpError(400, 'invalidRequest', 'recipients is required');
      if (!b.roles || !['read', 'write'].includes(b.roles[0] ?? ''))
        throw new HttpError(400, 'invalidRequest', 'roles must be read or write');
      if (b.requireSignIn === false && b.sendInvitation === false)
        throw new HttpError(400, 'invalidRequest', 'requireSignIn false needs sendInvitation');
      const value: Json[] = [];
      let failed = 0;
      for (const r of b.recipients) {
        const email = String(r.email ?? '');
        if (refusedRecipients.has(email.toLowerCase()) || !email.includes('@')) {
          failed++;
          value.push({
            error: { code: 'notAllowed', message: `${email} cannot be invited`, innererror: { code: 'exchangeInvalidUser' } },
            invitation: { email },
          });
          continue;
        }
        const p = { id: randomUUID(), roles: b.roles, email };
        item.permissions.push(p);
        value.push({
          ...permissionJson(p),
          invitation: { email, signInRequired: b.requireSignIn ?? true, invitedBy: { application: { id: clientId } } },
          grantedToV2: { user: { email } },
        });
      }
      const status = failed === 0 ? 200 : failed === b.recipients.length ? 400 : 207;
      if (status === 400) return send(res, 400, { ...graphError('notAllowed', 'No recipient could be invited'), value });
      return send(res, status, { value });
    }
    if (action === 'permissions' && method === 'GET') return send(res, 200, { value: item.permissions.map(permissionJson) });
    if (action === 'copy' && method === 'POST') {
      const b = JSON.parse((await body(req)).toString()) as { parentReference?: { driveId?: string; id?: string }; name?: string };
      const target = b.parentReference?.driveId ?? driveId;
      const parentId = b.parentReference?.id ?? item.parentId!;
      liveItem(target, parentId);
      if (b.name !== undefined && !childNamed(target, parentId, b.name)) checkName(target, parentId, b.name, item.folder);
      const id = randomUUID();
      // The source's bytes are taken now; the copy appears once the monitor has been polled.
      copies.set(id, {
        polls: 0,
        driveId: target,
        parentId,
        name: b.name ?? item.name,
        conflict: conflictParam ?? 'fail',
        content: item.content,
      });
      return send(res, 202, undefined, { location: `${uploadBase}/monitor/${id}` });
    }
    throw new HttpError(400, 'BadRequest', `Unsupported request ${method} ${url.pathname}`);
  }

  function permissionJson(p: FakeItem['permissions'][number]): Json {
    return { id: p.id, roles: p.roles, ...(p.link ? { link: { ...p.link, application: { id: clientId } } } : {}), hasPassword: false };
  }

  function monitor(res: ServerResponse, id: string) {
    const c = copies.get(id);
    if (!c) throw new HttpError(404, 'itemNotFound', 'Unknown operation');
    if (!c.result && !c.failed) {
      c.polls++;
      if (c.polls <= (opts.copyPolls ?? 1))
        return send(res, 202, { operation: 'ItemCopy', percentageComplete: 27.8, status: 'inProgress' });
      try {
        c.result = place(c.driveId, c.parentId, c.name, c.conflict, c.content).item;
      } catch (err) {
        c.failed = err instanceof HttpError ? err.code : 'generalException';
      }
    }
    if (c.failed) return send(res, 200, { operation: 'ItemCopy', status: 'failed', error: { code: c.failed, message: 'The copy failed' } });
    send(res, 200, { operation: 'ItemCopy', percentageComplete: 100, resourceId: c.result!.id, status: 'completed' });
  }

  async function upload(req: IncomingMessage, res: ServerResponse, method: string, id: string) {
    const s = sessions.get(id);
    if (!s) throw new HttpError(404, 'itemNotFound', 'The upload session does not exist or has expired');
    if (req.headers.authorization) {
      await body(req);
      throw new HttpError(401, 'unauthenticated', 'An upload URL must not carry an Authorization header');
    }
    if (method === 'DELETE') {
      sessions.delete(id);
      return send(res, 204);
    }
    if (method === 'GET') {
      if (s.done) return send(res, 200, itemJson(s.done));
      return send(res, 200, { expirationDateTime: new Date(Date.now() + 3600_000).toISOString(), nextExpectedRanges: [`${s.next}-`] });
    }
    if (method !== 'PUT') throw new HttpError(405, 'invalidRequest', 'PUT, GET or DELETE');
    const bytes = await body(req);
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(req.headers['content-range'] ?? ''));
    if (!range) throw new HttpError(400, 'invalidRange', 'Content-Range is required');
    const [start, end, total] = [Number(range[1]), Number(range[2]), Number(range[3])];
    if (s.size !== undefined && s.size !== total) throw new HttpError(400, 'invalidRange', 'The total size changed');
    s.size = total;
    if (end - start + 1 !== bytes.length) throw new HttpError(400, 'invalidRange', 'Content-Range does not match the body');
    if (expiring && expiring.left > 0 && s.next >= expiring.afterBytes) {
      expiring.left--;
      sessions.delete(id);
      throw new HttpError(404, 'itemNotFound', 'The upload session does not exist or has expired');
    }
    if (s.done || start !== s.next) throw new HttpError(416, 'invalidRange', `Expected the range starting at ${s.next}`, {});
    const last = end + 1 === total;
    if (!last && bytes.length % CHUNK_UNIT !== 0) throw new HttpError(400, 'invalidRange', 'A fragment must be a multiple of 320 KiB');
    s.parts.push(bytes);
    s.next = end + 1;
    if (!last)
      return send(res, 202, { expirationDateTime: new Date(Date.now() + 3600_000).toISOString(), nextExpectedRanges: [`${s.next}-`] });
    const { item, created } = place(s.driveId, s.parentId, s.name, s.conflict, Buffer.concat(s.parts));
    s.done = item;
    send(res, created ? 201 : 200, itemJson(item));
  }

  return {
    url: base,
    /** Where DRIVEA_GRAPH_URL points. */
    graphUrl: `${base}/v1.0`,
    /** Where DRIVEA_LOGIN_URL points. */
    loginUrl: base,
    uploadBase,
    tenantId,
    clientId,
    clientSecret,
    addDrive,
    /** Every invite request's body, in order. */
    invites,
    /** Another application of the tenant, allowed only the given drives. */
    addClient(id: string, secret: string, onlyDrives: string[]) {
      clients.set(id, { secret, drives: new Set(onlyDrives) });
    },
    log,
    /** Every live item of a drive with its path (folders end in '/'). */
    files(driveId: string): { id: string; path: string; size: number; content?: Buffer; state: string }[] {
      return [...drive(driveId).items.values()]
        .filter((i) => i.id !== drive(driveId).rootId)
        .map((i) => ({
          id: i.id,
          path: pathOf(i) + (i.folder ? '/' : ''),
          size: i.content?.length ?? 0,
          content: i.content,
          state: i.state,
        }));
    },
    item: (driveId: string, id: string) => drive(driveId).items.get(id),
    /** Puts a file (creating folders) and returns its id. */
    put(driveId: string, path: string, content: Buffer): string {
      const segs = path.split('/').filter(Boolean);
      const parent = walk(driveId, drive(driveId).rootId, segs.slice(0, -1), true);
      return place(driveId, parent.id, segs.at(-1)!, 'replace', content).item.id;
    },
    inject(f: Fault) {
      faults.push({ ...f, left: f.times ?? 1 });
    },
    clearFaults() {
      faults.length = 0;
      window = undefined;
      expiring = undefined;
    },
    /** Every matching request answers 429 (Retry-After: the seconds left) for `seconds` from now; default:
     *  every API call. Returns the arrival times of the throttled requests. */
    throttleFor(seconds: number, match: (method: string, path: string) => boolean = (_m, p) => p.startsWith('/v1.0/')) {
      const times: number[] = [];
      window = { until: Date.now() + seconds * 1000, match, times };
      return { times, until: window.until };
    },
    /** The next `times` upload sessions expire once they hold `afterBytes`: their URL answers 404. */
    expireUploadSessions(afterBytes: number, times = 1) {
      expiring = { afterBytes, left: times };
    },
    /** The drive holds at most `bytes` (undefined: no limit); a write past it answers 507. */
    setQuota(driveId: string, bytes: number | undefined) {
      if (bytes === undefined) quotas.delete(driveId);
      else quotas.set(driveId, bytes);
    },
    /** Requests that came before the Retry-After of the throttling answer they followed. */
    earlyRetries: () => earlyRetries,
    /** The next API call with any token answers 401 InvalidAuthenticationToken (the token expired). */
    expireTokens() {
      for (const t of tokens.values()) t.expired = true;
    },
    refuseAnonymousLinks(on = true) {
      refuseAnonymousLinks = on;
    },
    refuseRecipient(email: string) {
      refusedRecipients.add(email.toLowerCase());
    },
    /** Holds the first request matching until `release()`; `hit` resolves when it arrives. With `drop`,
     *  the released request is dropped unanswered and not applied (a fragment lost with its sender). */
    hold(match: (method: string, path: string) => boolean, opts: { drop?: boolean } = {}) {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let hit!: () => void;
      const arrived = new Promise<void>((r) => (hit = r));
      hold = { match, hit, released, drop: opts.drop ?? false };
      return { arrived, release };
    },
    /** Holds the first `n` requests matching until all `n` have arrived, then answers them together:
     *  concurrent deliveries all get past the point before any goes on. `arrived` resolves then. */
    barrier(n: number, match: (method: string, path: string) => boolean) {
      return meeting.add(n, (r) => match(r.method, r.path));
    },
    count(method: string, path: string | RegExp) {
      return log.filter((e) => e.method === method && (typeof path === 'string' ? e.path.includes(path) : path.test(e.path))).length;
    },
    close: () => server.close(),
  };
}

export type GraphFake = Awaited<ReturnType<typeof startGraphFake>>;

function mimeOf(name: string): string {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  return (
    {
      docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
      pdf: 'application/pdf',
      csv: 'text/csv',
      json: 'application/json',
    }[ext] ?? 'application/octet-stream'
  );
}

// DriveA: OneDrive / SharePoint document libraries through Microsoft Graph, with the subscription's
// connection (connection.ts: Entra client credentials and the drive). Reads download into the blob store
// (the run's scratch), writes upload from it; sharing uses createLink and invite.
//
// urn forms (template.urn, data.urn, relatedItems[].urn, sourceDocument.urn):
//   - an item id of the connection's drive ("01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K"); what a delivery returns;
//   - driveId!itemId: an item of another drive of the same tenant (split at the last "!", since
//     SharePoint drive ids contain one: "b!Xy…!01BYE5…");
//   - root:/Folder/file.docx: a path from the connection's drive root (the closing colon is optional).
//
// Exactly one file per write, across retries (a worker killed between the upload and the document
// record): the bytes go under a temporary name derived from the workflow's urn (".docgen-<urn>.<ext>",
// conflictBehavior replace, so a repeated upload overwrites instead of adding), the item id is journaled
// (store/location-writes.ts), and only then is the item renamed to its final name with the clash policy.
// A retried write reads the journal: a file that was uploaded is renamed (unless it already was), a
// file that was placed is returned as it is, a large upload resumes its session from
// nextExpectedRanges. Name clashes: `rename` by default (Graph's "name 1.docx"), `replace` or `fail`
// when the request asks (WriteRequest.conflict; `fail` answers VALIDATION_ERROR and leaves nothing).
// `replace` uploads straight to the final name (conflictBehavior replace is repeatable by itself), so
// the replaced file keeps its id, its versions and its sharing.
//
// Names: the API refuses, before queueing, a name or folder SharePoint would refuse (nameProblem); should
// Graph refuse a final name all the same (a rule we cannot see from here, such as the site's share of the
// 400-character path), the temporary file or copy is deleted for good: a failed write leaves nothing. The
// journal's upload-session and copy-monitor URLs are bearer credentials: they are stored sealed.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BlobRef } from '../../core/blob.ts';
import type { ErrorCode } from '../../core/errors.ts';
import { contentTypeOf, type FileFormat, formatOfFileName, isOfficeFormat, outputFileName } from '../../core/formats.ts';
import { deleteLocationWrite, getLocationWrite, type LocationWrite, putLocationWrite } from '../../store/location-writes.ts';
import { isSealed, seal, unseal } from '../../security/sealed.ts';
import type { Location, LocationContext, LocationDeps, SharingRequest, WriteRequest, Written } from '../location.ts';
import { LocationError, throttledError } from '../location.ts';
import { ThrottledError } from '../throttle.ts';
import { type BlobStore, BlobTooLargeError } from '../storage/blob-store.ts';
import { type DriveASettings, driveBase } from './connection.ts';
import { type DriveItem, GraphClient, GraphError, TokenError } from './graph.ts';
import { driveASettings } from './settings.ts';
import { valuesOf } from '../../core/settings.ts';

/** Files up to this size go up in one PUT; larger ones through an upload session. */
export const SIMPLE_UPLOAD_MAX = 4 * 1024 * 1024;
/** Upload session fragments: a multiple of 320 KiB (Graph's rule), 4.8 MiB. */
export const UPLOAD_CHUNK = 15 * 320 * 1024;
/** The largest file read from DriveA into the service. */
const MAX_READ_BYTES = 512 * 1024 * 1024;
const JOURNAL = 'DriveA';
/** Graph's answers that refuse a name for good (invalid, too long, taken with conflict fail). */
const REFUSALS = new Set([400, 409, 413]);

type Conflict = 'rename' | 'replace' | 'fail';
type Reading = 'template' | 'data' | 'document';

const NOT_FOUND: Record<Reading, { code: ErrorCode; field: string }> = {
  template: { code: 'TEMPLATE_NOT_FOUND', field: 'template.urn' },
  data: { code: 'DATA_NOT_FOUND', field: 'data.urn' },
  document: { code: 'TEMPLATE_NOT_FOUND', field: 'sourceDocument.urn' },
};

/** The Graph address of a urn (see the forms above), or a LocationError naming the field. */
export function itemAddress(drive: string, urn: string, reading: Reading): string {
  const u = urn.trim();
  const { code, field } = NOT_FOUND[reading];
  const bad = (why: string) => new LocationError(code, `${field} ${JSON.stringify(urn)} ${why}: DriveA takes an item id, driveId!itemId or root:/Folder/file.docx:`);
  const path = /^root:(\/.*?):?$/.exec(u);
  if (path) {
    const segments = path[1]!.split('/').filter(Boolean);
    if (segments.length === 0 || segments.some((s) => s === '.' || s === '..')) throw bad('is not a file path');
    return `${drive}/root:/${segments.map(encodeURIComponent).join('/')}:`;
  }
  const bang = u.lastIndexOf('!');
  if (bang > 0 && bang < u.length - 1) return `/drives/${encodeURIComponent(u.slice(0, bang))}/items/${encodeURIComponent(u.slice(bang + 1))}`;
  if (!/^[A-Za-z0-9._~-]+$/.test(u)) throw bad('is not a DriveA urn');
  return `${drive}/items/${encodeURIComponent(u)}`;
}

/** Why OneDrive / SharePoint refuse a file or folder name (Microsoft's "Restrictions and limitations in
 *  OneDrive and SharePoint"), or undefined. CON, PRN, ... are refused with an extension too ("CON.docx"),
 *  as Windows does: a synced copy of such a file could not exist on a Windows machine. */
export function driveANameRule(name: string): string | undefined {
  if (name === '' || /["*:<>?/\\|]/.test(name) || /[\u0000-\u001f]/.test(name)) return 'OneDrive and SharePoint refuse the characters " * : < > ? / \\ | (and control characters) in names';
  if (name !== name.trim()) return 'OneDrive and SharePoint refuse names that start or end with a space';
  if (/^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i.test(name) || /^(\.lock|desktop\.ini)$/i.test(name)) {
    return `${name} is a name OneDrive and SharePoint reserve (.lock, CON, PRN, AUX, NUL, COM0-COM9, LPT0-LPT9, desktop.ini)`;
  }
  if (name.startsWith('~$')) return 'OneDrive and SharePoint refuse names that start with ~$';
  if (/_vti_/i.test(name)) return 'OneDrive and SharePoint refuse names that contain _vti_';
  if (name === '.' || name === '..') return '. and .. are not names';
  return undefined;
}

/** SharePoint's limit for a decoded path, the site and library included: a path from the drive root
 *  longer than this is refused whatever the site. */
const MAX_PATH = 400;

/** Why a folder of document.path is refused, or undefined. */
function folderRule(name: string, depth: number): string | undefined {
  const why = driveANameRule(name) ?? (name.startsWith('~') ? 'SharePoint refuses folder names that start with ~' : undefined);
  if (why) return why;
  return depth === 0 && name.toLowerCase() === 'forms' ? 'SharePoint reserves forms at the root of a library' : undefined;
}

const segmentsOf = (path: string) => path.split('/').map((s) => s.trim()).filter(Boolean);

/** document.path: folders below the drive root, "/"-separated; empty text is the root. */
export function folderSegments(path: string, field = 'document.path'): string[] {
  const segments = segmentsOf(path);
  for (const [i, s] of segments.entries()) {
    const why = folderRule(s, i);
    if (why) throw new LocationError('VALIDATION_ERROR', `${field} ${JSON.stringify(path)}: the folder name ${JSON.stringify(s)} is not allowed in DriveA: ${why}`);
  }
  return segments;
}

/** Location.nameProblem of DriveA: the file's name (with its extension) and its folders. */
export function driveANameProblem(target: { name: string; path: string; fileFormat: string }): { field: 'name' | 'path'; reason: string } | undefined {
  const segments = segmentsOf(target.path);
  for (const [i, s] of segments.entries()) {
    const why = folderRule(s, i);
    if (why) return { field: 'path', reason: `the folder name ${JSON.stringify(s)} is not allowed in DriveA: ${why}` };
  }
  const file = outputFileName(target.name, target.fileFormat);
  const why = driveANameRule(file);
  if (why) return { field: 'name', reason: `the file name ${JSON.stringify(file)} is not allowed in DriveA: ${why}` };
  const length = [...segments, file].join('/').length;
  if (length > MAX_PATH) return { field: 'name', reason: `folders and file name make a path of ${length} characters, over the ${MAX_PATH} OneDrive and SharePoint allow` };
  return undefined;
}

/** Turns what Graph or the token endpoint said into the caller's error; transient failures pass through
 *  unchanged (plain errors: the activity is retried). */
function mapped(err: unknown, what: { reading?: Reading; urn?: string; field?: string }): unknown {
  if (err instanceof LocationError) return err;
  if (err instanceof ThrottledError) return throttledError(err);
  if (err instanceof BlobTooLargeError && what.reading) {
    // Not transient: a retry would download the same bytes again.
    const { field } = NOT_FOUND[what.reading];
    return new LocationError(what.reading === 'document' ? 'VALIDATION_ERROR' : 'TEMPLATE_TOO_COMPLEX', `${field} ${what.urn ?? ''} is larger than the ${MAX_READ_BYTES} bytes this service reads from DriveA`);
  }
  if (err instanceof TokenError) {
    return new LocationError(
      'CONNECTION_ERROR',
      `the DriveA connection was refused: ${err.message}; check tenantId, clientId and clientSecret with PUT /v1/common/connection/driveA`,
      [err.body],
    );
  }
  if (!(err instanceof GraphError)) return err;
  const external = [{ status: err.status, code: err.code, message: err.message }];
  if (err.status === 401 || err.status === 403) {
    return new LocationError('CONNECTION_ERROR', `DriveA refused the connection's access${what.urn ? ` to ${what.urn}` : ''} (${err.message}): grant the application access to the drive`, external);
  }
  if (what.reading && (err.status === 404 || err.status === 400)) {
    const { code, field } = NOT_FOUND[what.reading];
    return new LocationError(code, `${field} ${what.urn ?? ''} does not resolve in DriveA (${err.message})`, external);
  }
  if (err.status === 404) return new LocationError('CONNECTION_ERROR', `the DriveA connection's drive was not found (${err.message}): check driveId, siteId or userId`, external);
  if (err.status === 409 && err.code === 'nameAlreadyExists') {
    return new LocationError('VALIDATION_ERROR', `${what.field ?? 'document.name'} already exists in that DriveA folder and the conflict behaviour is fail`, external);
  }
  if (err.status === 507 || err.code === 'quotaLimitReached' || err.code === 'insufficientStorage') {
    return new LocationError('QUOTA_EXCEEDED', `the DriveA drive has no room left for ${what.field ?? 'document.name'} (Graph answered ${err.message}): free space in the drive or raise its quota, then send the request again`, external);
  }
  if (err.status === 400 || err.status === 413 || err.status === 423) return new LocationError('VALIDATION_ERROR', `DriveA refused the write (${err.message})`, external);
  return err;
}

/** Reads a blob from `offset`, in exact-size pieces. */
class BlobReader {
  private iterator: AsyncIterator<Buffer> | undefined;
  private pending: Buffer = Buffer.alloc(0);
  private readonly blobs: BlobStore;
  private readonly key: string;
  constructor(blobs: BlobStore, key: string) {
    this.blobs = blobs;
    this.key = key;
  }
  async open(offset: number): Promise<void> {
    await this.close();
    const stream = await this.blobs.createReadStream(this.key);
    this.iterator = (stream as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    this.pending = Buffer.alloc(0);
    for (let skipped = 0; skipped < offset; ) skipped += (await this.read(Math.min(offset - skipped, 8 * 1024 * 1024))).length;
  }
  async read(n: number): Promise<Buffer> {
    const parts: Buffer[] = [this.pending];
    let have = this.pending.length;
    while (have < n) {
      const next = await this.iterator!.next();
      if (next.done) break;
      parts.push(next.value);
      have += next.value.length;
    }
    const all = Buffer.concat(parts);
    this.pending = all.subarray(n);
    return all.subarray(0, n);
  }
  async close(): Promise<void> {
    await this.iterator?.return?.();
    this.iterator = undefined;
  }
}

const nextFrom = (s: { nextExpectedRanges?: string[] }): number | undefined => {
  const r = s.nextExpectedRanges?.[0];
  return r === undefined ? undefined : Number(r.split('-')[0]);
};

export function driveALocation(deps: LocationDeps): Location {
  const settings = valuesOf(driveASettings, deps.settings);
  async function connect(ctx: LocationContext) {
    const c = await deps.connections.open(ctx, 'driveA');
    const s = c.settings as unknown as DriveASettings;
    const graph = new GraphClient({
      graphUrl: settings.driveAGraphUrl,
      loginUrl: settings.driveALoginUrl,
      credentials: { tenantId: s.tenantId, clientId: s.clientId, clientSecret: c.secrets.clientSecret ?? '' },
      cacheKey: `${c.id}:${c.version}`,
      maxThrottleWaitMs: settings.driveThrottleMaxWaitMs,
    });
    return { graph, drive: driveBase(s) };
  }

  async function download(ctx: LocationContext, urn: string, reading: Reading, fileFormat?: string): Promise<{ item: DriveItem; blob: BlobRef }> {
    try {
      const { graph, drive } = await connect(ctx);
      const address = itemAddress(drive, urn, reading);
      const item = await graph.json<DriveItem>('GET', address);
      if (!item.file) throw new LocationError(NOT_FOUND[reading].code, `${NOT_FOUND[reading].field} ${urn} is a DriveA folder, not a file`);
      // Spec 4.8 rule 1: templates from DriveA are docx, xlsx or pptx.
      if (reading === 'template' && !isOfficeFormat(formatOfFileName(item.name))) {
        throw new LocationError('INVALID_TEMPLATE_FORMAT', `template.urn ${urn} is ${item.name} in DriveA: only .docx, .xlsx and .pptx files are templates`);
      }
      if (reading === 'template' && fileFormat && formatOfFileName(item.name) !== fileFormat) {
        throw new LocationError('INVALID_TEMPLATE_FORMAT', `template.fileFormat is ${fileFormat} but ${urn} is ${item.name} in DriveA`);
      }
      const res = await graph.request('GET', `${address}/content`);
      let content: Response = res;
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        // A short-lived pre-authenticated URL: no token goes there.
        content = await fetch(location, { signal: AbortSignal.timeout(300_000) });
        if (!content.ok) throw new Error(`the DriveA download URL answered ${content.status}`);
      }
      if (!content.body) throw new Error('DriveA sent no content');
      const key = `${ctx.scratch ?? 'scratch/adhoc/'}drivea-${randomUUID()}`;
      const put = await deps.blobs.putStream(key, Readable.fromWeb(content.body as never), { maxBytes: MAX_READ_BYTES });
      const format = formatOfFileName(item.name);
      const contentType = reading === 'data' ? 'application/json' : (item.file.mimeType ?? (format ? contentTypeOf(format as FileFormat) : 'application/octet-stream'));
      return { item, blob: { key, sha256: put.sha256, size: put.size, contentType } };
    } catch (err) {
      throw mapped(err, { reading, urn });
    }
  }

  /** The folder `segments` below the root, made where missing; its item id. */
  async function folder(graph: GraphClient, drive: string, segments: string[], made?: string[]): Promise<string> {
    // Usually the folder is there already: one request by path.
    if (segments.length > 0) {
      try {
        const found = await graph.json<DriveItem>('GET', `${drive}/root:/${segments.map(encodeURIComponent).join('/')}:`);
        if (found.folder) return found.id;
      } catch (err) {
        if (!(err instanceof GraphError && err.status === 404)) throw err;
      }
    }
    let parent = (await graph.json<DriveItem>('GET', `${drive}/root`)).id;
    for (const name of segments) {
      let child: DriveItem | undefined;
      try {
        child = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(parent)}:/${encodeURIComponent(name)}:`);
      } catch (err) {
        if (!(err instanceof GraphError && err.status === 404)) throw err;
      }
      if (!child) {
        try {
          child = await graph.json<DriveItem>('POST', `${drive}/items/${encodeURIComponent(parent)}/children`, {
            json: { name, folder: {}, '@microsoft.graph.conflictBehavior': 'fail' },
          });
          made?.push(child.id);
        } catch (err) {
          // Made meanwhile by a concurrent delivery into the same folder: use it.
          if (!(err instanceof GraphError && err.status === 409)) throw err;
          child = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(parent)}:/${encodeURIComponent(name)}:`);
        }
      }
      if (!child.folder) throw new LocationError('VALIDATION_ERROR', `document.path: ${name} is a file in DriveA, not a folder`);
      parent = child.id;
    }
    return parent;
  }

  /** Spec 4.8: a refused write leaves nothing in the target, so the folders this request made go again,
   *  deepest first, each only if it is still empty (another delivery may have put a file there meanwhile).
   *  Best effort: a folder that cannot be removed now stays, and the refusal is what the caller hears. */
  async function removeMadeFolders(graph: GraphClient, drive: string, made: string[]): Promise<void> {
    for (const id of [...made].reverse()) {
      try {
        const item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(id)}`);
        if (!item.folder || (item.folder.childCount ?? 0) > 0) return;
        await graph.request('POST', `${drive}/items/${encodeURIComponent(id)}/permanentDelete`);
      } catch {
        return;
      }
    }
  }

  /** Uploads `source` as `name` into the folder (replace on a clash: the name is ours), resuming a
   *  journaled upload session when there is one. */
  async function upload(
    graph: GraphClient,
    drive: string,
    parentId: string,
    name: string,
    source: BlobRef,
    journal: { write(w: LocationWrite): Promise<void>; resume?: string },
  ): Promise<DriveItem> {
    const target = `${drive}/items/${encodeURIComponent(parentId)}:/${encodeURIComponent(name)}:`;
    if (source.size <= SIMPLE_UPLOAD_MAX) {
      const bytes = await deps.blobs.get(source.key);
      return graph.json<DriveItem>('PUT', `${target}/content`, {
        body: bytes,
        headers: { 'content-type': source.contentType },
        query: { '@microsoft.graph.conflictBehavior': 'replace' },
      });
    }
    let url = journal.resume;
    let offset = 0;
    if (url) {
      try {
        const status = await graph.json<{ nextExpectedRanges?: string[]; id?: string }>('GET', url, { absolute: true });
        if (status.id) return status as DriveItem;
        offset = nextFrom(status) ?? 0;
      } catch (err) {
        if (!(err instanceof GraphError && err.status === 404)) throw err;
        url = undefined; // expired or finished: a new session
      }
    }
    const newSession = async (): Promise<string> => {
      const session = await graph.json<{ uploadUrl: string }>('POST', `${target}/createUploadSession`, {
        json: { item: { '@microsoft.graph.conflictBehavior': 'replace', name } },
      });
      offset = 0;
      await journal.write({ state: 'uploading', itemId: null, uploadUrl: session.uploadUrl });
      return session.uploadUrl;
    };
    let session: string = url ?? (await newSession());
    const reader = new BlobReader(deps.blobs, source.key);
    await reader.open(offset);
    try {
      for (let resyncs = 0, renewed = 0; ; ) {
        const chunk = await reader.read(Math.min(UPLOAD_CHUNK, source.size - offset));
        let res: Response;
        try {
          res = await graph.request('PUT', session, {
            absolute: true,
            body: chunk,
            headers: { 'content-range': `bytes ${offset}-${offset + chunk.length - 1}/${source.size}` },
          });
        } catch (err) {
          if (err instanceof GraphError && err.status === 404) {
            // The session expired half-way (Graph: "the upload session does not exist or has expired";
            // an idle session lasts minutes, a slow or paused upload outlives it): a new session, the
            // whole file again, once.
            if (++renewed > 1) {
              throw new LocationError(
                'FILE_UPLOAD_FAILED',
                `the DriveA upload session of ${name} expired before the upload finished, twice (404 on its upload URL after ${offset} of ${source.size} bytes): nothing was placed; send the request again`,
                [{ status: err.status, code: err.code, message: err.message }],
              );
            }
            session = await newSession();
            await reader.open(0);
            continue;
          }
          // 416: this range already arrived (an answer we lost); ask where to go on.
          if (!(err instanceof GraphError && err.status === 416) || ++resyncs > 5) throw err;
          const status = await graph.json<{ nextExpectedRanges?: string[]; id?: string }>('GET', session, { absolute: true });
          if (status.id) return status as DriveItem;
          offset = nextFrom(status) ?? 0;
          await reader.open(offset);
          continue;
        }
        if (res.status === 200 || res.status === 201) return (await res.json()) as DriveItem;
        const next = nextFrom((await res.json()) as { nextExpectedRanges?: string[] });
        const expected = offset + chunk.length;
        offset = next ?? expected;
        if (offset !== expected) await reader.open(offset);
      }
    } finally {
      await reader.close();
    }
  }

  async function share(graph: GraphClient, address: string, item: DriveItem, sharing: SharingRequest): Promise<Pick<Written, 'links' | 'emails' | 'externalErrors'>> {
    const links: NonNullable<Written['links']> = {};
    const emails = { succeededView: [] as string[], succeededEdit: [] as string[], failedView: [] as string[], failedEdit: [] as string[] };
    const externalErrors: unknown[] = [];
    const refusedOrThrow = (err: unknown, option: string) => {
      // 401 after a refresh and 404 are the connection's problem; a refusal of this one request is recorded.
      if (err instanceof GraphError && (err.status === 400 || err.status === 403 || err.status === 409 || err.status === 422)) {
        externalErrors.push({ option: `document.options.driveA.${option}`, status: err.status, code: err.code, message: err.message });
        return;
      }
      throw err;
    };
    for (const [flag, type, key] of [
      ['viewAnonymous', 'view', 'viewAnonymousLink'],
      ['editAnonymous', 'edit', 'editAnonymousLink'],
    ] as const) {
      if (!sharing[flag]) continue;
      try {
        const p = await graph.json<{ link?: { webUrl?: string } }>('POST', `${address}/createLink`, { json: { type, scope: 'anonymous' } });
        links[key] = p.link?.webUrl ?? '';
      } catch (err) {
        links[key] = '';
        refusedOrThrow(err, flag);
      }
    }
    for (const [list, role, ok, failed, key] of [
      ['viewUsers', 'read', 'succeededView', 'failedView', 'viewUserLink'],
      ['editUsers', 'write', 'succeededEdit', 'failedEdit', 'editUserLink'],
    ] as const) {
      const recipients = (sharing[list] ?? []).filter((e) => typeof e === 'string' && e.trim() !== '');
      if (recipients.length === 0) continue;
      type Entry = { error?: { code?: string; message?: string }; invitation?: { email?: string }; grantedToV2?: { user?: { email?: string } } };
      let value: Entry[] = [];
      try {
        const res = await graph.request('POST', `${address}/invite`, {
          json: { recipients: recipients.map((email) => ({ email })), roles: [role], requireSignIn: true, sendInvitation: sharing.sendInvitation === true },
        });
        value = ((await res.json()) as { value?: Entry[] }).value ?? [];
      } catch (err) {
        refusedOrThrow(err, list);
        const body = err instanceof GraphError ? (err.body as { value?: Entry[] }) : undefined;
        value = body?.value ?? recipients.map(() => ({ error: { code: (err as GraphError).code, message: (err as GraphError).message } }));
      }
      recipients.forEach((email, i) => {
        const entry =
          value.find((v) => (v.invitation?.email ?? v.grantedToV2?.user?.email ?? '').toLowerCase() === email.toLowerCase()) ??
          (value.length === recipients.length ? value[i] : undefined);
        if (entry && !entry.error) emails[ok].push(email);
        else {
          emails[failed].push(email);
          externalErrors.push({ option: `document.options.driveA.${list}`, email, code: entry?.error?.code ?? 'notInvited', message: entry?.error?.message ?? 'not in the answer' });
        }
      });
      if (emails[ok].length > 0 && item.webUrl) links[key] = item.webUrl;
    }
    return { links, emails, ...(externalErrors.length > 0 ? { externalErrors } : {}) };
  }

  /** Runs `place` once per urn: the journal says what an earlier attempt did. */
  async function journaled(
    ctx: LocationContext,
    urn: string,
    graph: GraphClient,
    drive: string,
    steps: {
      /** Makes the file under its temporary name (or finds it); journaled as uploaded. */
      make(journal: { write(w: LocationWrite): Promise<void>; resume?: string }): Promise<DriveItem>;
      /** Gives it its final name (and folder). */
      place(item: DriveItem): Promise<DriveItem>;
      temporaryName: string;
    },
  ): Promise<DriveItem> {
    const write = async (w: LocationWrite) =>
      putLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, urn, { ...w, uploadUrl: w.uploadUrl ? await seal(deps.db, ctx.subscriptionId, w.uploadUrl) : null });
    const earlier = await openedJournal(ctx, urn);
    let item: DriveItem | undefined;
    if (earlier?.itemId) {
      try {
        item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(earlier.itemId)}`);
      } catch (err) {
        if (!(err instanceof GraphError && err.status === 404)) throw err; // removed meanwhile: write again
      }
    }
    if (item && earlier?.state === 'placed') return item;
    if (!item) {
      item = await steps.make({ write, ...(earlier?.state === 'uploading' && earlier.uploadUrl ? { resume: earlier.uploadUrl } : {}) });
      await write({ state: 'uploaded', itemId: item.id, uploadUrl: null });
    }
    // Renamed already when it no longer has the temporary name (the answer to that PATCH was lost).
    if (item.name === steps.temporaryName) {
      try {
        item = await steps.place(item);
      } catch (err) {
        if (err instanceof GraphError && REFUSALS.has(err.status)) {
          // The final name is refused (or taken, with conflict fail): nothing stays behind, the temporary
          // file goes for good and the journal forgets it.
          await graph.request('POST', `${drive}/items/${encodeURIComponent(item.id)}/permanentDelete`).catch(() => undefined);
          await deleteLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, urn);
        }
        throw err;
      }
    }
    await write({ state: 'placed', itemId: item.id, uploadUrl: null });
    return item;
  }

  /** What a write, copy or move answers: the item in its folder, shared as asked. */
  async function placed(graph: GraphClient, drive: string, item: DriveItem, segments: string[], sharing: SharingRequest | undefined): Promise<Written> {
    const shared = sharing ? await share(graph, `${drive}/items/${encodeURIComponent(item.id)}`, item, sharing) : {};
    return { urn: item.id, name: item.name, path: segments.join('/'), ...(item.webUrl ? { uri: item.webUrl } : {}), ...shared };
  }

  /** Gives `item` its final name (and folder), with the clash policy. */
  async function placeAs(graph: GraphClient, drive: string, item: DriveItem, name: string, conflict: Conflict, parentId?: string): Promise<DriveItem> {
    return graph.json<DriveItem>('PATCH', `${drive}/items/${encodeURIComponent(item.id)}`, {
      json: { name, ...(parentId ? { parentReference: { id: parentId } } : {}) },
      query: { '@microsoft.graph.conflictBehavior': conflict },
    });
  }

  /** The journal entry of a write, its URL opened (rows of older versions hold it in plain text). */
  async function openedJournal(ctx: LocationContext, urn: string): Promise<LocationWrite | undefined> {
    const w = await getLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, urn);
    if (!w?.uploadUrl || !isSealed(w.uploadUrl)) return w;
    return { ...w, uploadUrl: await unseal(deps.db, ctx.subscriptionId, w.uploadUrl) };
  }

  const temporaryName = (urn: string, format: string) => `.docgen-${urn.replace(/[^A-Za-z0-9-]/g, '')}.${format}`;

  return {
    nameProblem: driveANameProblem,

    async readTemplate(ctx, urn, fileFormat) {
      return (await download(ctx, urn, 'template', fileFormat)).blob;
    },

    async readData(ctx, urn) {
      return (await download(ctx, urn, 'data')).blob;
    },

    async readDocument(ctx, urn) {
      const { item, blob } = await download(ctx, urn, 'document');
      const parentPath = item.parentReference?.path?.replace(/^.*?root:\/?/, '') ?? '';
      return { urn, name: item.name, path: decodeURIComponent(parentPath), fileFormat: formatOfFileName(item.name), blob };
    },

    async write(ctx, req: WriteRequest) {
      const name = outputFileName(req.name, req.fileFormat);
      const conflict: Conflict = req.conflict ?? 'rename';
      const made: string[] = [];
      let opened: { graph: GraphClient; drive: string } | undefined;
      try {
        const segments = folderSegments(req.path);
        opened = await connect(ctx);
        const { graph, drive } = opened;
        // With replace, the final name itself is as repeatable as a temporary one (a retry replaces the same
        // file again), and the replaced file keeps its id, versions and sharing.
        const tmp = conflict === 'replace' ? name : temporaryName(req.urn, req.fileFormat);
        const item = await journaled(ctx, req.urn, graph, drive, {
          temporaryName: conflict === 'replace' ? '' : tmp,
          make: async (journal) => upload(graph, drive, await folder(graph, drive, segments, made), tmp, req.source, journal),
          place: (i) => placeAs(graph, drive, i, name, conflict),
        });
        return await placed(graph, drive, item, segments, req.sharing);
      } catch (err) {
        const refusal = mapped(err, { field: 'document.name' });
        // Final (the caller's answer): the folders made for it go; a transient failure keeps them for the retry.
        if (refusal instanceof LocationError && opened && made.length > 0) await removeMadeFolders(opened.graph, opened.drive, made);
        throw refusal;
      }
    },

    /** Graph's copy (asynchronous: 202 and a monitor URL) to a temporary name, journaled like a write,
     *  then the final name; the bytes never pass through the service. */
    async copyWithin(ctx, urn, req) {
      const name = outputFileName(req.name, req.fileFormat);
      const conflict: Conflict = req.conflict ?? 'rename';
      try {
        const segments = folderSegments(req.path, 'targetDocument.path');
        const { graph, drive } = await connect(ctx);
        const source = itemAddress(drive, urn, 'document');
        const tmp = temporaryName(req.urn, req.fileFormat);
        const item = await journaled(ctx, req.urn, graph, drive, {
          temporaryName: tmp,
          make: async (journal) => {
            if (journal.resume) {
              // A copy an earlier attempt started: follow it, unless its monitor has expired.
              try {
                return await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(await copied(graph, journal.resume))}`);
              } catch (err) {
                if (!(err instanceof GraphError && err.status === 404)) throw err;
              }
            }
            const parentId = await folder(graph, drive, segments);
            const driveId = (await graph.json<{ id: string }>('GET', drive)).id;
            const res = await graph.request('POST', `${source}/copy`, {
              json: { parentReference: { driveId, id: parentId }, name: tmp },
              query: { '@microsoft.graph.conflictBehavior': 'replace' },
            });
            await res.body?.cancel();
            const monitor = res.headers.get('location') ?? '';
            if (!monitor) throw new Error('DriveA accepted the copy without a monitor URL');
            await journal.write({ state: 'uploading', itemId: null, uploadUrl: monitor });
            return graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(await copied(graph, monitor))}`);
          },
          place: (i) => placeAs(graph, drive, i, name, conflict),
        });
        return await placed(graph, drive, item, segments, req.sharing);
      } catch (err) {
        throw mapped(err, { field: 'targetDocument.name' });
      }
    },

    /** PATCH of the item's parent and name: the same item, in its new folder (journaled: a retried move
     *  returns the moved item). */
    async moveWithin(ctx, urn, req) {
      const name = outputFileName(req.name, req.fileFormat);
      const conflict: Conflict = req.conflict ?? 'rename';
      try {
        const segments = folderSegments(req.path, 'targetDocument.path');
        const { graph, drive } = await connect(ctx);
        const earlier = await getLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, req.urn);
        let item: DriveItem;
        if (earlier?.state === 'placed' && earlier.itemId) item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(earlier.itemId)}`);
        else {
          const source = await graph.json<DriveItem>('GET', itemAddress(drive, urn, 'document'));
          const own = await graph.json<{ id: string }>('GET', drive);
          // Graph moves inside one drive only; across drives the caller copies and removes.
          if (source.parentReference?.driveId && source.parentReference.driveId !== own.id) return undefined;
          item = await placeAs(graph, drive, source, name, conflict, await folder(graph, drive, segments));
          await putLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, req.urn, { state: 'placed', itemId: item.id, uploadUrl: null });
        }
        return await placed(graph, drive, item, segments, req.sharing);
      } catch (err) {
        throw mapped(err, { field: 'targetDocument.name', reading: undefined });
      }
    },

    /** A write whose run ended before placing its file: the temporary `.docgen-<urn>` file (only under that
     *  name) or the upload session goes, then the journal entry. Connection failures throw (kept for the
     *  next sweep). */
    async sweepLeftover(ctx, urn) {
      const earlier = await openedJournal(ctx, urn);
      if (!earlier || earlier.state === 'placed') return;
      try {
        const { graph, drive } = await connect(ctx);
        if (earlier.itemId) {
          try {
            const item = await graph.json<DriveItem>('GET', `${drive}/items/${encodeURIComponent(earlier.itemId)}`);
            if (item.name.startsWith('.docgen-')) await graph.request('POST', `${drive}/items/${encodeURIComponent(item.id)}/permanentDelete`);
          } catch (err) {
            if (!(err instanceof GraphError && err.status === 404)) throw err;
          }
        } else if (earlier.uploadUrl) {
          // An upload session (or a copy monitor): cancelling it drops what it holds; an expired one is gone.
          await graph.request('DELETE', earlier.uploadUrl, { absolute: true }).catch(() => undefined);
        }
      } catch (err) {
        throw mapped(err, { urn });
      }
      await deleteLocationWrite(deps.db, ctx.subscriptionId, JOURNAL, urn);
    },

    /** delete: to the recycle bin; permanentDelete: gone. Already gone (a retry) is done. */
    async remove(ctx, urn, mode) {
      try {
        const { graph, drive } = await connect(ctx);
        const address = itemAddress(drive, urn, 'document');
        if (mode === 'permanentDelete') await graph.request('POST', `${address}/permanentDelete`);
        else await graph.request('DELETE', address);
      } catch (err) {
        if (err instanceof GraphError && err.status === 404) return;
        throw mapped(err, { urn });
      }
    },
  };
}

/** Polls a copy monitor (no token: it is pre-authenticated) until the copy completes; the new item's id. */
async function copied(graph: GraphClient, monitor: string): Promise<string> {
  for (let poll = 0; ; poll++) {
    const status = await graph.json<{ status?: string; resourceId?: string; error?: { code?: string; message?: string } }>('GET', monitor, { absolute: true });
    if (status.status === 'completed' && status.resourceId) return status.resourceId;
    if (status.status === 'failed') {
      throw new GraphError(409, status.error?.code ?? 'copyFailed', `DriveA could not copy the file: ${status.error?.message ?? status.error?.code ?? 'failed'}`, status);
    }
    if (poll > 120) throw new Error('the DriveA copy did not finish in time; retrying');
    await sleep(Math.min(2000, 100 * 2 ** poll));
  }
}

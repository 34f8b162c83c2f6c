// DriveB: Google Drive, through the subscription's driveB connection (connection.ts). urns are Drive file
// ids; paths are folders from the drive's root (My Drive, or the connection's shared drive), created on
// write.
// - readTemplate: a Google Doc / Sheet / Slides deck is exported to its Office twin (docx / xlsx / pptx)
//   so the engine merges it with the one template language; Office files stored in Drive are downloaded.
// - readData: a JSON file, or a Google Sheet whose first row names the fields: {rows: [{field: value}]}.
// - write: uploads into document.path; gdoc / gsheet / gslide upload the merged Office file converting it
//   to the native type. Drive allows duplicate names, so docgen allocates them: the file goes up under a
//   temporary name (".docgen-<urn>"), then, holding the folder's names lock (one delivery at a time per
//   connection and folder, across processes: store/location-writes.ts withLocationLock), the name is
//   looked up and the file renamed: rename (default: "name (1)"), fail (the temporary file is deleted) or
//   replace. Replace writes the new content into the existing file in place (files.update with media),
//   keeping its id, link and permissions. The workflow's urn is stored in the file's appProperties: a
//   retried write finds the file its earlier attempt created or replaced (exactly one file per generation);
//   a resumable upload that died mid-way created nothing. Folders are created under a lock too (drive.ts).
// - reads stream into the blob store, up to MAX_READ_BYTES.
// - sharing: `anyone` reader/writer for the anonymous flags, `user` reader/writer per address without a
//   notification e-mail (unless `notify`); links are the file's webViewLink; per-user results.
// - remove: delete = trash (recoverable), permanentDelete = delete.
// - copyWithin / moveWithin (manage inside DriveB: files.copy, addParents/removeParents) and nativeMerge.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlobRef } from '../../core/blob.ts';
import type { ErrorCode } from '../../core/errors.ts';
import { contentTypeOf, isNativeFormat, outputFileName } from '../../core/formats.ts';
import { withLocationLock } from '../../store/location-writes.ts';
import type { OpenedConnection } from '../connections.ts';
import { type Location, type LocationContext, type LocationDeps, LocationError, throttledError, type NativeMergeRequest, type SharingRequest, type WriteRequest, type Written } from '../location.ts';
import { BlobTooLargeError } from '../storage/blob-store.ts';
import { DEFAULT_RETRY, type GoogleApiError, googleClients, googleError, type RetryPolicy, UploadSessionExpiredError } from './client.ts';
import { ThrottledError } from '../throttle.ts';
import { credentialsOf } from './connection.ts';
import { type DriveFile, DriveOps, formatOfMime, GOOGLE_MIME, NATIVE_TWIN, type NativeFormat, OFFICE_MIME, oldest } from './drive.ts';
import { nativeRequests, planNativeMerge } from './native-merge.ts';
import { driveBSettings } from './settings.ts';
import { valuesOf } from '../../core/settings.ts';

/** Spec 4.4 rule 2 / 4.8 rule 1: only the native formats are templates from DriveB. */
const TEMPLATE_FORMATS = new Set(['gdoc', 'gsheet', 'gslide']);
/** The largest file read from DriveB into the service (a template, data, a manage source). */
export const MAX_READ_BYTES = 512 * 1024 * 1024;

type Conflict = 'rename' | 'replace' | 'fail';

/** What DriveB adds to the Location interface. */
export interface DriveBLocation extends Location {
  copyWithin(ctx: LocationContext, sourceUrn: string, req: Omit<WriteRequest, 'source'>): Promise<Written>;
  moveWithin(ctx: LocationContext, sourceUrn: string, req: Omit<WriteRequest, 'source'>): Promise<Written | undefined>;
  nativeMerge(ctx: LocationContext, req: NativeMergeRequest): Promise<Written & { pages: number }>;
}

function asLocationError(err: unknown, notFound: ErrorCode, what: string, serviceAccount = false): unknown {
  if (err instanceof LocationError) return err;
  if (err instanceof ThrottledError) return throttledError(err);
  if (err instanceof UploadSessionExpiredError) return new LocationError('FILE_UPLOAD_FAILED', `${what}: ${err.message}`);
  const g: GoogleApiError = googleError(err);
  const external = [{ status: g.status, reason: g.reason, message: g.message }];
  if (g.retryable && !g.auth) return g; // transient: the activity is retried
  if (g.auth || g.status === 401) {
    return new LocationError('CONNECTION_ERROR', `Google refused the driveB connection (${g.message}): check it with PUT /v1/common/connection/driveB`, external);
  }
  if (g.reason === 'storageQuotaExceeded' || g.reason === 'quotaExceeded' || g.reason === 'teamDriveFileLimitExceeded') {
    return new LocationError(
      'QUOTA_EXCEEDED',
      serviceAccount
        ? `${what}: the DriveB storage quota is used up (${g.message}); a service account has no storage of its own: connect with subject (domain-wide delegation) or sharedDriveId`
        : `${what}: the DriveB storage quota of the connected Google account is used up (${g.message}): free space in that Drive or connect a shared drive (sharedDriveId)`,
      external,
    );
  }
  if (g.status === 404 || (g.status === 403 && notFound !== 'CONNECTION_ERROR')) {
    return new LocationError(notFound, `${what} was not found in DriveB, or the driveB connection cannot see it (${g.message})`, external);
  }
  if (g.status === 403) return new LocationError('CONNECTION_ERROR', `${what}: the driveB connection is not allowed to do this (${g.message})`, external);
  return new LocationError('VALIDATION_ERROR', `${what}: Google answered ${g.status} ${g.reason}: ${g.message}`, external);
}

/** The Drive name of a document: native files carry no extension. */
function driveName(name: string, fileFormat: string): string {
  return isNativeFormat(fileFormat) ? name : outputFileName(name, fileFormat);
}

function numbered(name: string, n: number, native: boolean): string {
  const dot = name.lastIndexOf('.');
  if (native || dot <= 0) return `${name} (${n})`;
  return `${name.slice(0, dot)} (${n})${name.slice(dot)}`;
}

/** `{rows: [...]}` from a sheet's values: the first row names the fields (blank names are skipped); rows
 *  that are entirely blank are dropped; numbers and booleans keep their type. */
export function sheetRowsToData(values: unknown[][]): { rows: Record<string, unknown>[] } {
  const [header = [], ...body] = values;
  const names = header.map((h) => (h === null || h === undefined ? '' : String(h).trim()));
  const rows: Record<string, unknown>[] = [];
  for (const r of body) {
    if (r.every((v) => v === '' || v === null || v === undefined)) continue;
    const o: Record<string, unknown> = {};
    names.forEach((n, i) => {
      if (n) o[n] = r[i] ?? '';
    });
    rows.push(o);
  }
  return { rows };
}

const IMAGE_SNIFF: [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'image/png'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [[0x47, 0x49, 0x46], 'image/gif'],
];

/** An image value of the data: an http(s) URL (Google fetches it as is) or bytes (data URL, base64,
 *  {data}) that docgen must make reachable. */
function imageOf(value: unknown): { url: string } | { bytes: Buffer; contentType: string } | undefined {
  const v = value && typeof value === 'object' && 'data' in value ? (value as { data: unknown }).data : value;
  if (typeof v !== 'string' || v === '') return undefined;
  if (/^https?:\/\//i.test(v)) return { url: v };
  const m = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(v);
  const bytes = Buffer.from(m ? m[3]! : v, m && !m[2] ? 'utf8' : 'base64');
  const type = IMAGE_SNIFF.find(([sig]) => sig.every((b, i) => bytes[i] === b))?.[1];
  return type ? { bytes, contentType: type } : undefined;
}

/** The temporary name of a write's file until its name is allocated (native files carry no extension). */
function temporaryName(urn: string, fileFormat: string): string {
  const base = `.docgen-${urn.replace(/[^A-Za-z0-9-]/g, '')}`;
  return isNativeFormat(fileFormat) ? base : `${base}.${fileFormat}`;
}

export function driveBLocation(deps: LocationDeps, retry: RetryPolicy = DEFAULT_RETRY, limits: { maxReadBytes?: number } = {}): DriveBLocation {
  const cache = new Map<string, { fingerprint: string; ops: DriveOps }>();
  const maxReadBytes = limits.maxReadBytes ?? MAX_READ_BYTES;
  /** Connections through a service account (a full drive's advice differs from an OAuth user's). */
  const viaServiceAccount = new WeakSet<DriveOps>();

  async function open(ctx: LocationContext): Promise<DriveOps> {
    const c: OpenedConnection = await deps.connections.open(ctx, 'driveB');
    const s = valuesOf(driveBSettings, deps.settings);
    const fingerprint = c.version;
    const hit = cache.get(c.id);
    if (hit?.fingerprint === fingerprint) return hit.ops;
    const ops = new DriveOps(
      googleClients({ apiUrl: s.driveBApiUrl, tokenUrl: s.driveBTokenUrl }, credentialsOf(c), { ...retry, maxThrottleWaitMs: s.driveThrottleMaxWaitMs }),
      typeof c.settings.sharedDriveId === 'string' ? c.settings.sharedDriveId : undefined,
      (key, fn) => withLocationLock(deps.db, `DriveB ${c.id} ${key}`, fn),
    );
    cache.set(c.id, { fingerprint, ops });
    if (credentialsOf(c).kind === 'serviceAccount') viaServiceAccount.add(ops);
    return ops;
  }

  async function toScratch(name: string, bytes: Uint8Array, contentType: string): Promise<BlobRef> {
    const key = `scratch/driveB-${randomUUID()}/${name}`;
    const put = await deps.blobs.put(key, bytes);
    return { key, sha256: put.sha256, size: put.size, contentType };
  }

  /** Streams a download into a scratch blob, refusing past maxReadBytes (nothing is left then). */
  async function streamToScratch(name: string, stream: Readable, contentType: string, what: string, tooLarge: ErrorCode): Promise<BlobRef> {
    const key = `scratch/driveB-${randomUUID()}/${name}`;
    try {
      const put = await deps.blobs.putStream(key, stream, { maxBytes: maxReadBytes });
      return { key, sha256: put.sha256, size: put.size, contentType };
    } catch (err) {
      stream.destroy();
      if (err instanceof BlobTooLargeError) throw new LocationError(tooLarge, `${what} is larger than the ${maxReadBytes} bytes this service reads from DriveB`);
      throw err;
    }
  }

  /** A file's bytes in docgen's terms, as a scratch blob: native files exported to their Office twin. */
  async function fetchFile(ops: DriveOps, file: DriveFile, what: string, tooLarge: ErrorCode, name: string): Promise<{ blob: BlobRef; format: string }> {
    const format = formatOfMime(file.mimeType, file.name ?? '');
    if (isNativeFormat(format)) {
      const twin = NATIVE_TWIN[format];
      return { blob: await streamToScratch(`${name}.${twin}`, await ops.streamOf(file, OFFICE_MIME[twin]), OFFICE_MIME[twin], what, tooLarge), format };
    }
    return { blob: await streamToScratch(`${name}.${format || 'bin'}`, await ops.streamOf(file), file.mimeType ?? contentTypeOf(format), what, tooLarge), format };
  }

  /** Gives `mine` (a file this write made under its temporary name, in `folderId`) its final name, holding
   *  the folder's names lock: `wanted` when free, else by the clash policy: rename ("name (1)"), fail (the
   *  file is deleted), replace. `replaceInPlace` (uploads): the existing file takes the content, keeping its
   *  id, link and permissions, and `mine` is deleted; without (copies): the existing files go to the trash
   *  and `mine` takes the name. A final name refused for any other reason deletes `mine` too. */
  async function settle(
    ops: DriveOps,
    mine: DriveFile,
    target: { folderId: string; wanted: string; native: boolean; conflict: Conflict; path: string },
    replaceInPlace?: (existing: DriveFile) => Promise<DriveFile>,
  ): Promise<DriveFile> {
    const drop = () => ops.delete(mine.id!).catch(() => undefined);
    let replacing: DriveFile | undefined;
    try {
      const named = await ops.lock(`names:${target.folderId}`, async () => {
        const clashes = (await ops.byName(target.folderId, target.wanted)).filter((f) => f.id !== mine.id);
        if (clashes.length === 0) return ops.rename(mine.id!, target.wanted);
        if (target.conflict === 'fail') {
          throw new LocationError('VALIDATION_ERROR', `document.name: ${target.wanted} already exists in ${target.path || 'the root folder'} of DriveB (conflict: fail)`);
        }
        if (target.conflict === 'replace') {
          if (replaceInPlace) {
            replacing = oldest(clashes);
            return undefined;
          }
          for (const old of clashes) await ops.trash(old.id!);
          return ops.rename(mine.id!, target.wanted);
        }
        for (let n = 1; n < 1000; n++) {
          const candidate = numbered(target.wanted, n, target.native);
          if ((await ops.byName(target.folderId, candidate)).length === 0) return ops.rename(mine.id!, candidate);
        }
        throw new LocationError('VALIDATION_ERROR', `document.name: no free name for ${target.wanted} in ${target.path}`);
      });
      if (named) return named;
    } catch (err) {
      // Refused for good: the temporary file goes; a transient failure leaves it for the retry to find.
      if (err instanceof LocationError || !googleError(err).retryable) await drop();
      throw err;
    }
    const replaced = await replaceInPlace!(replacing!);
    await drop();
    return replaced;
  }

  /** Permissions for the sharing options; a refused one is reported, never fatal. */
  async function share(ops: DriveOps, file: DriveFile, sharing: SharingRequest | undefined): Promise<Pick<Written, 'links' | 'emails' | 'externalErrors'>> {
    if (!sharing) return {};
    const link = file.webViewLink ?? '';
    const notify = sharing.sendInvitation === true;
    const links: NonNullable<Written['links']> = {};
    const emails = { succeededView: [] as string[], succeededEdit: [] as string[], failedView: [] as string[], failedEdit: [] as string[] };
    const externalErrors: unknown[] = [];
    const attempt = async (p: Parameters<DriveOps['share']>[1]): Promise<boolean> => {
      try {
        await ops.share(file.id!, p, notify);
        return true;
      } catch (err) {
        const g = googleError(err);
        if (g.auth || g.status === 401) throw asLocationError(g, 'CONNECTION_ERROR', 'sharing');
        externalErrors.push({ target: p.emailAddress ?? 'anyone', role: p.role, status: g.status, reason: g.reason, message: g.message });
        return false;
      }
    };
    // Drive has one link per file: the anonymous flags differ only by the `anyone` permission's role.
    if (sharing.editAnonymous) {
      if (await attempt({ type: 'anyone', role: 'writer' })) {
        links.editAnonymousLink = link;
        if (sharing.viewAnonymous) links.viewAnonymousLink = link;
      }
    } else if (sharing.viewAnonymous && (await attempt({ type: 'anyone', role: 'reader' }))) {
      links.viewAnonymousLink = link;
    }
    for (const email of sharing.viewUsers ?? []) ((await attempt({ type: 'user', role: 'reader', emailAddress: email })) ? emails.succeededView : emails.failedView).push(email);
    for (const email of sharing.editUsers ?? []) ((await attempt({ type: 'user', role: 'writer', emailAddress: email })) ? emails.succeededEdit : emails.failedEdit).push(email);
    if (emails.succeededView.length > 0) links.viewUserLink = link;
    if (emails.succeededEdit.length > 0) links.editUserLink = link;
    const anyUsers = (sharing.viewUsers?.length ?? 0) + (sharing.editUsers?.length ?? 0) > 0;
    return { links, ...(anyUsers ? { emails } : {}), ...(externalErrors.length > 0 ? { externalErrors } : {}) };
  }

  function written(file: DriveFile, path: string, extra: Pick<Written, 'links' | 'emails' | 'externalErrors'> = {}): Written {
    return { urn: file.id!, name: file.name ?? '', path, ...(file.webViewLink ? { uri: file.webViewLink } : {}), ...extra };
  }

  return {
    async readTemplate(ctx, urn) {
      const ops = await open(ctx);
      try {
        const file = await ops.get(urn);
        const format = formatOfMime(file.mimeType, file.name ?? '');
        if (!TEMPLATE_FORMATS.has(format)) throw new LocationError('TEMPLATE_NOT_FOUND', `template.urn ${urn} is a ${file.mimeType} file in DriveB, not a template (gdoc, gsheet, gslide)`);
        return (await fetchFile(ops, file, `template.urn ${urn}`, 'TEMPLATE_TOO_COMPLEX', 'template')).blob;
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `template.urn ${urn}`);
      }
    },

    async readData(ctx, urn) {
      const ops = await open(ctx);
      try {
        const file = await ops.get(urn);
        if (file.mimeType === GOOGLE_MIME.gsheet) {
          const data = sheetRowsToData(await ops.sheetRows(urn));
          return await toScratch('data.json', Buffer.from(JSON.stringify(data), 'utf8'), 'application/json');
        }
        if (formatOfMime(file.mimeType, file.name ?? '') !== 'json') {
          throw new LocationError('DATA_INVALID', `data.urn ${urn} is a ${file.mimeType} file: DriveB data must be a JSON file or a Google Sheet`);
        }
        return await streamToScratch('data.json', await ops.streamOf(file), 'application/json', `data.urn ${urn}`, 'TEMPLATE_TOO_COMPLEX');
      } catch (err) {
        throw asLocationError(err, 'DATA_NOT_FOUND', `data.urn ${urn}`);
      }
    },

    async readDocument(ctx, urn) {
      const ops = await open(ctx);
      try {
        const file = await ops.get(urn);
        if (file.mimeType === GOOGLE_MIME.folder) throw new LocationError('TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn} is a folder`);
        const got = await fetchFile(ops, file, `sourceDocument.urn ${urn}`, 'VALIDATION_ERROR', 'source');
        return { urn, name: file.name ?? '', path: '', fileFormat: got.format, blob: got.blob };
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn}`);
      }
    },

    async write(ctx, req) {
      const ops = await open(ctx);
      const made: string[] = [];
      try {
        const native = isNativeFormat(req.fileFormat);
        const temporary = temporaryName(req.urn, req.fileFormat);
        const conflict = req.conflict ?? 'rename';
        const contentType = native ? OFFICE_MIME[NATIVE_TWIN[req.fileFormat as NativeFormat]] : contentTypeOf(req.fileFormat);
        const tag = { docgenUrn: req.urn };
        // An earlier attempt of this write may have uploaded (or replaced) the file already; one that
        // replaced a file in place may have died before deleting its temporary upload.
        const earlier = await ops.allByWriteId(req.urn);
        let file = earlier.find((f) => f.name !== temporary) ?? earlier[0];
        if (file && file.name !== temporary) for (const left of earlier.filter((f) => f.name === temporary)) await ops.delete(left.id!);
        if (!file || file.name === temporary) {
          const folderId = (await ops.folder(req.path, true, made))!;
          const wanted = driveName(req.name, req.fileFormat);
          const replaceInPlace = async (existing: DriveFile) => ops.updateContent(existing.id!, { bytes: await deps.blobs.get(req.source.key), contentType, appProperties: tag });
          if (!file && conflict === 'replace') {
            const existing = oldest(await ops.byName(folderId, wanted));
            if (existing) file = await replaceInPlace(existing);
          }
          if (!file) {
            file = await ops.upload({
              folderId,
              name: temporary,
              bytes: await deps.blobs.get(req.source.key),
              contentType,
              ...(native ? { targetMime: GOOGLE_MIME[req.fileFormat as NativeFormat] } : {}),
              appProperties: tag,
            });
          }
          if (file.name === temporary) file = await settle(ops, file, { folderId, wanted, native, conflict, path: req.path }, replaceInPlace);
        }
        return written(file, req.path, await share(ops, file, req.sharing));
      } catch (err) {
        const refusal = asLocationError(err, 'CONNECTION_ERROR', `document.path ${req.path || '(root)'}`, viaServiceAccount.has(ops));
        // Final (the caller's answer): spec 4.8, nothing stays in the target; the folders this write made
        // go, deepest first, each only while empty. A transient failure keeps them for the retry.
        if (refusal instanceof LocationError) {
          for (const id of [...made].reverse()) {
            const empty = await ops.g.call(() => ops.g.drive.files.list({ q: `'${id}' in parents and trashed = false`, fields: 'files(id)', supportsAllDrives: true, includeItemsFromAllDrives: true }, ops.g.opts('drive'))).catch(() => undefined);
            if (!empty || (empty.files?.length ?? 0) > 0) break;
            if (!(await ops.delete(id).then(() => true, () => false))) break;
          }
        }
        throw refusal;
      }
    },

    async remove(ctx, urn, mode) {
      const ops = await open(ctx);
      try {
        if (mode === 'permanentDelete') await ops.delete(urn);
        else await ops.trash(urn);
      } catch (err) {
        // Already gone (a retried permanent delete) is done.
        if (googleError(err).status === 404) return;
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn}`);
      }
    },

    async copyWithin(ctx, sourceUrn, target) {
      const ops = await open(ctx);
      try {
        let copy = await ops.byWriteId(target.urn);
        const source = copy ? undefined : await ops.get(sourceUrn);
        const format = formatOfMime((copy ?? source)!.mimeType, source?.name ?? '');
        const temporary = temporaryName(target.urn, format);
        if (!copy || copy.name === temporary) {
          const folderId = (await ops.folder(target.path, true))!;
          copy ??= await ops.copy(sourceUrn, folderId, temporary, { docgenUrn: target.urn });
          copy = await settle(ops, copy, { folderId, wanted: driveName(target.name, format), native: isNativeFormat(format), conflict: target.conflict ?? 'rename', path: target.path });
        }
        // targetDocument.options.driveB shares the copy, as write does.
        return written(copy, target.path, await share(ops, copy, target.sharing));
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${sourceUrn}`, viaServiceAccount.has(ops));
      }
    },

    async moveWithin(ctx, sourceUrn, target) {
      const ops = await open(ctx);
      try {
        const source = await ops.get(sourceUrn);
        // A retried move finds the file marked with this move's urn: it is already in place.
        let moved = source;
        if (source.appProperties?.docgenMove !== target.urn) {
          const format = formatOfMime(source.mimeType, source.name ?? '');
          const folderId = (await ops.folder(target.path, true))!;
          const wanted = driveName(target.name, format);
          const conflict = target.conflict ?? 'rename';
          // The name is chosen and taken in one request, holding the folder's names lock.
          moved = await ops.lock(`names:${folderId}`, async () => {
            const clashes = (await ops.byName(folderId, wanted)).filter((f) => f.id !== source.id);
            let name = wanted;
            if (clashes.length > 0 && conflict === 'fail') throw new LocationError('VALIDATION_ERROR', `targetDocument.name: ${wanted} already exists in ${target.path || 'the root folder'} of DriveB (conflict: fail)`);
            if (clashes.length > 0 && conflict === 'replace') for (const old of clashes) await ops.trash(old.id!);
            for (let n = 1; clashes.length > 0 && conflict === 'rename' && name === wanted; n++) {
              if (n >= 1000) throw new LocationError('VALIDATION_ERROR', `targetDocument.name: no free name for ${wanted} in ${target.path}`);
              const candidate = numbered(wanted, n, isNativeFormat(format));
              if ((await ops.byName(folderId, candidate)).length === 0) name = candidate;
            }
            return ops.move(source, folderId, name, { docgenMove: target.urn });
          });
        }
        return written(moved, target.path, await share(ops, moved, target.sharing));
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${sourceUrn}`, viaServiceAccount.has(ops));
      }
    },

    async nativeMerge(ctx, req) {
      const ops = await open(ctx);
      const format = req.template.fileFormat as NativeFormat;
      const scratch: string[] = [];
      try {
        const template = await ops.get(req.template.urn);
        if (template.mimeType !== GOOGLE_MIME[format]) {
          throw new LocationError('TEMPLATE_NOT_FOUND', `template.urn ${req.template.urn} is a ${template.mimeType} file, not a ${format} (native merge copies the Google file itself)`);
        }
        // Decide everything before writing: the tags, and whether each image can reach Google.
        const { texts, pages } = await ops.nativeText(format, req.template.urn);
        const data: unknown = JSON.parse(Buffer.from(await deps.blobs.get(req.data.key)).toString('utf8'));
        const plan = planNativeMerge(format, texts, data, { images: req.images });
        if (plan.refused.length > 0) {
          throw new LocationError(
            'NOT_SUPPORTED',
            `document.options.driveBGenerate.nativeMergeEnabled: ${plan.refused.map((r) => `${r.tag} (${r.why})`).join(', ')}; merge this template without nativeMergeEnabled (the default route exports it, merges it with the full template language and uploads it back as ${format})`,
          );
        }
        const urls = new Map<string, string>();
        for (const [i, im] of plan.images.entries()) {
          const img = imageOf(im.value);
          if (!img) continue; // no image: the tag is cleared
          if ('url' in img) {
            urls.set(im.tag, img.url);
            continue;
          }
          const key = `scratch/driveB-images-${req.write.urn}/${i}`;
          await deps.blobs.put(key, img.bytes);
          scratch.push(key);
          const url = await deps.blobs.presignedGetUrl(key, { expiresInSeconds: 900, fileName: `image-${i}`, contentType: img.contentType });
          if (!url) {
            throw new LocationError(
              'NOT_SUPPORTED',
              `document.options.driveBGenerate.nativeImageMergeEnabled: ${im.tag} holds image bytes, which Google can only fetch from a URL: configure object storage (STORAGE_URL s3://...) so docgen can hand it a presigned URL, or put an https URL in the data`,
            );
          }
          urls.set(im.tag, url);
        }
        let copy = await ops.byWriteId(req.write.urn);
        const temporary = temporaryName(req.write.urn, format);
        if (!copy || copy.name === temporary) {
          const folderId = (await ops.folder(req.write.path, true))!;
          // Under its temporary name until merged: a half-merged copy never has the document's name.
          copy ??= await ops.copy(req.template.urn, folderId, temporary, { docgenUrn: req.write.urn });
          try {
            await ops.batchUpdate(format, copy.id!, nativeRequests(format, plan, urls));
          } catch (err) {
            // A half-merged copy must not stay behind: a retry copies again.
            await ops.delete(copy.id!).catch(() => undefined);
            throw err;
          }
          copy = await settle(ops, copy, { folderId, wanted: req.write.name, native: true, conflict: req.write.conflict ?? 'rename', path: req.write.path });
        }
        return { ...written(copy, req.write.path, await share(ops, copy, req.write.sharing)), pages };
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `template.urn ${req.template.urn}`, viaServiceAccount.has(ops));
      } finally {
        for (const key of scratch) await deps.blobs.delete(key).catch(() => undefined);
      }
    },
  };
}

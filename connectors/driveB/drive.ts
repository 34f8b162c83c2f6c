// What the DriveB location does with Drive, on top of the clients (client.ts): folders by path, look-ups
// by name and by docgen's own write id, uploads (multipart up to 5 MB, resumable above, converting to a
// native type when asked) and content replaced in place, export and download as streams, sharing, copy /
// move / rename / trash / delete, and the Docs, Sheets and Slides reads and batch updates of native merge
// and Sheet data.
//
// Drive allows any number of files of one name in a folder: nothing stops two deliveries that both look a
// name up, find nothing and create it. Folder creation therefore runs under `lock` (the location makes it
// a lock per connection and parent folder, across processes: store/location-writes.ts), looks again once
// it holds it, and after creating looks a third time: should a folder of that name have been made
// meanwhile without the lock, every delivery uses the oldest (createdTime, then id) and an empty one of ours
// goes. The location allocates file names under the same kind of lock.
import { Readable } from 'node:stream';
import type { drive_v3 } from '@googleapis/drive';
import { FILE_FIELDS, type GoogleClients, RESUMABLE_ABOVE, resumableUpload } from './client.ts';

export const GOOGLE_MIME = {
  folder: 'application/vnd.google-apps.folder',
  gdoc: 'application/vnd.google-apps.document',
  gsheet: 'application/vnd.google-apps.spreadsheet',
  gslide: 'application/vnd.google-apps.presentation',
} as const;

export const OFFICE_MIME = {
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
} as const;

/** A native format's Office twin: what it exports to, what our engine merges, what converts back on upload. */
export const NATIVE_TWIN = { gdoc: 'docx', gsheet: 'xlsx', gslide: 'pptx' } as const;
export type NativeFormat = keyof typeof NATIVE_TWIN;

/** The docgen format of a Drive mime type ('' when none of ours). */
export function formatOfMime(mimeType: string | null | undefined, name = ''): string {
  switch (mimeType) {
    case GOOGLE_MIME.gdoc:
      return 'gdoc';
    case GOOGLE_MIME.gsheet:
      return 'gsheet';
    case GOOGLE_MIME.gslide:
      return 'gslide';
    case OFFICE_MIME.docx:
      return 'docx';
    case OFFICE_MIME.xlsx:
      return 'xlsx';
    case OFFICE_MIME.pptx:
      return 'pptx';
    case 'application/pdf':
      return 'pdf';
    case 'text/csv':
      return 'csv';
    case 'application/json':
      return 'json';
    default: {
      const dot = name.lastIndexOf('.');
      return dot < 0 ? '' : name.slice(dot + 1).toLowerCase();
    }
  }
}

export type DriveFile = drive_v3.Schema$File;

/** Drive query string literal. */
const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** Runs `fn` holding the lock named `key` (a folder's children: 'folder:<id>', its names: 'names:<id>'). */
export type DriveLock = <T>(key: string, fn: () => Promise<T>) => Promise<T>;

const unlocked: DriveLock = (_key, fn) => fn();

/** The file that came first of several of one name: every process picks the same one. */
export function oldest(files: DriveFile[]): DriveFile | undefined {
  return [...files].sort((a, b) => (a.createdTime ?? '').localeCompare(b.createdTime ?? '') || (a.id ?? '').localeCompare(b.id ?? ''))[0];
}

export class DriveOps {
  readonly g: GoogleClients;
  /** Shared drive id when the connection names one; else My Drive ('root'). */
  readonly sharedDriveId: string | undefined;
  readonly lock: DriveLock;
  constructor(g: GoogleClients, sharedDriveId?: string, lock: DriveLock = unlocked) {
    this.g = g;
    this.sharedDriveId = sharedDriveId || undefined;
    this.lock = lock;
  }

  get rootId(): string {
    return this.sharedDriveId ?? 'root';
  }

  private listParams() {
    return this.sharedDriveId
      ? { corpora: 'drive', driveId: this.sharedDriveId, includeItemsFromAllDrives: true, supportsAllDrives: true }
      : { supportsAllDrives: true, includeItemsFromAllDrives: true };
  }

  async list(q: string): Promise<DriveFile[]> {
    const g = this.g;
    const res = await g.call(() =>
      g.drive.files.list({ q, fields: `files(${FILE_FIELDS})`, pageSize: 100, ...this.listParams() }, g.opts('drive')),
    );
    return res.files ?? [];
  }

  async get(fileId: string): Promise<DriveFile> {
    const g = this.g;
    return g.call(() => g.drive.files.get({ fileId, fields: FILE_FIELDS, supportsAllDrives: true }, g.opts('drive')));
  }

  /** The folder id of a docgen path ('' / 'root' = the drive's root; 'a/b' = nested folders), created
   *  when `create` (else undefined when a folder is missing). */
  /** `ours`: receives the ids of the folders this call created (a refused write removes them again). */
  async folder(path: string, create: boolean, ours?: string[]): Promise<string | undefined> {
    const segments = path
      .split('/')
      .map((s) => s.trim())
      .filter(Boolean);
    if (segments[0] === 'root') segments.shift();
    let parent = this.rootId;
    for (const name of segments) {
      const q = `name = ${lit(name)} and ${lit(parent)} in parents and mimeType = ${lit(GOOGLE_MIME.folder)} and trashed = false`;
      // Usually there already: no lock needed to find it.
      const found = oldest(await this.list(q));
      if (found?.id) {
        parent = found.id;
        continue;
      }
      if (!create) return undefined;
      const under = parent;
      parent = await this.lock(`folder:${under}`, async () => {
        const again = oldest(await this.list(q));
        if (again?.id) return again.id;
        const g = this.g;
        const made = await g.call(() =>
          g.drive.files.create(
            { requestBody: { name, mimeType: GOOGLE_MIME.folder, parents: [under] }, fields: FILE_FIELDS, supportsAllDrives: true },
            g.opts('drive'),
          ),
        );
        const keep = oldest(await this.list(q)) ?? made;
        if (keep.id !== made.id && (await this.list(`${lit(made.id!)} in parents`)).length === 0)
          await this.delete(made.id!).catch(() => undefined);
        if (keep.id === made.id) ours?.push(made.id!);
        return keep.id!;
      });
    }
    return parent;
  }

  /** Files (not trashed) named `name` in a folder. */
  byName(folderId: string, name: string): Promise<DriveFile[]> {
    return this.list(`name = ${lit(name)} and ${lit(folderId)} in parents and trashed = false`);
  }

  /** The file an earlier attempt of the same write created (docgen's write id in appProperties). */
  async byWriteId(writeId: string): Promise<DriveFile | undefined> {
    return (await this.allByWriteId(writeId))[0];
  }

  /** Every file (not trashed) carrying docgen's write id: a write that replaced a file in place and died
   *  before deleting its temporary upload has two. */
  allByWriteId(writeId: string): Promise<DriveFile[]> {
    return this.list(`appProperties has { key='docgenUrn' and value=${lit(writeId)} } and trashed = false`);
  }

  /** Creates a file from bytes; `targetMime` a native type converts the upload (Drive does the conversion). */
  async upload(req: {
    folderId: string;
    name: string;
    bytes: Uint8Array;
    contentType: string;
    targetMime?: string;
    appProperties?: Record<string, string>;
  }): Promise<DriveFile> {
    const meta = {
      name: req.name,
      parents: [req.folderId],
      ...(req.targetMime ? { mimeType: req.targetMime } : {}),
      ...(req.appProperties ? { appProperties: req.appProperties } : {}),
    };
    const g = this.g;
    if (req.bytes.length > RESUMABLE_ABOVE) return resumableUpload(g, meta, req.bytes, req.contentType);
    return g.call(() =>
      g.drive.files.create(
        {
          requestBody: meta,
          media: { mimeType: req.contentType, body: Readable.from([Buffer.from(req.bytes)]) },
          fields: FILE_FIELDS,
          supportsAllDrives: true,
        },
        g.opts('drive'),
      ),
    );
  }

  /** Replaces a file's content in place (files.update with media; resumable above 5 MB): the same id, link
   *  and permissions. A native file takes its Office twin (`contentType`) and Drive converts it again. */
  async updateContent(
    fileId: string,
    req: { bytes: Uint8Array; contentType: string; appProperties?: Record<string, string> },
  ): Promise<DriveFile> {
    const meta = { ...(req.appProperties ? { appProperties: req.appProperties } : {}) };
    const g = this.g;
    if (req.bytes.length > RESUMABLE_ABOVE) return resumableUpload(g, meta, req.bytes, req.contentType, undefined, fileId);
    return g.call(() =>
      g.drive.files.update(
        {
          fileId,
          requestBody: meta,
          media: { mimeType: req.contentType, body: Readable.from([Buffer.from(req.bytes)]) },
          fields: FILE_FIELDS,
          supportsAllDrives: true,
        },
        g.opts('drive'),
      ),
    );
  }

  async rename(fileId: string, name: string): Promise<DriveFile> {
    const g = this.g;
    return g.call(() =>
      g.drive.files.update({ fileId, requestBody: { name }, fields: FILE_FIELDS, supportsAllDrives: true }, g.opts('drive')),
    );
  }

  /** The bytes of a file as a stream: a native file exported to `exportMime` (over 10 MB Drive refuses
   *  export: then its exportLinks, which have no cap), or a binary file's content. */
  async streamOf(file: DriveFile, exportMime?: string): Promise<Readable> {
    const g = this.g;
    const stream = { ...g.opts('drive'), responseType: 'stream' as const };
    if (exportMime) {
      try {
        return (await g.call(() => g.drive.files.export({ fileId: file.id!, mimeType: exportMime }, stream))) as unknown as Readable;
      } catch (err) {
        const link = file.exportLinks?.[exportMime];
        if ((err as { reason?: string }).reason !== 'exportSizeLimitExceeded' || !link) throw err;
        return (await g.call(async () => g.request<Readable>({ url: link, responseType: 'stream' }))) as Readable;
      }
    }
    return (await g.call(() =>
      g.drive.files.get({ fileId: file.id!, alt: 'media', supportsAllDrives: true }, stream),
    )) as unknown as Readable;
  }

  /** A file's bytes in memory (small files: what streamOf streams). */
  async bytesOf(file: DriveFile, exportMime?: string): Promise<Uint8Array> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.streamOf(file, exportMime)) chunks.push(Buffer.from(chunk as Uint8Array));
    return new Uint8Array(Buffer.concat(chunks));
  }

  async share(
    fileId: string,
    permission: { type: 'anyone' | 'user'; role: 'reader' | 'writer'; emailAddress?: string },
    notify: boolean,
  ): Promise<void> {
    const g = this.g;
    await g.call(() =>
      g.drive.permissions.create(
        {
          fileId,
          supportsAllDrives: true,
          sendNotificationEmail: permission.type === 'user' ? notify : false,
          requestBody: { ...permission, ...(permission.type === 'anyone' ? { allowFileDiscovery: false } : {}) },
        } as drive_v3.Params$Resource$Permissions$Create,
        g.opts('drive'),
      ),
    );
  }

  async trash(fileId: string): Promise<void> {
    const g = this.g;
    await g.call(() =>
      g.drive.files.update({ fileId, requestBody: { trashed: true }, supportsAllDrives: true, fields: 'id' }, g.opts('drive')),
    );
  }

  async delete(fileId: string): Promise<void> {
    const g = this.g;
    await g.call(() => g.drive.files.delete({ fileId, supportsAllDrives: true }, g.opts('drive')));
  }

  async copy(fileId: string, folderId: string, name: string, appProperties?: Record<string, string>): Promise<DriveFile> {
    const g = this.g;
    return g.call(() =>
      g.drive.files.copy(
        {
          fileId,
          requestBody: { name, parents: [folderId], ...(appProperties ? { appProperties } : {}) },
          fields: FILE_FIELDS,
          supportsAllDrives: true,
        },
        g.opts('drive'),
      ),
    );
  }

  async move(file: DriveFile, folderId: string, name: string, appProperties?: Record<string, string>): Promise<DriveFile> {
    const g = this.g;
    const old = (file.parents ?? []).filter((p) => p !== folderId).join(',');
    return g.call(() =>
      g.drive.files.update(
        {
          fileId: file.id!,
          addParents: folderId,
          ...(old ? { removeParents: old } : {}),
          requestBody: { name, ...(appProperties ? { appProperties } : {}) },
          fields: FILE_FIELDS,
          supportsAllDrives: true,
        },
        g.opts('drive'),
      ),
    );
  }

  /** The first sheet of a spreadsheet as rows of values: numbers and booleans typed, dates as shown. */
  async sheetRows(spreadsheetId: string): Promise<unknown[][]> {
    const g = this.g;
    const book = await g.call(() => g.sheets.spreadsheets.get({ spreadsheetId, fields: 'sheets.properties' }, g.opts('sheets')));
    const first = book.sheets?.[0]?.properties?.title;
    if (!first) return [];
    const range = `'${first.replace(/'/g, "''")}'`;
    const values = await g.call(() =>
      g.sheets.spreadsheets.values.get(
        { spreadsheetId, range, valueRenderOption: 'UNFORMATTED_VALUE', dateTimeRenderOption: 'FORMATTED_STRING' },
        g.opts('sheets'),
      ),
    );
    return (values.values ?? []) as unknown[][];
  }

  /** All text of a native file (tags are looked for in it), and for Slides the number of slides. */
  async nativeText(format: NativeFormat, id: string): Promise<{ texts: string[]; pages: number }> {
    const g = this.g;
    if (format === 'gdoc') {
      const doc = await g.call(() => g.docs.documents.get({ documentId: id }, g.opts('docs')));
      const texts: string[] = [];
      const walk = (content: docs_Content[] | undefined) => {
        for (const el of content ?? []) {
          if (el.paragraph) texts.push((el.paragraph.elements ?? []).map((e) => e.textRun?.content ?? '').join(''));
          for (const row of el.table?.tableRows ?? [])
            for (const cell of row.tableCells ?? []) walk(cell.content as docs_Content[] | undefined);
        }
      };
      walk(doc.body?.content as docs_Content[] | undefined);
      for (const part of [...Object.values(doc.headers ?? {}), ...Object.values(doc.footers ?? {})])
        walk(part.content as docs_Content[] | undefined);
      return { texts, pages: 1 };
    }
    if (format === 'gsheet') {
      const book = await g.call(() => g.sheets.spreadsheets.get({ spreadsheetId: id, fields: 'sheets.properties' }, g.opts('sheets')));
      const texts: string[] = [];
      for (const s of book.sheets ?? []) {
        const title = s.properties?.title;
        if (!title) continue;
        const v = await g.call(() =>
          g.sheets.spreadsheets.values.get(
            { spreadsheetId: id, range: `'${title.replace(/'/g, "''")}'`, valueRenderOption: 'FORMULA' },
            g.opts('sheets'),
          ),
        );
        for (const row of v.values ?? []) for (const cell of row) texts.push(String(cell ?? ''));
      }
      return { texts, pages: Math.max(1, book.sheets?.length ?? 1) };
    }
    const deck = await g.call(() => g.slides.presentations.get({ presentationId: id }, g.opts('slides')));
    const texts: string[] = [];
    for (const slide of deck.slides ?? []) {
      for (const el of slide.pageElements ?? []) {
        texts.push((el.shape?.text?.textElements ?? []).map((t) => t.textRun?.content ?? '').join(''));
        for (const row of el.table?.tableRows ?? [])
          for (const cell of row.tableCells ?? [])
            texts.push((cell.text?.textElements ?? []).map((t) => t.textRun?.content ?? '').join(''));
      }
    }
    return { texts, pages: Math.max(1, deck.slides?.length ?? 0) };
  }

  /** One batchUpdate with the native API of the format. */
  async batchUpdate(format: NativeFormat, id: string, requests: Record<string, unknown>[]): Promise<void> {
    if (requests.length === 0) return;
    const g = this.g;
    if (format === 'gdoc') await g.call(() => g.docs.documents.batchUpdate({ documentId: id, requestBody: { requests } }, g.opts('docs')));
    else if (format === 'gsheet')
      await g.call(() => g.sheets.spreadsheets.batchUpdate({ spreadsheetId: id, requestBody: { requests } }, g.opts('sheets')));
    else await g.call(() => g.slides.presentations.batchUpdate({ presentationId: id, requestBody: { requests } }, g.opts('slides')));
  }
}

interface docs_Content {
  paragraph?: { elements?: { textRun?: { content?: string | null } | null }[] | null } | null;
  table?: { tableRows?: { tableCells?: { content?: unknown[] | null }[] | null }[] | null } | null;
}

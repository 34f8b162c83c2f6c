// DriveB's reads: a template (a Google file exported to its Office twin), data (a JSON file, or a Google
// Sheet as rows), a manage source; streamed into scratch blobs up to the session's maxReadBytes.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { BlobRef } from '../../core/blob.ts';
import type { ErrorCode } from '../../core/errors.ts';
import { contentTypeOf, isNativeFormat } from '../../core/formats.ts';
import { type Location, LocationError } from '../location.ts';
import { BlobTooLargeError } from '../storage/blob-store.ts';
import { type DriveFile, type DriveOps, formatOfMime, GOOGLE_MIME, NATIVE_TWIN, OFFICE_MIME } from './drive.ts';
import { asLocationError } from './errors.ts';
import type { DriveBSession } from './session.ts';

/** Spec 4.4 rule 2 / 4.8 rule 1: only the native formats are templates from DriveB. */
const TEMPLATE_FORMATS = new Set(['gdoc', 'gsheet', 'gslide']);

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

export function driveBReads(b: DriveBSession): Pick<Location, 'readTemplate' | 'readData' | 'readDocument'> {
  const { deps, maxReadBytes } = b;
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
      if (err instanceof BlobTooLargeError)
        throw new LocationError(tooLarge, `${what} is larger than the ${maxReadBytes} bytes this service reads from DriveB`);
      throw err;
    }
  }

  /** A file's bytes in docgen's terms, as a scratch blob: native files exported to their Office twin. */
  async function fetchFile(
    ops: DriveOps,
    file: DriveFile,
    what: string,
    tooLarge: ErrorCode,
    name: string,
  ): Promise<{ blob: BlobRef; format: string }> {
    const format = formatOfMime(file.mimeType, file.name ?? '');
    if (isNativeFormat(format)) {
      const twin = NATIVE_TWIN[format];
      return {
        blob: await streamToScratch(`${name}.${twin}`, await ops.streamOf(file, OFFICE_MIME[twin]), OFFICE_MIME[twin], what, tooLarge),
        format,
      };
    }
    return {
      blob: await streamToScratch(
        `${name}.${format || 'bin'}`,
        await ops.streamOf(file),
        file.mimeType ?? contentTypeOf(format),
        what,
        tooLarge,
      ),
      format,
    };
  }

  return {
    async readTemplate(ctx, urn) {
      const ops = await b.open(ctx);
      try {
        const file = await ops.get(urn);
        const format = formatOfMime(file.mimeType, file.name ?? '');
        if (!TEMPLATE_FORMATS.has(format))
          throw new LocationError(
            'TEMPLATE_NOT_FOUND',
            `template.urn ${urn} is a ${file.mimeType} file in DriveB, not a template (gdoc, gsheet, gslide)`,
          );
        return (await fetchFile(ops, file, `template.urn ${urn}`, 'TEMPLATE_TOO_COMPLEX', 'template')).blob;
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `template.urn ${urn}`);
      }
    },

    async readData(ctx, urn) {
      const ops = await b.open(ctx);
      try {
        const file = await ops.get(urn);
        if (file.mimeType === GOOGLE_MIME.gsheet) {
          const data = sheetRowsToData(await ops.sheetRows(urn));
          return await toScratch('data.json', Buffer.from(JSON.stringify(data), 'utf8'), 'application/json');
        }
        if (formatOfMime(file.mimeType, file.name ?? '') !== 'json') {
          throw new LocationError(
            'DATA_INVALID',
            `data.urn ${urn} is a ${file.mimeType} file: DriveB data must be a JSON file or a Google Sheet`,
          );
        }
        return await streamToScratch('data.json', await ops.streamOf(file), 'application/json', `data.urn ${urn}`, 'TEMPLATE_TOO_COMPLEX');
      } catch (err) {
        throw asLocationError(err, 'DATA_NOT_FOUND', `data.urn ${urn}`);
      }
    },

    async readDocument(ctx, urn) {
      const ops = await b.open(ctx);
      try {
        const file = await ops.get(urn);
        if (file.mimeType === GOOGLE_MIME.folder) throw new LocationError('TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn} is a folder`);
        const got = await fetchFile(ops, file, `sourceDocument.urn ${urn}`, 'VALIDATION_ERROR', 'source');
        return { urn, name: file.name ?? '', path: '', fileFormat: got.format, blob: got.blob };
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn}`);
      }
    },
  };
}

// DriveA's reads: a template, a data file or a document, downloaded into the blob store (the run's scratch).
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { BlobRef } from '../../core/blob.ts';
import { contentTypeOf, type FileFormat, formatOfFileName, isOfficeFormat } from '../../core/formats.ts';
import { type Location, type LocationContext, type LocationDeps, LocationError } from '../location.ts';
import type { Connect } from './connect.ts';
import { MAX_READ_BYTES, mapped } from './errors.ts';
import type { DriveItem } from './graph.ts';
import { itemAddress, NOT_FOUND, type Reading } from './names.ts';

export function driveAReads(deps: LocationDeps, connect: Connect): Pick<Location, 'readTemplate' | 'readData' | 'readDocument'> {
  async function download(
    ctx: LocationContext,
    urn: string,
    reading: Reading,
    fileFormat?: string,
  ): Promise<{ item: DriveItem; blob: BlobRef }> {
    try {
      const { graph, drive } = await connect(ctx);
      const address = itemAddress(drive, urn, reading);
      const item = await graph.json<DriveItem>('GET', address);
      if (!item.file) throw new LocationError(NOT_FOUND[reading].code, `${NOT_FOUND[reading].field} ${urn} is a DriveA folder, not a file`);
      // Spec 4.8 rule 1: templates from DriveA are docx, xlsx or pptx.
      if (reading === 'template' && !isOfficeFormat(formatOfFileName(item.name))) {
        throw new LocationError(
          'INVALID_TEMPLATE_FORMAT',
          `template.urn ${urn} is ${item.name} in DriveA: only .docx, .xlsx and .pptx files are templates`,
        );
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
      const contentType =
        reading === 'data'
          ? 'application/json'
          : (item.file.mimeType ?? (format ? contentTypeOf(format as FileFormat) : 'application/octet-stream'));
      return { item, blob: { key, sha256: put.sha256, size: put.size, contentType } };
    } catch (err) {
      throw mapped(err, { reading, urn });
    }
  }

  return {
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
  };
}

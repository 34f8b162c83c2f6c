// DriveB native merge (document.options.driveBGenerate.nativeMergeEnabled): the Google template copied into
// the target folder and its fields merged in place (Docs, Sheets, Slides batchUpdate); images the data holds
// as bytes reach Google through presigned URLs of the blob store. Planning is native-merge.ts.
import { type Location, LocationError } from '../location.ts';
import { GOOGLE_MIME, type NativeFormat } from './drive.ts';
import { asLocationError } from './errors.ts';
import { temporaryName } from './names.ts';
import { nativeRequests, planNativeMerge } from './native-merge.ts';
import type { DriveBSession } from './session.ts';
import { settle } from './settle.ts';
import { share, written } from './share.ts';

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

export function driveBNativeMerge(b: DriveBSession): Required<Pick<Location, 'nativeMerge'>> {
  return {
    async nativeMerge(ctx, req) {
      const ops = await b.open(ctx);
      const format = req.template.fileFormat as NativeFormat;
      const scratch: string[] = [];
      try {
        const template = await ops.get(req.template.urn);
        if (template.mimeType !== GOOGLE_MIME[format]) {
          throw new LocationError(
            'TEMPLATE_NOT_FOUND',
            `template.urn ${req.template.urn} is a ${template.mimeType} file, not a ${format} (native merge copies the Google file itself)`,
          );
        }
        // Decide everything before writing: the tags, and whether each image can reach Google.
        const { texts, pages } = await ops.nativeText(format, req.template.urn);
        const data: unknown = JSON.parse(Buffer.from(await b.deps.blobs.get(req.data.key)).toString('utf8'));
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
          await b.deps.blobs.put(key, img.bytes);
          scratch.push(key);
          const url = await b.deps.blobs.presignedGetUrl(key, {
            expiresInSeconds: 900,
            fileName: `image-${i}`,
            contentType: img.contentType,
          });
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
          copy = await settle(ops, copy, {
            folderId,
            wanted: req.write.name,
            native: true,
            conflict: req.write.conflict ?? 'rename',
            path: req.write.path,
          });
        }
        return { ...written(copy, req.write.path, await share(ops, copy, req.write.sharing)), pages };
      } catch (err) {
        throw asLocationError(err, 'TEMPLATE_NOT_FOUND', `template.urn ${req.template.urn}`, b.viaServiceAccount.has(ops));
      } finally {
        for (const key of scratch) await b.deps.blobs.delete(key).catch(() => undefined);
      }
    },
  };
}

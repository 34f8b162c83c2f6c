// url: generate's `template.url` (spec 4.8: "locate by url alone"). The template is fetched through the
// guarded HTTP client (connectors/http/safe-fetch.ts: private, loopback and metadata addresses refused
// unless OUTBOUND_ALLOW lists them, checked when connecting; redirects re-checked; OUTBOUND_TIMEOUT_MS and
// OUTBOUND_MAX_BYTES), then checked before it reaches the merge: a 2xx answer, a content type a file
// server sends for such a file, and a zip package of the declared format (its [Content_Types].xml and main
// part). A fetch that fails is 400 TEMPLATE_NOT_FOUND naming the reason; a body that is not the declared
// format is 400 INVALID_TEMPLATE_FORMAT. The bytes land in a scratch blob (claim check).
//
// The URL itself may be a credential (a presigned URL's signature, a token in its query): the API refuses
// one that cannot be fetched (not http(s), user:password@) before anything is queued, and hands the
// workflow its display form (core/display-url.ts) in `template.url` and the URL sealed (security/sealed.ts)
// in `template.sealedUrl`. Only this location opens it, so histories and the Temporal UI never show it.
import { randomUUID } from 'node:crypto';
import { displayUrl } from '../../core/display-url.ts';
import { ApiError } from '../../core/errors.ts';
import { contentTypeOf } from '../../core/formats.ts';
import type { Db } from '../../store/db.ts';
import { isSealed, seal, unseal } from '../../security/sealed.ts';
import { outboundPolicy } from '../http/address-policy.ts';
import { OutboundBlockedError, OutboundError, safeFetch } from '../http/safe-fetch.ts';
import { type Location, type LocationDeps, LocationError } from '../location.ts';

/** The part every package of the format has (the main document part at its conventional name). */
const MAIN_PART: Record<string, string> = { docx: 'word/document.xml', xlsx: 'xl/workbook.xml', pptx: 'ppt/presentation.xml' };

/** Content types a server may label an office file with: its own, or a generic binary / zip type. */
const GENERIC_TYPES = new Set([
  'application/octet-stream',
  'binary/octet-stream',
  'application/zip',
  'application/x-zip-compressed',
  'application/x-zip',
]);

/** The entry names of a zip's central directory, or undefined when the bytes are not a zip. */
export function zipEntryNames(bytes: Buffer): string[] | undefined {
  if (bytes.length < 22 || bytes.readUInt32LE(0) !== 0x04034b50) return undefined;
  // End of central directory: 22 bytes plus a comment of up to 65535 bytes, at the end.
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) return undefined;
  const count = bytes.readUInt16LE(eocd + 10);
  let at = bytes.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) return undefined;
    const nameLength = bytes.readUInt16LE(at + 28);
    const extra = bytes.readUInt16LE(at + 30);
    const comment = bytes.readUInt16LE(at + 32);
    if (at + 46 + nameLength > bytes.length) return undefined;
    names.push(bytes.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extra + comment;
  }
  return names;
}

/** Why the bytes are not a package of the format, or undefined when they are. */
export function packageProblem(bytes: Buffer, fileFormat: string): string | undefined {
  const names = zipEntryNames(bytes);
  if (!names) return `is not a ${fileFormat} file (not a zip package)`;
  const main = MAIN_PART[fileFormat];
  if (!names.includes('[Content_Types].xml') || (main && !names.includes(main))) {
    const other = Object.entries(MAIN_PART).find(([, part]) => names.includes(part))?.[0];
    return `is not a ${fileFormat} file (${other ? `it is a ${other} package` : `the package has no ${main ?? 'main part'}`})`;
  }
  return undefined;
}

/** Why `template.url` can never be fetched, judged from its text alone; undefined when it may be. */
export function templateUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'template.url must be an absolute http or https URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `template.url must be an http or https URL (got ${u.protocol})`;
  if (u.username || u.password) {
    return `template.url must not carry a user name or password (${u.protocol}//user:password@...): put the credential in the URL's query (a presigned or token URL), which the service keeps sealed`;
  }
  return undefined;
}

/** template.url as a workflow input carries it (the API, before queueing): its display form in `url`, for
 *  summaries and messages, and the URL itself sealed for the subscription in `sealedUrl`. A URL that can
 *  never be fetched is a 400 naming template.url, before any workflow starts. */
export async function sealTemplateUrl(db: Db, subscriptionId: string, url: string): Promise<{ url: string; sealedUrl: string }> {
  const problem = templateUrlProblem(url);
  if (problem) throw new ApiError('VALIDATION_ERROR', problem);
  return { url: displayUrl(url), sealedUrl: await seal(db, subscriptionId, url) };
}

export function urlLocation(deps: LocationDeps): Location {
  const outbound = deps.outbound ?? { policy: outboundPolicy([]), timeoutMs: 15_000, maxResponseBytes: 10 * 1024 * 1024 };
  return {
    /** `given` is the sealed URL (or, in inputs recorded before sealing, the URL itself). */
    async readTemplate(ctx, given, fileFormat = 'docx') {
      let url = given;
      if (isSealed(given)) {
        try {
          url = await unseal(deps.db, ctx.subscriptionId, given);
        } catch {
          throw new LocationError(
            'TEMPLATE_NOT_FOUND',
            'template.url could not be opened (sealed for another subscription, or by a signing key this service no longer has)',
          );
        }
      }
      const notFound = (why: string) =>
        new LocationError('TEMPLATE_NOT_FOUND', `template.url ${displayUrl(url)} could not be fetched: ${why}`);
      let res;
      try {
        res = await safeFetch(url, {
          policy: outbound.policy,
          timeoutMs: outbound.timeoutMs,
          maxResponseBytes: outbound.maxResponseBytes,
          redirect: 'follow',
          headers: { accept: `${contentTypeOf(fileFormat)}, application/octet-stream;q=0.5, */*;q=0.1` },
        });
      } catch (err) {
        if (err instanceof OutboundBlockedError) throw notFound(err.message);
        if (err instanceof OutboundError) {
          if (err.code === 'ETOOLARGE') throw notFound(`the file is larger than ${outbound.maxResponseBytes} bytes (OUTBOUND_MAX_BYTES)`);
          if (err.code === 'ETIMEOUT') throw notFound(`no complete answer within ${outbound.timeoutMs} ms (OUTBOUND_TIMEOUT_MS)`);
          throw notFound(err.message);
        }
        // A connection closed mid-answer: the caller's server, not ours; retrying the same URL in the same
        // request rarely helps, and the caller deserves the reason rather than a 500 after retries.
        throw notFound((err as Error).message);
      }
      if (res.status < 200 || res.status > 299) throw notFound(`the server answered HTTP ${res.status}`);
      const type = String(res.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      if (type && type !== contentTypeOf(fileFormat) && !GENERIC_TYPES.has(type)) {
        throw new LocationError(
          'INVALID_TEMPLATE_FORMAT',
          `template.url ${displayUrl(url)} answered with content type ${type}, not a ${fileFormat} file (${contentTypeOf(fileFormat)})`,
        );
      }
      const problem = packageProblem(res.body, fileFormat);
      if (problem) throw new LocationError('INVALID_TEMPLATE_FORMAT', `template.url ${displayUrl(url)} ${problem}`);
      const key = `scratch/url-${ctx.subscriptionId}-${randomUUID()}.${fileFormat}`;
      const put = await deps.blobs.put(key, res.body);
      return { key, sha256: put.sha256, size: put.size, contentType: contentTypeOf(fileFormat) };
    },
  };
}

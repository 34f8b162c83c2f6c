// crm: Salesforce Files. A manage target (spec 4.8: targetDocument.options.crm) and source
// (sourceDocument.loadMethod "crm", urn = a ContentVersion id). Writing inserts a ContentVersion:
//   FirstPublishLocationId = crm.fileParentId (the record the file is attached to; Salesforce links it),
//   NetworkId = crm.networkId (Experience Cloud site), OwnerId = crm.ownerId,
//   ContentDocumentId = the file named by crm.fileId (a new version of it; the first version's parent
//   and network stay), PathOnClient = the name with the format's extension (Salesforce derives FileType).
// Small files go as JSON (VersionData base64), larger ones (CRM_MULTIPART_BYTES) as multipart, as the
// REST API's JSON body limit requires. The result's urn is the new ContentVersion id.
// Salesforce has no idempotency key for inserts: each version carries the workflow's urn for the write in
// ReasonForChange ("docgen write <urn>"), and a write first looks for a version with it, so an insert
// retried after its answer was lost (the worker died, the connection dropped) finds the version instead of
// storing a second one. Reads stream VersionData into the blob store, up to MAX_READ_BYTES.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Connection } from '@jsforce/jsforce-node';
import { contentTypeOf, formatOfFileName, outputFileName } from '../../core/formats.ts';
import type { CrmTargetOptions } from '../../core/locations.ts';
import { type Location, type LocationContext, type LocationDeps, LocationError } from '../location.ts';
import { BlobTooLargeError } from '../storage/blob-store.ts';
import { type CrmSession, withCrm } from './client.ts';
import { crmSettings } from './settings.ts';
import { valuesOf } from '../../core/settings.ts';

/** The largest file read from Salesforce into the service. */
export const MAX_READ_BYTES = 512 * 1024 * 1024;

/** The ReasonForChange that marks the version a write stored (the workflow's urn for it). */
export const writeTag = (urn: string) => `docgen write ${urn}`;

/** Salesforce record ids: 15 case-sensitive or 18 case-insensitive characters. */
export const SALESFORCE_ID = /^[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?$/;

const TRANSIENT = /^(SERVER_UNAVAILABLE|UNKNOWN_EXCEPTION|UNABLE_TO_LOCK_ROW|ERROR_HTTP_5\d\d|ERROR_HTTP_429)$/;

/** The option a Salesforce field came from, for messages naming the request's field. */
const OPTION_OF: Record<string, keyof CrmTargetOptions> = {
  FirstPublishLocationId: 'fileParentId',
  NetworkId: 'networkId',
  OwnerId: 'ownerId',
  ContentDocumentId: 'fileId',
};

interface SalesforceError {
  errorCode?: string;
  message?: string;
  fields?: string[];
}

/** A Salesforce answer in the spec's terms: token and session refusals are CONNECTION_ERROR, a refusal of
 *  one of crm's fields is VALIDATION_ERROR naming targetDocument.options.crm.<field>; server faults and
 *  network errors are rethrown (transient: the activity is retried). */
function failure(err: unknown, what: string): unknown {
  if (err instanceof LocationError) return err;
  const e = err as Error & { errorCode?: string; data?: unknown };
  const code = e.errorCode;
  if (!code || TRANSIENT.test(code)) return err;
  const details: SalesforceError[] = (
    Array.isArray(e.data) ? e.data : [e.data ?? { errorCode: code, message: e.message }]
  ) as SalesforceError[];
  const external = details.map((d) => ({ errorCode: d.errorCode ?? code, message: d.message ?? e.message, fields: d.fields ?? [] }));
  if (code === 'INVALID_SESSION_ID' || code.startsWith('INVALID_AUTH') || code === 'API_DISABLED_FOR_ORG') {
    return new LocationError('CONNECTION_ERROR', `Salesforce refused the crm connection while ${what} (${code}: ${e.message})`, external);
  }
  const fields = external.flatMap((d) => d.fields).filter((f) => OPTION_OF[f]);
  const named = fields.length
    ? ` (targetDocument.options.crm.${fields.map((f) => OPTION_OF[f]).join(', targetDocument.options.crm.')})`
    : '';
  return new LocationError('VALIDATION_ERROR', `Salesforce refused ${what}${named}: ${code}: ${e.message}`, external);
}

/** An answer that is not Salesforce's JSON: the endpoint the connection names is not (or not only) a
 *  Salesforce org. Final: sending the same request again reaches the same endpoint. */
function notSalesforce(instanceUrl: string, what: string, answer: unknown): LocationError {
  const head = typeof answer === 'string' ? `: ${JSON.stringify(answer.slice(0, 80))}` : '';
  return new LocationError(
    'CONNECTION_ERROR',
    `the crm connection's org (${instanceUrl}) answered ${what} with something that is not Salesforce's JSON${head}; check the connection's loginUrl (PUT /common/connection/crm)`,
  );
}

export function crmLocation(deps: LocationDeps, limits: { maxReadBytes?: number } = {}): Location {
  const maxReadBytes = limits.maxReadBytes ?? MAX_READ_BYTES;
  const own = valuesOf(crmSettings, deps.settings);
  const settings = () => ({ apiVersion: own.crmApiVersion, loginHosts: own.crmLoginHosts });
  async function run<T>(ctx: LocationContext, what: string, work: (conn: Connection, session: CrmSession) => Promise<T>): Promise<T> {
    const opened = await deps.connections.open(ctx, 'crm');
    try {
      return await withCrm(opened, settings(), work);
    } catch (err) {
      throw failure(err, what);
    }
  }

  /** A SOQL query whose answer must be Salesforce's JSON: anything else (a proxy's or a portal's HTML page)
   *  is the connection's problem, said at once (CONNECTION_ERROR), not a TypeError retried to the caller's 504. */
  async function query<R extends Record<string, unknown>>(conn: Connection, soql: string): Promise<{ records: R[] }> {
    // The REST query endpoint itself: jsforce's Query reads `records` of whatever came back (a TypeError).
    const r = await conn.request<unknown>(`/services/data/v${conn.version}/query?q=${encodeURIComponent(soql)}`);
    if (!r || typeof r !== 'object' || !Array.isArray((r as { records?: unknown }).records))
      throw notSalesforce(conn.instanceUrl, 'a query', r);
    return r as { records: R[] };
  }

  async function version(
    conn: Connection,
    id: string,
  ): Promise<{ Id: string; ContentDocumentId: string; PathOnClient: string; FileExtension: string } | undefined> {
    if (!SALESFORCE_ID.test(id)) return undefined;
    const r = await query<{ Id: string; ContentDocumentId: string; PathOnClient: string; FileExtension: string }>(
      conn,
      `SELECT Id, ContentDocumentId, PathOnClient, FileExtension FROM ContentVersion WHERE Id = '${id}'`,
    );
    return r.records[0];
  }

  return {
    /** The ContentVersion's data (VersionData), streamed into a scratch blob. */
    async readDocument(ctx, urn) {
      return run(ctx, `reading the ContentVersion ${urn}`, async (conn, session) => {
        const found = await version(conn, urn);
        if (!found)
          throw new LocationError('TEMPLATE_NOT_FOUND', `sourceDocument.urn ${urn} is not a ContentVersion id of the crm connection's org`);
        const fileFormat = (found.FileExtension || formatOfFileName(found.PathOnClient)).toLowerCase();
        const key = `scratch/crm-${randomUUID()}.${fileFormat || 'bin'}`;
        const stream: Readable = await session.blob('ContentVersion', found.Id, 'VersionData');
        let put;
        try {
          put = await deps.blobs.putStream(key, stream, { maxBytes: maxReadBytes });
        } catch (err) {
          stream.destroy();
          if (err instanceof BlobTooLargeError)
            throw new LocationError(
              'VALIDATION_ERROR',
              `sourceDocument.urn ${urn} is larger than the ${maxReadBytes} bytes this service reads from Salesforce`,
            );
          throw err;
        }
        return {
          urn: found.Id,
          name: found.PathOnClient,
          path: '',
          fileFormat,
          blob: { key, sha256: put.sha256, size: put.size, contentType: contentTypeOf(fileFormat) },
        };
      });
    },

    async write(ctx, req) {
      const crm = req.options?.crm ?? {};
      const name = outputFileName(req.name, req.fileFormat);
      return run(ctx, `the file ${name}`, async (conn) => {
        let documentId: string | undefined;
        if (crm.fileId) {
          if (crm.fileId.startsWith('068')) documentId = (await version(conn, crm.fileId))?.ContentDocumentId;
          else if (SALESFORCE_ID.test(crm.fileId)) {
            const r = await query<{ ContentDocumentId: string }>(
              conn,
              `SELECT ContentDocumentId FROM ContentVersion WHERE ContentDocumentId = '${crm.fileId}' AND IsLatest = true`,
            );
            documentId = r.records[0]?.ContentDocumentId;
          }
          if (!documentId)
            throw new LocationError(
              'VALIDATION_ERROR',
              `targetDocument.options.crm.fileId ${crm.fileId} does not name a file (ContentDocument) of the crm connection's org`,
            );
        }
        // Stored by an earlier attempt whose answer was lost: that version is the write.
        const tag = writeTag(req.urn);
        const earlier = await query<{ Id: string }>(
          conn,
          `SELECT Id, ContentDocumentId FROM ContentVersion WHERE ReasonForChange = '${tag.replace(/['\\]/g, '\\$&')}'`,
        );
        if (earlier.records[0]) return { urn: earlier.records[0].Id, name, path: req.path };
        const bytes = Buffer.from(await deps.blobs.get(req.source.key));
        const record: Record<string, string> = {
          Title: name.replace(/\.[^.]+$/, ''),
          PathOnClient: name,
          VersionData: bytes.toString('base64'),
          ReasonForChange: tag,
        };
        if (documentId) {
          // A new version: the file keeps its first version's parent record and network.
          record.ContentDocumentId = documentId;
        } else {
          if (crm.fileParentId) record.FirstPublishLocationId = crm.fileParentId;
          if (crm.networkId) record.NetworkId = crm.networkId;
        }
        if (crm.ownerId) record.OwnerId = crm.ownerId;
        const multipart = bytes.length > own.crmMultipartBytes;
        const saved = (await conn
          .sobject('ContentVersion')
          .create(
            record,
            multipart
              ? ({ multipartFileFields: { VersionData: { contentType: contentTypeOf(req.fileFormat), filename: name } } } as never)
              : {},
          )) as { id?: string; success?: boolean; errors?: unknown[] } | undefined;
        if (!saved || typeof saved !== 'object') throw notSalesforce(conn.instanceUrl, `saving the file ${name}`, saved);
        if (!saved.success || !saved.id)
          throw new LocationError('VALIDATION_ERROR', `Salesforce did not save the file ${name}`, saved.errors ?? []);
        return { urn: saved.id, name, path: req.path };
      });
    },

    /** Deletes the file (its ContentDocument, all versions) into the org's recycle bin; a file already
     *  gone counts as removed (a retried step). */
    async remove(ctx, urn) {
      await run(ctx, `deleting the file of ${urn}`, async (conn) => {
        const found = await version(conn, urn);
        if (!found) return;
        try {
          await conn.sobject('ContentDocument').destroy(found.ContentDocumentId);
        } catch (err) {
          const code = (err as { errorCode?: string }).errorCode;
          if (code === 'ENTITY_IS_DELETED' || code === 'NOT_FOUND') return;
          throw err;
        }
      });
    },
  };
}

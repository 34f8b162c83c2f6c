// The manage workflow's steps. Locations are reached through a FileConnector: Storage now; DriveA and
// DriveB plug in by adding a connector to `connectorsFor` (they then become valid loadMethod /
// deliveryMethod values of manage without touching the workflow).
import path from 'node:path';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { outputFileName } from '../core/generate.ts';
import { setOfficeCustomProperties } from '../engine/convert.ts';
import type { Consumption } from '../store/documents.ts';
import { recordConsumption, recordDocument } from '../store/documents.ts';
import { countMetering } from '../telemetry/metrics.ts';
import { getFile, insertFile, markFileRemoved } from '../store/files.ts';
import type { ManageInput, ManageOperation, RemoveMode } from '../workflows/manage.ts';
import type { ActivityDeps } from './deps.ts';
import { callerFailure } from './failures.ts';

export interface SourceFile {
  urn: string;
  name: string;
  path: string;
  fileFormat: string;
  blob: BlobRef;
}

export interface WriteRequest {
  subscriptionId: string;
  userId: string;
  urn: string;
  name: string;
  path: string;
  fileFormat: string;
  bytes: Uint8Array;
  contentType: string;
}

/** One delivery location as manage sees it. */
export interface FileConnector {
  readonly name: string;
  /** Whether `remove` may be used on its own (the spec's Delete operation). */
  readonly supportsDelete: boolean;
  /** A document of the subscription at this location, or undefined when the urn does not resolve. */
  resolve(subscriptionId: string, urn: string): Promise<SourceFile | undefined>;
  /** Writes the file under the given urn; writing the same urn again overwrites (retries are safe). */
  write(req: WriteRequest): Promise<{ urn: string; name: string; path: string }>;
  /** `delete` is soft (recoverable), `permanentDelete` is not; both make the urn stop resolving. */
  remove(subscriptionId: string, urn: string, mode: Exclude<RemoveMode, 'none'>): Promise<void>;
}

/** Storage: delivered documents are stored_files rows of kind 'document' plus their bytes. `delete`
 *  marks the row removed (the urn stops resolving) and keeps the bytes for an operator to recover;
 *  `permanentDelete` also erases the bytes. */
export function storageConnector(deps: ActivityDeps): FileConnector {
  return {
    name: 'Storage',
    supportsDelete: false,
    async resolve(subscriptionId, urn) {
      const file = await getFile(deps.db, subscriptionId, urn, ['document']);
      if (!file || !(await deps.blobs.exists(file.blobKey))) return undefined;
      return {
        urn: file.id,
        name: file.fileName,
        path: file.path,
        fileFormat: path.extname(file.fileName).slice(1).toLowerCase(),
        blob: { key: file.blobKey, sha256: file.sha256, size: file.size, contentType: file.contentType },
      };
    },
    async write(req) {
      const name = outputFileName(req.name, req.fileFormat);
      const key = `subscriptions/${req.subscriptionId}/documents/${req.urn}`;
      const put = await deps.blobs.put(key, req.bytes);
      await insertFile(deps.db, {
        id: req.urn,
        subscriptionId: req.subscriptionId,
        ownerId: req.userId,
        kind: 'document',
        fileName: name,
        path: req.path,
        contentType: req.contentType,
        size: put.size,
        sha256: put.sha256,
        blobKey: key,
        expiresDate: null,
      });
      return { urn: req.urn, name, path: req.path };
    },
    async remove(subscriptionId, urn, mode) {
      const key = await markFileRemoved(deps.db, subscriptionId, urn, ['document']);
      if (key && mode === 'permanentDelete') await deps.blobs.delete(key);
    },
  };
}

export function connectorsFor(deps: ActivityDeps): Record<string, FileConnector> {
  return { Storage: storageConnector(deps) };
}

function connector(all: Record<string, FileConnector>, method: string, field: string): FileConnector {
  const c = all[method];
  if (!c) throw callerFailure('NOT_SUPPORTED', `${field} ${method} is not available for manage in this deployment yet`);
  return c;
}

export interface ManageWriteInput {
  subscriptionId: string;
  userId: string;
  urn: string;
  source: BlobRef;
  target: NonNullable<ManageInput['target']>;
  embedded?: Record<string, string>;
}

export interface ManageRecordInput {
  subscriptionId: string;
  userId: string;
  operationId: string;
  operation: ManageOperation;
  sourceUrn: string;
  urn: string;
  title: string;
  path: string;
  fileFormat: string;
  deliveryMethod: string;
  consumption: Consumption[];
}

export interface ManageRemoveInput {
  subscriptionId: string;
  userId: string;
  operationId: string;
  source: ManageInput['source'];
  markRecordDeleted: boolean;
  /** Metering, recorded with the removal when the operation is a Delete. */
  consumption?: Consumption[];
}

export function manageActivities(deps: ActivityDeps) {
  const all = connectorsFor(deps);
  return {
    /** Resolves the source document; an unknown urn is TEMPLATE_NOT_FOUND (spec 7: "generate or manage
     *  cannot resolve the template"), a fileFormat that is not the file's own is a VALIDATION_ERROR. */
    async manageResolveSource(input: { subscriptionId: string; source: ManageInput['source'] }): Promise<SourceFile> {
      const { source } = input;
      const c = connector(all, source.loadMethod, 'sourceDocument.loadMethod');
      const file = await c.resolve(input.subscriptionId, source.urn);
      if (!file) {
        throw callerFailure('TEMPLATE_NOT_FOUND', `sourceDocument.urn ${source.urn} does not resolve to a document delivered to ${source.loadMethod}`);
      }
      if (file.fileFormat !== source.fileFormat) {
        throw callerFailure('VALIDATION_ERROR', `sourceDocument.fileFormat is ${source.fileFormat} but the document ${source.urn} is a ${file.fileFormat} file`);
      }
      return file;
    },

    async manageWriteTarget(input: ManageWriteInput): Promise<{ urn: string; name: string; path: string }> {
      const c = connector(all, input.target.deliveryMethod, 'targetDocument.deliveryMethod');
      let bytes = await deps.blobs.get(input.source.key);
      if (input.embedded && ['docx', 'xlsx', 'pptx'].includes(input.target.fileFormat)) bytes = setOfficeCustomProperties(bytes, input.embedded);
      return c.write({
        subscriptionId: input.subscriptionId,
        userId: input.userId,
        urn: input.urn,
        name: input.target.name,
        path: input.target.path,
        fileFormat: input.target.fileFormat,
        bytes,
        contentType: input.source.contentType,
      });
    },

    /** Copy and convert get a new document record; a move carries the source's record over to the new
     *  file (urn, title, path, format). Idempotent per operation, in one transaction with the metering. */
    async manageRecord(input: ManageRecordInput): Promise<{ documentGuid: string }> {
      const { documentGuid, metered } = await deps.db.transaction(async (tx) => {
        let documentGuid: string | undefined;
        if (input.operation === 'move') {
          const r = await tx.query<{ document_guid: string }>(
            `UPDATE documents SET urn = $3, title = $4, path = $5, file_format = $6, delivery_method = $7,
                    last_modified_user_guid = $8, last_modified_date = now()
             WHERE subscription_guid = $1 AND urn IN ($2, $3) AND NOT is_deleted
             RETURNING document_guid`,
            [input.subscriptionId, input.sourceUrn, input.urn, input.title, input.path, input.fileFormat, input.deliveryMethod, input.userId],
          );
          documentGuid = r.rows[0]?.document_guid;
        }
        documentGuid ??= await recordDocument(tx, {
          subscriptionId: input.subscriptionId,
          userId: input.userId,
          operationId: input.operationId,
          title: input.title,
          urn: input.urn,
          path: input.path,
          fileFormat: input.fileFormat,
          deliveryMethod: input.deliveryMethod,
        });
        const metered = await recordConsumption(tx, input.subscriptionId, input.userId, input.operationId, input.consumption);
        return { documentGuid, metered };
      });
      countMetering(metered);
      return { documentGuid };
    },

    /** Removes the source (source.remove) and, unless its record moved with it, soft-deletes its record. */
    async manageRemoveSource(input: ManageRemoveInput): Promise<{ documentGuid?: string }> {
      const { source } = input;
      if (source.remove === 'none') return {};
      const c = connector(all, source.loadMethod, 'sourceDocument.loadMethod');
      if (input.consumption && !c.supportsDelete) {
        throw callerFailure('NOT_SUPPORTED', `Delete is supported for DriveA only (spec 4.8); sourceDocument.loadMethod is ${source.loadMethod}`);
      }
      await c.remove(input.subscriptionId, source.urn, source.remove);
      let documentGuid: string | undefined;
      if (input.markRecordDeleted) {
        const r = await deps.db.query<{ document_guid: string }>(
          `UPDATE documents SET is_deleted = true, last_modified_user_guid = $3, last_modified_date = now()
           WHERE subscription_guid = $1 AND urn = $2 RETURNING document_guid`,
          [input.subscriptionId, source.urn, input.userId],
        );
        documentGuid = r.rows[0]?.document_guid;
      }
      if (input.consumption) countMetering(await recordConsumption(deps.db, input.subscriptionId, input.userId, input.operationId, input.consumption));
      return documentGuid ? { documentGuid } : {};
    },
  };
}

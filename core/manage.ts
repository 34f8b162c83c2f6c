// The manage request (spec 4.8 manage) as the workflow sees it, and the rules of the spec's table that
// are checked before any workflow starts. Which locations can do what is the location registry's answer
// (connectors/registry.ts); the spec's own rules are here.
import { type InnerError, innerError } from './errors.ts';
import { ALL_FORMATS, canConvert, FORMATS, isFormat, type LocationMethod } from './formats.ts';
import type { DriveDelivery, LinkField, SaveOptions } from './generate.ts';

export type ManageOperation = 'copy' | 'move' | 'delete' | 'convert';
export type RemoveMode = 'none' | 'delete' | 'permanentDelete';

export const REMOVE_MODES: readonly RemoveMode[] = ['none', 'delete', 'permanentDelete'];
/** Locations manage names (spec 4.8: "Storage, DriveA, crm"), DriveB as for generate. */
export const MANAGE_LOCATIONS: readonly LocationMethod[] = ['Storage', 'DriveA', 'DriveB', 'crm'];

/** What the manage workflow receives (validated by the API): references, never bytes. */
export interface ManageInput {
  operationId: string;
  subscriptionId: string;
  /** The acting user: the bearer token's user, or the X-Service-Authorization token's (spec 5.2). */
  userId: string;
  /** Who acted, when it was not the bearer token's user: the service token's user (spec 5.2). */
  serviceUser?: { email: string; fullName?: string };
  /** X-Email (spec 5.2): the e-mail of the user who started the process, recorded on the document. */
  initiatorEmail?: string;
  operation: ManageOperation;
  source: { urn: string; fileFormat: string; loadMethod: string; remove: RemoveMode };
  /** Absent for delete. sharing/conflict: targetDocument.options.driveA (or driveB) of the target's drive;
   *  options.crm: targetDocument.options.crm, validated (parseCrmOptions), only when deliveryMethod is crm. */
  target?: { name: string; fileFormat: string; deliveryMethod: string; path: string; saveOptions?: SaveOptions; options?: { crm?: CrmTargetOptions } } & DriveDelivery;
  /** data.embedded: JSON text of an object written to the output file's custom properties. */
  embedded?: string;
  /** Location method -> the connection it uses (resolved by the API; the activities open it). */
  connections?: Record<string, string>;
}

/** targetDocument.options.crm (spec 4.8): Salesforce ids, and fileType as a check of the format. */
export interface CrmTargetOptions {
  /** ContentVersion.NetworkId: the Experience Cloud site of a new file. */
  networkId?: string;
  /** The file to add a version to: its ContentDocument id (069...) or one of its ContentVersion ids (068...). */
  fileId?: string;
  /** Must agree with targetDocument.fileFormat (Salesforce derives FileType from the file name). */
  fileType?: string;
  /** ContentVersion.FirstPublishLocationId: the record (Account, Opportunity, user, library) a new file is attached to. */
  fileParentId?: string;
  /** ContentVersion.OwnerId. */
  ownerId?: string;
}

const CRM_FIELDS = ['networkId', 'fileId', 'fileType', 'fileParentId', 'ownerId'] as const;
const SALESFORCE_ID = /^[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?$/;
/** Salesforce's FileType for each format, accepted in fileType beside the format's own name. */
export const CRM_FILE_TYPES: Record<string, string> = { docx: 'WORD_X', xlsx: 'EXCEL_X', pptx: 'POWER_POINT_X', pdf: 'PDF', csv: 'CSV' };

/** Validates targetDocument.options.crm; every problem names its field. Empty strings count as absent. */
export function parseCrmOptions(raw: unknown, fileFormat: string): { options: CrmTargetOptions; problems: InnerError[] } {
  const problems: InnerError[] = [];
  const options: CrmTargetOptions = {};
  if (raw === undefined || raw === null) return { options, problems };
  const field = (f: string) => `targetDocument.options.crm.${f}`;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(innerError('VALIDATION_ERROR', 'targetDocument.options.crm must be an object {networkId, fileId, fileType, fileParentId, ownerId}'));
    return { options, problems };
  }
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (!(CRM_FIELDS as readonly string[]).includes(k)) {
      problems.push(innerError('VALIDATION_ERROR', `${field(k)} is not a crm option (networkId, fileId, fileType, fileParentId, ownerId)`));
      continue;
    }
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') {
      problems.push(innerError('VALIDATION_ERROR', `${field(k)} must be a string`));
      continue;
    }
    const value = v.trim();
    if (k === 'fileType') {
      const want = CRM_FILE_TYPES[fileFormat];
      if (value.toLowerCase() !== fileFormat.toLowerCase() && value.toUpperCase() !== want) {
        problems.push(innerError('VALIDATION_ERROR', `${field(k)} ${value} does not match targetDocument.fileFormat ${fileFormat}${want ? ` (give ${fileFormat} or ${want}, or leave it out)` : ''}`));
        continue;
      }
    } else if (!SALESFORCE_ID.test(value)) {
      problems.push(innerError('VALIDATION_ERROR', `${field(k)} must be a Salesforce record id (15 or 18 letters and digits)`));
      continue;
    }
    options[k as keyof CrmTargetOptions] = value;
  }
  return { options, problems };
}

export interface ManageResult {
  document: { deliveryMethod: string; name: string; fileFormat: string; urn: string; uri?: string } & Partial<Record<LinkField, string>>;
  documentGuid: string;
  consumption: { dimension: string; value: number }[];
}

export interface ManageRequestShape {
  sourceDocument: { urn: string; fileFormat: string; loadMethod: string; remove?: string };
  targetDocument?: { name: string; fileFormat: string; deliveryMethod: string; path: string; options?: Record<string, unknown> };
  data?: { embedded?: string };
}

/** Spec 4.8's table: the operation the payload asks for, and every problem with it at once. */
export function checkManageRules(body: ManageRequestShape): { operation: ManageOperation; remove: RemoveMode; problems: InnerError[] } {
  const problems: InnerError[] = [];
  const src = body.sourceDocument;
  const tgt = body.targetDocument;
  const remove = (src.remove ?? 'none') as RemoveMode;
  const known = (m: string) => (MANAGE_LOCATIONS as readonly string[]).includes(m);
  if (!REMOVE_MODES.includes(remove)) problems.push(innerError('VALIDATION_ERROR', `sourceDocument.remove must be one of ${REMOVE_MODES.join(', ')}`));
  if (!known(src.loadMethod)) problems.push(innerError('VALIDATION_ERROR', `sourceDocument.loadMethod must be one of ${MANAGE_LOCATIONS.join(', ')}`));
  if (!isFormat(src.fileFormat)) problems.push(innerError('VALIDATION_ERROR', `sourceDocument.fileFormat must be one of ${ALL_FORMATS.join(', ')}`));
  const embedded = body.data?.embedded;
  if (embedded !== undefined && embedded !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(embedded);
    } catch {
      parsed = undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) problems.push(innerError('VALIDATION_ERROR', 'data.embedded must be JSON text of an object'));
  }
  if (!tgt) {
    if (remove === 'none') {
      problems.push(
        innerError(
          'VALIDATION_ERROR',
          'without targetDocument the operation is Delete, which needs sourceDocument.remove delete or permanentDelete; Copy, Move and Convert need a targetDocument',
        ),
      );
    }
    return { operation: 'delete', remove, problems };
  }
  const operation: ManageOperation = tgt.fileFormat === src.fileFormat ? (remove === 'none' ? 'copy' : 'move') : 'convert';
  if (!known(tgt.deliveryMethod)) problems.push(innerError('VALIDATION_ERROR', `targetDocument.deliveryMethod must be one of ${MANAGE_LOCATIONS.join(', ')}`));
  if (!isFormat(tgt.fileFormat)) problems.push(innerError('VALIDATION_ERROR', `targetDocument.fileFormat must be one of ${ALL_FORMATS.join(', ')}`));
  if (operation === 'convert' && isFormat(tgt.fileFormat) && isFormat(src.fileFormat) && !canConvert(src.fileFormat, tgt.fileFormat)) {
    problems.push(
      innerError('VALIDATION_ERROR', `Convert from ${src.fileFormat} to ${tgt.fileFormat} is not possible: docx, xlsx and pptx convert to pdf, and xlsx to csv`),
    );
  }
  // Spec 4.8 rule 3 (delivery by format).
  if (isFormat(tgt.fileFormat) && known(tgt.deliveryMethod)) {
    const to: readonly LocationMethod[] = FORMATS[tgt.fileFormat].deliverTo;
    if (!to.includes(tgt.deliveryMethod as LocationMethod)) {
      problems.push(innerError('VALIDATION_ERROR', `targetDocument.fileFormat ${tgt.fileFormat} is delivered to ${to.join(' or ')}, not ${tgt.deliveryMethod}`));
    }
  }
  if (tgt.deliveryMethod === 'Storage' && tgt.path !== 'root' && !tgt.path.startsWith('root/')) {
    problems.push(innerError('VALIDATION_ERROR', "targetDocument.path must be 'root' or start with 'root/' for Storage"));
  }
  return { operation, remove, problems };
}

// The options a target reads at its own location (spec 4.8: document.options.driveA / driveB, manage's
// targetDocument.options.crm): pure readers the locations register (connectors/registry.ts), so the one
// target parser (core/target.ts) reads whichever the delivery's location names, and only that one.
import { type InnerError, innerError } from './errors.ts';
import {
  CONFLICT_BEHAVIORS,
  type ConflictBehavior,
  type CrmTargetOptions,
  type SharingRequest,
  type TargetDelivery,
  type TargetOptionsReader,
} from './locations.ts';

/** A drive's options object: sharing flags, e-mail lists (arrays, or comma-separated text as the records
 *  spell them), and the extension fields conflictBehavior and sendInvitation. Every problem at once. */
export function driveOptions(key: string): TargetOptionsReader {
  return { key, read: (raw, at) => parseDriveOptions(raw, at.field) };
}

export function parseDriveOptions(raw: unknown, field: string): { delivery: TargetDelivery; problems: InnerError[] } {
  const problems: InnerError[] = [];
  const delivery: TargetDelivery = {};
  if (raw === undefined || raw === null) return { delivery, problems };
  if (typeof raw !== 'object' || Array.isArray(raw))
    return { delivery, problems: [innerError('VALIDATION_ERROR', `${field} must be an object`)] };
  const o = raw as Record<string, unknown>;
  const sharing: SharingRequest = {};
  for (const flag of ['viewAnonymous', 'editAnonymous', 'sendInvitation'] as const) {
    const v = o[flag];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') problems.push(innerError('VALIDATION_ERROR', `${field}.${flag} must be true or false`));
    else if (v) sharing[flag] = true;
  }
  for (const list of ['viewUsers', 'editUsers'] as const) {
    const v = o[list];
    if (v === undefined || v === null || v === '') continue;
    const items = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : undefined;
    if (!items || items.some((e) => typeof e !== 'string')) {
      problems.push(innerError('VALIDATION_ERROR', `${field}.${list} must be an array of e-mail addresses`));
      continue;
    }
    const emails = (items as string[]).map((e) => e.trim()).filter(Boolean);
    const bad = emails.filter((e) => !/^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/.test(e));
    if (bad.length > 0)
      problems.push(
        innerError(
          'VALIDATION_ERROR',
          `${field}.${list}: ${bad.map((b) => JSON.stringify(b.slice(0, 80))).join(', ')} is not an e-mail address`,
        ),
      );
    else if (emails.length > 100) problems.push(innerError('VALIDATION_ERROR', `${field}.${list}: at most 100 addresses`));
    else if (emails.length > 0) sharing[list] = [...new Set(emails.map((e) => e.toLowerCase()))];
  }
  if (Object.keys(sharing).some((k) => k !== 'sendInvitation')) delivery.sharing = sharing;
  const c = o.conflictBehavior;
  if (c !== undefined && c !== null && c !== '') {
    if (typeof c !== 'string' || !(CONFLICT_BEHAVIORS as readonly string[]).includes(c)) {
      problems.push(innerError('VALIDATION_ERROR', `${field}.conflictBehavior must be one of ${CONFLICT_BEHAVIORS.join(', ')}`));
    } else delivery.conflict = c as ConflictBehavior;
  }
  return { delivery, problems };
}

const CRM_FIELDS = ['networkId', 'fileId', 'fileType', 'fileParentId', 'ownerId'] as const;
const SALESFORCE_ID = /^[a-zA-Z0-9]{15}(?:[a-zA-Z0-9]{3})?$/;
/** Salesforce's FileType for each format, accepted in fileType beside the format's own name. */
export const CRM_FILE_TYPES: Record<string, string> = { docx: 'WORD_X', xlsx: 'EXCEL_X', pptx: 'POWER_POINT_X', pdf: 'PDF', csv: 'CSV' };

/** targetDocument.options.crm: Salesforce ids, and fileType as a check of the format. */
export const crmOptions: TargetOptionsReader = {
  key: 'crm',
  read(raw, at) {
    const { options, problems } = parseCrmOptions(raw, at.fileFormat, at.field);
    return { delivery: Object.keys(options).length > 0 ? { options: { crm: options } } : {}, problems };
  },
};

/** Validates a crm options object; every problem names its field. Empty strings count as absent. */
export function parseCrmOptions(
  raw: unknown,
  fileFormat: string,
  field = 'targetDocument.options.crm',
): { options: CrmTargetOptions; problems: InnerError[] } {
  const problems: InnerError[] = [];
  const options: CrmTargetOptions = {};
  if (raw === undefined || raw === null) return { options, problems };
  const at = (f: string) => `${field}.${f}`;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push(innerError('VALIDATION_ERROR', `${field} must be an object {${CRM_FIELDS.join(', ')}}`));
    return { options, problems };
  }
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    if (!(CRM_FIELDS as readonly string[]).includes(k)) {
      problems.push(innerError('VALIDATION_ERROR', `${at(k)} is not a crm option (${CRM_FIELDS.join(', ')})`));
      continue;
    }
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string') {
      problems.push(innerError('VALIDATION_ERROR', `${at(k)} must be a string`));
      continue;
    }
    const value = v.trim();
    if (k === 'fileType') {
      const want = CRM_FILE_TYPES[fileFormat];
      if (value.toLowerCase() !== fileFormat.toLowerCase() && value.toUpperCase() !== want) {
        problems.push(
          innerError(
            'VALIDATION_ERROR',
            `${at(k)} ${value} does not match targetDocument.fileFormat ${fileFormat}${want ? ` (give ${fileFormat} or ${want}, or leave it out)` : ''}`,
          ),
        );
        continue;
      }
    } else if (!SALESFORCE_ID.test(value)) {
      problems.push(innerError('VALIDATION_ERROR', `${at(k)} must be a Salesforce record id (15 or 18 letters and digits)`));
      continue;
    }
    options[k as keyof CrmTargetOptions] = value;
  }
  return { options, problems };
}

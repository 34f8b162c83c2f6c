// Option values attached to records (spec 2.6, 4.6): either a system option (a definition of the catalogue
// below) or a custom key/group chosen by the client.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db.ts';
import { iso } from './list.ts';

export interface OptionDefinition {
  key: string;
  group: string;
  /** How the value is read: Json (JSON text), Boolean (`true`/`false`) or String. */
  systemType: 'Json' | 'Boolean' | 'String';
}

/** System options (the spec does not list them): the save/load settings and engine switches of 4.8. */
export const OPTION_DEFINITIONS: Readonly<Record<number, OptionDefinition>> = {
  1: { key: 'pdfSaveOptions', group: 'Document', systemType: 'Json' },
  2: { key: 'docxSaveOptions', group: 'Document', systemType: 'Json' },
  3: { key: 'xlsxSaveOptions', group: 'Document', systemType: 'Json' },
  4: { key: 'pptxSaveOptions', group: 'Document', systemType: 'Json' },
  5: { key: 'docxLoadOptions', group: 'Template', systemType: 'Json' },
  6: { key: 'xlsxLoadOptions', group: 'Template', systemType: 'Json' },
  7: { key: 'pptxLoadOptions', group: 'Template', systemType: 'Json' },
  8: { key: 'nativeMergeEnabled', group: 'DriveBGenerate', systemType: 'Boolean' },
  9: { key: 'nativeImageMergeEnabled', group: 'DriveBGenerate', systemType: 'Boolean' },
};

/** Entity types that can own options, with the table holding them. */
const ENTITY_TABLES = {
  DocumentSolutionConfiguration: 'solution_configurations',
  DocumentTemplate: 'document_templates',
  DataSource: 'data_sources',
  DocumentSolution: 'document_solutions',
} as const;
export type EntityType = keyof typeof ENTITY_TABLES;
export const ENTITY_TYPES = Object.keys(ENTITY_TABLES) as EntityType[];

export function canonicalEntityType(s: string): EntityType | undefined {
  return ENTITY_TYPES.find((t) => t.toLowerCase() === s.toLowerCase());
}

export async function entityExists(db: Queryable, subscriptionId: string, type: EntityType, id: string): Promise<boolean> {
  const r = await db.query(`SELECT 1 FROM ${ENTITY_TABLES[type]} WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted`, [
    id,
    subscriptionId,
  ]);
  return r.rows.length > 0;
}

/** Exactly one of `optionDefinitionId` and `customKey` is set (checked by the API, enforced by the table). */
export interface OptionInput {
  optionDefinitionId: number | null;
  customKey: string | null;
  customGroup: string;
  value: string;
}

export interface OptionValue {
  optionValueGuid: string;
  entityType: string;
  entityId: string;
  /** Empty string for a custom option, as the spec's custom-option response shows. */
  optionDefinitionId: number | '';
  customKey: string;
  customGroup: string;
  value: string;
  effectiveKey: string;
  effectiveGroup: string;
  systemType: string;
  createdDate: string;
  lastModifiedDate: string;
}

interface Row {
  id: string;
  entity_type: string;
  entity_id: string;
  option_definition_id: number | null;
  custom_key: string | null;
  custom_group: string;
  value: string;
  created_date: Date;
  last_modified_date: Date;
}

const SELECT = 'id, entity_type, entity_id, option_definition_id, custom_key, custom_group, value, created_date, last_modified_date';

function toOption(r: Row): OptionValue {
  const def = r.option_definition_id === null ? undefined : OPTION_DEFINITIONS[r.option_definition_id];
  return {
    optionValueGuid: r.id,
    entityType: r.entity_type,
    entityId: r.entity_id,
    optionDefinitionId: r.option_definition_id ?? '',
    customKey: r.custom_key ?? '',
    customGroup: r.option_definition_id === null ? r.custom_group : '',
    value: r.value,
    effectiveKey: def?.key ?? r.custom_key ?? '',
    effectiveGroup: def?.group ?? r.custom_group,
    systemType: def?.systemType ?? 'Custom',
    createdDate: iso(r.created_date),
    lastModifiedDate: iso(r.last_modified_date),
  };
}

/** The live option of the entity with the same effective key, if any (one value per key and entity). */
export async function findSameKey(
  db: Queryable,
  subscriptionId: string,
  type: EntityType,
  entityId: string,
  o: OptionInput,
  exceptId?: string,
): Promise<boolean> {
  const r = await db.query(
    `SELECT 1 FROM option_values WHERE subscription_id = $1 AND entity_type = $2 AND entity_id = $3 AND NOT is_deleted
       AND (option_definition_id = $4 OR (custom_key = $5 AND custom_group = $6)) AND id <> coalesce($7::uuid, '00000000-0000-0000-0000-000000000000')`,
    [subscriptionId, type, entityId, o.optionDefinitionId, o.customKey, o.customGroup, exceptId ?? null],
  );
  return r.rows.length > 0;
}

export async function createOption(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  type: EntityType,
  entityId: string,
  o: OptionInput,
): Promise<OptionValue> {
  const r = await db.query<Row>(
    // clock_timestamp, not now(): a replace writes its items in one transaction, and lists keep their order.
    `INSERT INTO option_values (id, subscription_id, entity_type, entity_id, option_definition_id, custom_key, custom_group, value, owner_id, last_modified_user_id, created_date, last_modified_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, clock_timestamp(), clock_timestamp()) RETURNING ${SELECT}`,
    [
      randomUUID(),
      subscriptionId,
      type,
      entityId,
      o.optionDefinitionId,
      o.customKey,
      o.optionDefinitionId === null ? o.customGroup : '',
      o.value,
      userId,
    ],
  );
  return toOption(r.rows[0] as Row);
}

/** Soft-deletes the entity's live options and writes the new set, in the caller's transaction. */
export async function replaceOptions(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  type: EntityType,
  entityId: string,
  items: readonly OptionInput[],
): Promise<void> {
  await db.query(
    `UPDATE option_values SET is_deleted = true, last_modified_user_id = $4, last_modified_date = now()
     WHERE subscription_id = $1 AND entity_type = $2 AND entity_id = $3 AND NOT is_deleted`,
    [subscriptionId, type, entityId, userId],
  );
  for (const o of items) await createOption(db, subscriptionId, userId, type, entityId, o);
}

export async function getOption(db: Queryable, subscriptionId: string, id: string): Promise<OptionValue | undefined> {
  const r = await db.query<Row>(`SELECT ${SELECT} FROM option_values WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted`, [
    id,
    subscriptionId,
  ]);
  return r.rows[0] ? toOption(r.rows[0]) : undefined;
}

export async function updateOption(
  db: Queryable,
  subscriptionId: string,
  userId: string,
  id: string,
  change: { value: string; customKey: string | null; customGroup: string },
): Promise<OptionValue | undefined> {
  // A system option keeps its definition: custom key and group stay empty for it.
  const r = await db.query<Row>(
    `UPDATE option_values SET value = $4,
       custom_key = CASE WHEN option_definition_id IS NULL THEN $5 ELSE NULL END,
       custom_group = CASE WHEN option_definition_id IS NULL THEN $6 ELSE '' END,
       last_modified_user_id = $3, last_modified_date = now()
     WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted RETURNING ${SELECT}`,
    [id, subscriptionId, userId, change.value, change.customKey, change.customGroup],
  );
  return r.rows[0] ? toOption(r.rows[0]) : undefined;
}

export async function deleteOption(db: Queryable, subscriptionId: string, userId: string, id: string): Promise<boolean> {
  const r = await db.query(
    `UPDATE option_values SET is_deleted = true, last_modified_user_id = $3, last_modified_date = now()
     WHERE id = $1 AND subscription_id = $2 AND NOT is_deleted RETURNING id`,
    [id, subscriptionId, userId],
  );
  return r.rows.length > 0;
}

export async function listOptions(db: Queryable, subscriptionId: string, type: EntityType, entityId: string): Promise<OptionValue[]> {
  const r = await db.query<Row>(
    `SELECT ${SELECT} FROM option_values WHERE subscription_id = $1 AND entity_type = $2 AND entity_id = $3 AND NOT is_deleted ORDER BY created_date, seq`,
    [subscriptionId, type, entityId],
  );
  return r.rows.map(toOption);
}

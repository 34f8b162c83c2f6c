// Option values (spec 2.6, 4.6): per-record settings, either a system option (a definition id) or a
// custom key/group.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ApiError } from '../../core/errors.ts';
import type { Db } from '../../store/db.ts';
import {
  canonicalEntityType,
  createOption,
  deleteOption,
  ENTITY_TYPES,
  entityExists,
  type EntityType,
  findSameKey,
  getOption,
  listOptions,
  OPTION_DEFINITIONS,
  type OptionInput,
  replaceOptions,
  updateOption,
} from '../../store/records/options.ts';
import { success } from '../envelope.ts';
import { unexpectedAs, UuidParam } from '../lists.ts';
import { errorResponses, successEnvelope } from '../schemas.ts';

const TAG = 'Option values';

const CATALOGUE = Object.entries(OPTION_DEFINITIONS)
  .map(([id, d]) => `${id} ${d.group}/${d.key} (${d.systemType})`)
  .join(', ');

export const OptionItem = Type.Object(
  {
    optionDefinitionId: Type.Optional(
      Type.Unknown({ description: `Integer id of a system option: ${CATALOGUE}. Null or empty string means none. Json options take JSON text, Boolean options true or false` }),
    ),
    customKey: Type.Optional(Type.String({ maxLength: 200, description: 'Key of a custom option' })),
    customGroup: Type.Optional(Type.String({ maxLength: 200, description: 'Group of a custom option' })),
    value: Type.Optional(Type.String({ maxLength: 100_000, description: 'Default empty' })),
  },
  { description: 'Exactly one of optionDefinitionId and customKey; neither gives 400 OPTION_VALUE_MISSING_DEFINITION_OR_KEY, both 400 VALIDATION_ERROR' },
);

export const OptionValue = Type.Object({
  optionValueGuid: Type.String({ format: 'uuid' }),
  entityType: Type.String(),
  entityId: Type.String({ format: 'uuid' }),
  optionDefinitionId: Type.Union([Type.Integer(), Type.Literal('')], { description: 'The system option id; empty string for a custom option' }),
  customKey: Type.String({ description: 'Empty for a system option' }),
  customGroup: Type.String({ description: 'Empty for a system option' }),
  value: Type.String(),
  effectiveKey: Type.String({ description: "The definition's key, or customKey" }),
  effectiveGroup: Type.String({ description: "The definition's group, or customGroup" }),
  systemType: Type.String({ description: 'How the value is read: Json, Boolean or String for system options; Custom for custom options' }),
  createdDate: Type.String({ format: 'date-time' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
});

const EntityParams = Type.Object({
  entityType: Type.String({ maxLength: 100, description: `${ENTITY_TYPES.join(', ')} (case-insensitive)` }),
  entityId: UuidParam('The owning record'),
});
const OptionParams = Type.Object({ optionValueGuid: UuidParam('The option value') });
const one = successEnvelope(Type.Object({ optionValue: OptionValue }));

type Item = { optionDefinitionId?: unknown; customKey?: string; customGroup?: string; value?: string };

function checkItem(o: Item, where: string): OptionInput {
  const rawDef = o.optionDefinitionId;
  const hasDef = rawDef !== undefined && rawDef !== null && rawDef !== '';
  const key = o.customKey?.trim() ?? '';
  if (!hasDef && !key) {
    throw new ApiError('OPTION_VALUE_MISSING_DEFINITION_OR_KEY', `${where}either optionDefinitionId or customKey is required`);
  }
  if (hasDef && key) throw new ApiError('VALIDATION_ERROR', `${where}give optionDefinitionId or customKey, not both`);
  const value = o.value ?? '';
  if (!hasDef) return { optionDefinitionId: null, customKey: key, customGroup: o.customGroup?.trim() ?? '', value };
  const id = typeof rawDef === 'number' ? rawDef : typeof rawDef === 'string' && /^\d{1,9}$/.test(rawDef.trim()) ? Number(rawDef) : NaN;
  const def = Number.isInteger(id) ? OPTION_DEFINITIONS[id] : undefined;
  if (!def) throw new ApiError('VALIDATION_ERROR', `${where}optionDefinitionId: ${JSON.stringify(String(rawDef).slice(0, 40))} is not a system option; known: ${CATALOGUE}`);
  if (def.systemType === 'Boolean' && value !== 'true' && value !== 'false') {
    throw new ApiError('VALIDATION_ERROR', `${where}value: option ${def.key} takes true or false`);
  }
  if (def.systemType === 'Json') {
    try {
      JSON.parse(value);
    } catch {
      throw new ApiError('VALIDATION_ERROR', `${where}value: option ${def.key} takes JSON text`);
    }
  }
  return { optionDefinitionId: id, customKey: null, customGroup: '', value };
}

const sameKey = (a: OptionInput, b: OptionInput) =>
  a.optionDefinitionId !== null ? a.optionDefinitionId === b.optionDefinitionId : b.customKey === a.customKey && b.customGroup === a.customGroup;

async function entityOf(db: Db, request: FastifyRequest): Promise<{ type: EntityType; id: string }> {
  const p = request.params as { entityType: string; entityId: string };
  const type = canonicalEntityType(p.entityType);
  if (!type) throw new ApiError('VALIDATION_ERROR', `entityType: ${JSON.stringify(p.entityType.slice(0, 80))} must be one of ${ENTITY_TYPES.join(', ')}`);
  const id = p.entityId.toLowerCase();
  if (!(await entityExists(db, request.auth.subscriptionId, type, id))) throw new ApiError('NOT_FOUND_BY_ID', `no ${type} ${id}`);
  return { type, id };
}

const ENTITY_RULES = `entityType is one of ${ENTITY_TYPES.join(', ')} (case-insensitive; another value gives 400 VALIDATION_ERROR); entityId must be a live record of that type in the caller's subscription (404 NOT_FOUND_BY_ID otherwise).`;

export default async function optionRoutes(app: FastifyInstance, opts: { db: Db }) {
  const { db } = opts;
  const guarded = unexpectedAs('GET_DATA_SOURCE_ERROR');

  app.post(
    '/documents/option/:entityType/:entityId/create',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: 'Create an option value',
        description: `Adds one option value to a record. ${ENTITY_RULES} Exactly one of optionDefinitionId (system option) and customKey (custom option): neither gives 400 OPTION_VALUE_MISSING_DEFINITION_OR_KEY, both 400 VALIDATION_ERROR. A record holds one value per key: a second value for the same definition, or the same customKey and customGroup, gives 400 VALIDATION_ERROR (use update or replace). In the response a custom option has optionDefinitionId "" (empty string).`,
        params: EntityParams,
        body: OptionItem,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const input = checkItem(request.body as Item, '');
      const entity = await entityOf(db, request);
      const { subscriptionId, userId } = request.auth;
      const created = await db.transaction(async (tx) => {
        if (await findSameKey(tx, subscriptionId, entity.type, entity.id, input)) {
          throw new ApiError('VALIDATION_ERROR', `${entity.type} ${entity.id} already has a value for this option; update or replace it`);
        }
        return createOption(tx, subscriptionId, userId, entity.type, entity.id, input);
      });
      return success(request, 200, { optionValue: created });
    },
  );

  app.put(
    '/documents/option/:entityType/:entityId/replace',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: "Replace a record's option values",
        description: `The body is the complete new set: every current value of the record is removed (soft delete) and these are written, in one transaction. An empty array removes all. Each item is validated as on create (its position is named, e.g. [2]); two items for the same key give 400 VALIDATION_ERROR. ${ENTITY_RULES}`,
        params: EntityParams,
        body: Type.Array(OptionItem, { maxItems: 200 }),
        response: {
          200: successEnvelope(Type.Object({ entityId: Type.String({ format: 'uuid' }), entityType: Type.String(), message: Type.String() })),
          ...errorResponses(400, 401, 404, 500),
        },
      },
    },
    async (request) => {
      const items = (request.body as Item[]).map((o, i) => checkItem(o, `[${i}]: `));
      items.forEach((a, i) => {
        const j = items.findIndex((b) => sameKey(a, b));
        if (j !== i) throw new ApiError('VALIDATION_ERROR', `[${i}]: the same option as [${j}]; a record holds one value per key`);
      });
      const entity = await entityOf(db, request);
      const { subscriptionId, userId } = request.auth;
      await db.transaction((tx) => replaceOptions(tx, subscriptionId, userId, entity.type, entity.id, items));
      return success(request, 200, { entityId: entity.id, entityType: entity.type, message: 'Option values replaced.' });
    },
  );

  app.get(
    '/documents/option/:entityType/:entityId/list',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: "List a record's option values (extension)",
        description: `All live option values of the record, oldest first (a record has few; no paging). ${ENTITY_RULES}`,
        params: EntityParams,
        response: { 200: successEnvelope(Type.Object({ optionValues: Type.Array(OptionValue) })), ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const entity = await entityOf(db, request);
      return success(request, 200, { optionValues: await listOptions(db, request.auth.subscriptionId, entity.type, entity.id) });
    },
  );

  app.put(
    '/documents/option/:optionValueGuid/update',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: 'Update an option value',
        description:
          "Changes the fields sent: `value` always; `customKey` and `customGroup` of a custom option. Which record owns the option and which system option it is (entityType, entityId, optionDefinitionId) are fixed at creation and ignored here, as are server-managed fields. A blank customKey on a custom option gives 400 OPTION_VALUE_MISSING_DEFINITION_OR_KEY; a value that does not suit a system option's type gives 400 VALIDATION_ERROR. An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID.",
        params: OptionParams,
        body: OptionItem,
        response: { 200: one, ...errorResponses(400, 401, 404, 500) },
      },
    },
    async (request) => {
      const id = (request.params as { optionValueGuid: string }).optionValueGuid.toLowerCase();
      const body = request.body as Item;
      const { subscriptionId, userId } = request.auth;
      const updated = await db.transaction(async (tx) => {
        const current = await getOption(tx, subscriptionId, id);
        if (!current) throw new ApiError('NOT_FOUND_BY_ID', `no option value ${id}`);
        const type = canonicalEntityType(current.entityType) as EntityType;
        const merged = checkItem(
          current.optionDefinitionId === ''
            ? { customKey: body.customKey ?? current.customKey, customGroup: body.customGroup ?? current.customGroup, value: body.value ?? current.value }
            : { optionDefinitionId: current.optionDefinitionId, value: body.value ?? current.value },
          '',
        );
        if (await findSameKey(tx, subscriptionId, type, current.entityId, merged, id)) {
          throw new ApiError('VALIDATION_ERROR', `${type} ${current.entityId} already has a value for this option`);
        }
        return updateOption(tx, subscriptionId, userId, id, { value: merged.value, customKey: merged.customKey, customGroup: merged.customGroup });
      });
      if (!updated) throw new ApiError('NOT_FOUND_BY_ID', `no option value ${id}`);
      return success(request, 200, { optionValue: updated });
    },
  );

  app.delete(
    '/documents/option/:optionValueGuid/delete',
    {
      errorHandler: guarded,
      schema: {
        tags: [TAG],
        summary: 'Delete an option value (soft delete)',
        description: "Deleting again, or an unknown or other subscription's id, gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
        params: OptionParams,
        response: {
          200: successEnvelope(Type.Object({ optionValueGuid: Type.String({ format: 'uuid' }), message: Type.String() })),
          ...errorResponses(400, 401, 404, 500),
        },
      },
    },
    async (request) => {
      const id = (request.params as { optionValueGuid: string }).optionValueGuid.toLowerCase();
      if (!(await deleteOption(db, request.auth.subscriptionId, request.auth.userId, id))) throw new ApiError('NOT_FOUND_BY_ID', `no option value ${id}`);
      return success(request, 200, { optionValueGuid: id, message: 'Option value deleted.' });
    },
  );
}

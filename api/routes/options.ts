// Option values (spec 2.6, 4.6): per-record settings, either a system option (a definition id) or a
// custom key/group. The schemas and their prose are in api/schemas/records.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
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
import { unexpectedAs } from '../lists.ts';
import * as S from '../schemas/records.ts';

type Item = Static<typeof S.OptionItem>;

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
  if (!def)
    throw new ApiError(
      'VALIDATION_ERROR',
      `${where}optionDefinitionId: ${JSON.stringify(String(rawDef).slice(0, 40))} is not a system option; known: ${S.OPTION_CATALOGUE}`,
    );
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
  a.optionDefinitionId !== null
    ? a.optionDefinitionId === b.optionDefinitionId
    : b.customKey === a.customKey && b.customGroup === a.customGroup;

async function entityOf(
  db: Db,
  subscriptionId: string,
  p: { entityType: string; entityId: string },
): Promise<{ type: EntityType; id: string }> {
  const type = canonicalEntityType(p.entityType);
  if (!type)
    throw new ApiError(
      'VALIDATION_ERROR',
      `entityType: ${JSON.stringify(p.entityType.slice(0, 80))} must be one of ${ENTITY_TYPES.join(', ')}`,
    );
  const id = p.entityId.toLowerCase();
  if (!(await entityExists(db, subscriptionId, type, id))) throw new ApiError('NOT_FOUND_BY_ID', `no ${type} ${id}`);
  return { type, id };
}

const optionRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (app, opts) => {
  const { db } = opts;
  const guarded = unexpectedAs('GET_DATA_SOURCE_ERROR');

  app.post(
    '/documents/option/:entityType/:entityId/create',
    {
      errorHandler: guarded,
      schema: S.createOptionValue,
    },
    async (request) => {
      const input = checkItem(request.body, '');
      const entity = await entityOf(db, request.auth.subscriptionId, request.params);
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
      schema: S.replaceOptionValues,
    },
    async (request) => {
      const items = request.body.map((o, i) => checkItem(o, `[${i}]: `));
      items.forEach((a, i) => {
        const j = items.findIndex((b) => sameKey(a, b));
        if (j !== i) throw new ApiError('VALIDATION_ERROR', `[${i}]: the same option as [${j}]; a record holds one value per key`);
      });
      const entity = await entityOf(db, request.auth.subscriptionId, request.params);
      const { subscriptionId, userId } = request.auth;
      await db.transaction((tx) => replaceOptions(tx, subscriptionId, userId, entity.type, entity.id, items));
      return success(request, 200, { entityId: entity.id, entityType: entity.type, message: 'Option values replaced.' });
    },
  );

  app.get(
    '/documents/option/:entityType/:entityId/list',
    {
      errorHandler: guarded,
      schema: S.listOptionValues,
    },
    async (request) => {
      const entity = await entityOf(db, request.auth.subscriptionId, request.params);
      return success(request, 200, { optionValues: await listOptions(db, request.auth.subscriptionId, entity.type, entity.id) });
    },
  );

  app.put(
    '/documents/option/:optionValueGuid/update',
    {
      errorHandler: guarded,
      schema: S.updateOptionValue,
    },
    async (request) => {
      const id = request.params.optionValueGuid.toLowerCase();
      const body = request.body;
      const { subscriptionId, userId } = request.auth;
      const updated = await db.transaction(async (tx) => {
        const current = await getOption(tx, subscriptionId, id);
        if (!current) throw new ApiError('NOT_FOUND_BY_ID', `no option value ${id}`);
        const type = canonicalEntityType(current.entityType) as EntityType;
        const merged = checkItem(
          current.optionDefinitionId === ''
            ? {
                customKey: body.customKey ?? current.customKey,
                customGroup: body.customGroup ?? current.customGroup,
                value: body.value ?? current.value,
              }
            : { optionDefinitionId: current.optionDefinitionId, value: body.value ?? current.value },
          '',
        );
        if (await findSameKey(tx, subscriptionId, type, current.entityId, merged, id)) {
          throw new ApiError('VALIDATION_ERROR', `${type} ${current.entityId} already has a value for this option`);
        }
        return updateOption(tx, subscriptionId, userId, id, {
          value: merged.value,
          customKey: merged.customKey,
          customGroup: merged.customGroup,
        });
      });
      if (!updated) throw new ApiError('NOT_FOUND_BY_ID', `no option value ${id}`);
      return success(request, 200, { optionValue: updated });
    },
  );

  app.delete(
    '/documents/option/:optionValueGuid/delete',
    {
      errorHandler: guarded,
      schema: S.deleteOptionValue,
    },
    async (request) => {
      const id = request.params.optionValueGuid.toLowerCase();
      if (!(await deleteOption(db, request.auth.subscriptionId, request.auth.userId, id)))
        throw new ApiError('NOT_FOUND_BY_ID', `no option value ${id}`);
      return success(request, 200, { optionValueGuid: id, message: 'Option value deleted.' });
    },
  );
};

export default optionRoutes;

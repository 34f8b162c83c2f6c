// The records of spec 2.2 - 2.6 and their operations (4.3 - 4.7): configurations, templates, data sources,
// option values, document records, and the document solutions they link to (extension); the list
// parameters of 4.9.
import Type from 'typebox';
import { LOCATION_CATALOG } from '../../connectors/registry.ts';
import { TEMPLATE_FORMATS } from '../../core/formats.ts';
import { dataLoadMethods, formatWording, methodsFor } from '../../core/locations.ts';
import { CONFIGURATION, CONFIGURATION_COLUMNS } from '../../store/records/configurations.ts';
import { DATA_SOURCE, DATA_SOURCE_COLUMNS } from '../../store/records/datasources.ts';
import { DOCUMENT, DOCUMENT_COLUMNS, DOCUMENT_UPDATABLE, LINK_FIELDS } from '../../store/records/documents.ts';
import type { Field } from '../../store/records/fields.ts';
import type { ColumnSpec } from '../../store/records/list.ts';
import { ENTITY_TYPES, OPTION_DEFINITIONS } from '../../store/records/options.ts';
import { SOLUTION, SOLUTION_COLUMNS } from '../../store/records/solutions.ts';
import { TEMPLATE, TEMPLATE_COLUMNS } from '../../store/records/templates.ts';
import { BOOLEAN_CONDITIONS, DATE_CONDITIONS, DEFAULT_TOP, MAX_SKIP, MAX_TOP, TEXT_CONDITIONS } from '../lists.ts';
import { component, noContent, propertiesOf } from './components.ts';
import { BareError, ErrorEnvelope, errorResponses, ExternalContext, successEnvelope } from './envelopes.ts';
import { inputProperties, listedProperties, oneProperties, SolutionRef } from './record-fields.ts';

// ---- lists (4.9) ----

function listDescription(columns: readonly ColumnSpec[]): string {
  return [
    `List parameters (spec 4.9): \`top\` page size (default ${DEFAULT_TOP}, at most ${MAX_TOP}); \`skip\` records to skip; \`orderby\` as \`Column|ASC\` or \`Column|DESC\` (direction optional, default ASC; default order is newest first);`,
    '`filter` a URL-encoded JSON array of clauses `{key, column, type, condition, value}`, combined with AND. `key` and `type` are accepted and ignored (the column decides how the value is read).',
    `Conditions: text columns ${TEXT_CONDITIONS.join(', ')} (all case-insensitive; GREATER_THAN/LESS_THAN compare alphabetically); date columns ${DATE_CONDITIONS.join(', ')} with an ISO 8601 value; boolean columns ${BOOLEAN_CONDITIONS.join(', ')} with true or false.`,
    `Columns (case-insensitive): ${columns.map((c) => `${c.name} (${c.type})`).join(', ')}. An unknown column, condition or direction, or a malformed filter, gives 400 VALIDATION_ERROR naming it. \`rowCount\` is the number of records matching the filter, whatever top and skip.`,
  ].join(' ');
}

export const ListQuerystring = Type.Object({
  top: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TOP, description: `Page size (default ${DEFAULT_TOP})` })),
  // Bounded: a huge integer (1e300 is one, to JSON Schema) would reach SQL OFFSET and fail there.
  skip: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SKIP, description: `Records to skip (at most ${MAX_SKIP})` })),
  orderby: Type.Optional(Type.String({ maxLength: 200, description: '`Column|DIRECTION`, e.g. `Name|DESC`', examples: ['Name|DESC'] })),
  filter: Type.Optional(
    Type.String({
      maxLength: 10_000,
      description: 'URL-encoded JSON array of {key, column, type, condition, value}',
      examples: ['[{"column":"Name","condition":"CONTAINS","value":"invoice"}]'],
    }),
  ),
});

/** A path parameter that must be a uuid; a bad value fails validation naming the parameter. */
export const UuidParam = (description: string) => Type.String({ format: 'uuid', description });

const Deleted = (idField: string) => successEnvelope(Type.Object({ [idField]: Type.String({ format: 'uuid' }), message: Type.String() }));

// ---- document solutions (extension) ----

const SOLUTION_TAG = 'Document solution';

export const DocumentSolution = component('DocumentSolution', Type.Object(oneProperties(SOLUTION)));

export const DocumentSolutionWithMembers = component(
  'DocumentSolutionWithMembers',
  Type.Object({
    ...DocumentSolution.properties,
    dataSources: Type.Array(SolutionRef, { description: 'Linked live data sources' }),
    documentTemplates: Type.Array(SolutionRef, { description: 'Linked live templates' }),
  }),
);

export const DocumentSolutionInput = component(
  'DocumentSolutionInput',
  Type.Object({
    name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
    description: Type.Optional(Type.String()),
  }),
);

export const createSolution = {
  operationId: 'createSolution',
  tags: [SOLUTION_TAG],
  summary: 'Create a document solution (extension)',
  description:
    'Body `{documentSolution: {name, description}, externalContext?}`, shaped like template and data source create. `name` is required (400 DATA_NAME_REQUIRED). Answers 201 with result.data.documentSolution. Server-managed fields sent in the body are ignored.',
  body: Type.Object({ documentSolution: DocumentSolutionInput, externalContext: Type.Optional(ExternalContext) }),
  response: { 201: successEnvelope(Type.Object({ documentSolution: DocumentSolution })), ...errorResponses(400, 401, 500) },
};

export const getSolution = {
  operationId: 'getSolution',
  tags: [SOLUTION_TAG],
  summary: 'Get a document solution with its linked data sources and templates (extension)',
  description: "An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
  params: Type.Object({ documentSolutionId: UuidParam('The document solution') }),
  response: { 200: successEnvelope(Type.Object({ documentSolution: DocumentSolutionWithMembers })), ...errorResponses(400, 401, 404, 500) },
};

export const listSolutions = {
  operationId: 'listSolutions',
  tags: [SOLUTION_TAG],
  summary: 'List document solutions (extension)',
  description: listDescription(SOLUTION_COLUMNS),
  querystring: ListQuerystring,
  response: {
    200: successEnvelope(Type.Object({ documentSolutions: Type.Array(DocumentSolution), rowCount: Type.Integer() })),
    ...errorResponses(400, 401, 500),
  },
};

// ---- document templates (2.3, 4.4) ----

const TEMPLATE_TAG = 'Document template';
/** Where a template may be loaded from (spec 4.4: as generate's template.loadMethod). */
export const TEMPLATE_LOAD_METHODS = methodsFor(LOCATION_CATALOG, 'generate', 'readTemplate');

const SolutionIds = Type.Array(Type.Object({ id: Type.String() }, { description: 'Only id is read' }), {
  maxItems: 100,
  description: 'Document solutions to link, best-effort: ids that name no live solution of the caller are skipped, not an error',
});

export const DocumentTemplateInput = component(
  'DocumentTemplateInput',
  Type.Object(
    {
      name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
      description: Type.Optional(Type.String()),
      title: Type.Optional(Type.String()),
      urn: Type.Optional(
        Type.String({ description: 'Reference to the file, together with loadMethod (e.g. an uploaded template id for Storage)' }),
      ),
      url: Type.Optional(Type.String({ description: 'http(s) URL of the file, used alone' })),
      fileFormat: Type.Optional(Type.String({ description: `${TEMPLATE_FORMATS.join(', ')} (case-insensitive, stored in this spelling)` })),
      loadMethod: Type.Optional(
        Type.String({ description: `${TEMPLATE_LOAD_METHODS.join(', ')} (case-insensitive, stored in this spelling)` }),
      ),
      documentSolutions: Type.Optional(SolutionIds),
    },
    { description: 'Server-managed fields (id, ownership, path, timestamps) are ignored when sent' },
  ),
);

export const DocumentTemplate = component(
  'DocumentTemplate',
  Type.Object(oneProperties(TEMPLATE, { path: 'Display only; always empty in this deployment (templates are not filed in folders)' })),
);

const TEMPLATE_RULES = [
  'Rules: (1) point at the file with `urn` together with `loadMethod`, or with `url` alone, never both (400 VALIDATION_ERROR);',
  `(2) \`fileFormat\` must agree with \`loadMethod\` (${formatWording(LOCATION_CATALOG, 'generate', 'readTemplate')}; 400 VALIDATION_ERROR);`,
  '(3) linking through `documentSolutions` is best-effort: unknown solutions are skipped and the response lists the linked ones;',
  '(4) ids, ownership, path and timestamps are server-assigned; sending them has no effect;',
  '(5) a Storage urn is not checked against uploads: an uploaded file stops resolving after its retention, and the record survives (update its urn after re-uploading).',
  '`name` is required (400 DATA_NAME_REQUIRED). loadMethod and fileFormat are matched case-insensitively and stored in their canonical spelling.',
].join(' ');

const TemplateBody = Type.Object({ documentTemplate: DocumentTemplateInput, externalContext: Type.Optional(ExternalContext) });
const TemplateParams = Type.Object({ documentTemplateGuid: UuidParam('The template') });
const oneTemplate = successEnvelope(Type.Object({ documentTemplate: DocumentTemplate }));

export const createTemplate = {
  operationId: 'createTemplate',
  tags: [TEMPLATE_TAG],
  summary: 'Create a document template record',
  description: `Records a reference to an existing template file; the file itself is not uploaded here (see template upload). ${TEMPLATE_RULES} Answers 201 with result.data.documentTemplate and externalContext echoed. An unexpected failure gives 500 CREATE_DOCUMENT_TEMPLATE_ERROR.`,
  body: TemplateBody,
  response: { 201: oneTemplate, ...errorResponses(400, 401, 500) },
};

export const updateTemplate = {
  operationId: 'updateTemplate',
  tags: [TEMPLATE_TAG],
  summary: 'Update a document template record (extension)',
  description: `Same body as create; it replaces the record's fields (fields left out become empty). \`documentSolutions\`, when sent, replaces the links (best-effort again); when left out the links stay. ${TEMPLATE_RULES} An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID.`,
  params: TemplateParams,
  body: TemplateBody,
  response: { 200: oneTemplate, ...errorResponses(400, 401, 404, 500) },
};

export const getTemplate = {
  operationId: 'getTemplate',
  tags: [TEMPLATE_TAG],
  summary: 'Get a document template record (extension)',
  description: "An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
  params: TemplateParams,
  response: { 200: oneTemplate, ...errorResponses(400, 401, 404, 500) },
};

export const listTemplates = {
  operationId: 'listTemplates',
  tags: [TEMPLATE_TAG],
  summary: 'List document template records (extension)',
  description: `${listDescription(TEMPLATE_COLUMNS)} Deleted templates are not listed.`,
  querystring: ListQuerystring,
  response: {
    200: successEnvelope(Type.Object({ documentTemplates: Type.Array(DocumentTemplate), rowCount: Type.Integer() })),
    ...errorResponses(400, 401, 500),
  },
};

export const deleteTemplate = {
  operationId: 'deleteTemplate',
  tags: [TEMPLATE_TAG],
  summary: 'Delete a document template record (soft delete)',
  description:
    "Marks the record deleted: it disappears from get and list, its links stop counting, and the file it points at is untouched. Deleting again, or an unknown or other subscription's id, gives 404 NOT_FOUND_BY_ID.",
  params: TemplateParams,
  response: { 200: Deleted('documentTemplateGuid'), ...errorResponses(400, 401, 404, 500) },
};

// ---- configurations (2.2, 4.3) ----

const CONFIGURATION_TAG = 'Document solution configuration';

const FIELD_DOCS: Partial<Record<string, string>> = {
  name: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED',
  fileFormat: 'e.g. pdf',
  processingType: 'e.g. STANDARD',
  deliveryMethod: 'e.g. Email',
  path: 'Output folder path',
  pdfConformanceLevel: 'e.g. PdfA2B',
  language: 'e.g. en',
  locale: 'e.g. en-US',
  timeZone: 'IANA name, e.g. Europe/Paris; an unknown zone gives 400 VALIDATION_ERROR',
  embeddedData: 'JSON text; text that is not JSON gives 400 VALIDATION_ERROR',
  viewUserEmailList: 'Comma-separated e-mail addresses',
  editUserEmailList: 'Comma-separated e-mail addresses',
};
const configurationField = (name: string, f: Field) =>
  f.type === 'boolean'
    ? Type.Boolean({ description: 'Sharing switch; default false' })
    : FIELD_DOCS[name]
      ? Type.String({ description: FIELD_DOCS[name] })
      : Type.String();

export const ConfigurationInput = component(
  'ConfigurationInput',
  Type.Object(
    inputProperties(CONFIGURATION, configurationField, {
      documentSolutionGuid: Type.Optional(
        Type.Union([Type.String(), Type.Null()], {
          description: 'The owning document solution (a uuid of the caller); empty or null for none',
        }),
      ),
    }),
    {
      description:
        'Configuration fields (2.2), flat. Server-managed fields (documentSolutionConfigurationGuid, subscriptionGuid, ownerGuid, lastModifiedUserGuid, createdDate, lastModifiedDate, isDeleted) are ignored when sent.',
    },
  ),
);

export const Configuration = component(
  'Configuration',
  Type.Object(oneProperties(CONFIGURATION, { documentSolutionGuid: 'null when the configuration has no owning solution' })),
);

const oneConfiguration = successEnvelope(Type.Object({ documentSolutionConfiguration: Configuration }));
const ConfigurationParams = Type.Object({ documentSolutionConfigurationGuid: UuidParam('The configuration') });

export const createConfiguration = {
  operationId: 'createConfiguration',
  tags: [CONFIGURATION_TAG],
  summary: 'Create a document solution configuration',
  description:
    'Creates a configuration from the flat fields of 2.2. `name` is required (400 DATA_NAME_REQUIRED). Absent text fields are stored empty and absent switches false. `documentSolutionGuid`, when given, must name a document solution of the caller (400 VALIDATION_ERROR otherwise). Answers 200 as the spec shows (not 201).',
  body: ConfigurationInput,
  response: { 200: oneConfiguration, ...errorResponses(400, 401, 500) },
};

export const updateConfiguration = {
  operationId: 'updateConfiguration',
  tags: [CONFIGURATION_TAG],
  summary: 'Update a document solution configuration',
  description:
    "Same body as create, and it replaces the configuration: fields left out become empty (text) or false (switches), and `name` is required again (400 DATA_NAME_REQUIRED). An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
  params: ConfigurationParams,
  body: ConfigurationInput,
  response: { 200: oneConfiguration, ...errorResponses(400, 401, 404, 500) },
};

export const getConfiguration = {
  operationId: 'getConfiguration',
  tags: [CONFIGURATION_TAG],
  summary: 'Get a document solution configuration',
  description:
    "Failures of this operation use the bare body the spec documents for configuration get and list, `{code, message}` (plus `eventId` on 500), not the error envelope: 400 VALIDATION_ERROR for a non-uuid id, 404 NOT_FOUND_BY_ID for an unknown, deleted or other subscription's id, 500 GET_DATA_SOURCE_ERROR. Credential failures (401) keep the envelope, as everywhere.",
  params: ConfigurationParams,
  response: { 200: oneConfiguration, 400: BareError, 401: ErrorEnvelope, 404: BareError, 500: BareError },
};

export const listConfigurations = {
  operationId: 'listConfigurations',
  tags: [CONFIGURATION_TAG],
  summary: 'List document solution configurations',
  description: `${listDescription(CONFIGURATION_COLUMNS)} Failures use the bare body \`{code, message}\` (plus \`eventId\` on 500) the spec documents for this operation; credential failures (401) keep the envelope.`,
  querystring: ListQuerystring,
  response: {
    200: successEnvelope(Type.Object({ documentSolutionConfigurations: Type.Array(Configuration), rowCount: Type.Integer() })),
    400: BareError,
    401: ErrorEnvelope,
    500: BareError,
  },
};

// ---- data sources (2.4, 4.5) ----

const DATA_SOURCE_TAG = 'Data source';

/** The spec names Storage and GraphQL of four methods; the others are the locations generate reads data
 *  from (the location catalog): the two drives. */
export const DATA_LOAD_METHODS = dataLoadMethods(LOCATION_CATALOG);

export const DataSourceInput = component(
  'DataSourceInput',
  Type.Object(
    {
      name: Type.Optional(Type.String({ description: 'Required; missing or blank gives 400 DATA_NAME_REQUIRED' })),
      loadMethod: Type.String({ description: `Required: ${DATA_LOAD_METHODS.join(', ')} (case-insensitive, stored in this spelling)` }),
      description: Type.Optional(Type.String()),
      urn: Type.Optional(
        Type.String({
          description: 'Storage: the id of an uploaded data file (removed after its retention; the record survives). GraphQL: the endpoint',
        }),
      ),
      query: Type.Optional(Type.String({ description: 'GraphQL only; stored empty for the other methods' })),
      variables: Type.Optional(Type.String({ description: 'GraphQL only; stored empty for the other methods' })),
      documentSolutions: Type.Optional(
        Type.Array(Type.Object({ id: Type.String() }), {
          maxItems: 100,
          description: 'Document solutions to link, best-effort: ids naming no live solution of the caller are skipped',
        }),
      ),
    },
    { description: 'Server-managed fields (ids, ownership, timestamps, isDeleted) are ignored when sent' },
  ),
);

export const DataSource = component(
  'DataSource',
  Type.Object(oneProperties(DATA_SOURCE, { documentSolutions: 'The solutions actually linked' }), {
    description: 'Create response: the Id spelling of the spec (id, subscriptionId, ownerId, lastModifiedUserId)',
  }),
);

export const ListedDataSource = component(
  'ListedDataSource',
  Type.Object(listedProperties(DATA_SOURCE, { isDeleted: 'Always false: deleted data sources are not listed' }), {
    description: 'List item: the Guid spelling of the spec (dataSourceGuid, subscriptionGuid, ownerGuid, lastModifiedUserGuid)',
  }),
);

export const createDataSource = {
  operationId: 'createDataSource',
  tags: [DATA_SOURCE_TAG],
  summary: 'Create a data source',
  description:
    '`name` is required (400 DATA_NAME_REQUIRED) and `loadMethod` too (400 VALIDATION_ERROR naming it). `query` and `variables` are kept only for GraphQL. Linking through `documentSolutions` is best-effort: unknown solutions are skipped and the response lists the linked ones. Answers 201 with result.data.dataSource in the Id spelling (the list uses the Guid spelling). An unexpected failure gives 500 CREATE_DATA_SOURCE_ERROR.',
  body: Type.Object({ dataSource: DataSourceInput, externalContext: Type.Optional(ExternalContext) }),
  response: { 201: successEnvelope(Type.Object({ dataSource: DataSource })), ...errorResponses(400, 401, 500) },
};

export const listDataSources = {
  operationId: 'listDataSources',
  tags: [DATA_SOURCE_TAG],
  summary: 'List data sources',
  description: `${listDescription(DATA_SOURCE_COLUMNS)} Items use the Guid spelling (dataSourceGuid, subscriptionGuid, ownerGuid, lastModifiedUserGuid) and carry isDeleted; deleted data sources are not listed.`,
  querystring: ListQuerystring,
  response: {
    200: successEnvelope(Type.Object({ dataSources: Type.Array(ListedDataSource), rowCount: Type.Integer() })),
    ...errorResponses(400, 401, 500),
  },
};

export const deleteDataSource = {
  operationId: 'deleteDataSource',
  tags: [DATA_SOURCE_TAG],
  summary: 'Delete a data source (soft delete)',
  description:
    "Marks the data source deleted: it disappears from the list and from solutions. Deleting again, or an unknown or other subscription's id, gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
  params: Type.Object({ dataSourceGuid: UuidParam('The data source') }),
  response: { 200: Deleted('dataSourceGuid'), ...errorResponses(400, 401, 404, 500) },
};

export const addDataSourceToSolution = {
  operationId: 'addDataSourceToSolution',
  tags: [DATA_SOURCE_TAG],
  summary: 'Attach a data source to a document solution',
  description:
    "Strict, unlike linking on create: when the solution or the data source is not a live record of the caller's subscription the answer is 404 with an empty body (it does not say which id is missing) and nothing changes. Attaching twice is harmless (200 again). The data source itself is not copied or modified. A non-uuid id gives 400 VALIDATION_ERROR; an unexpected failure 500 ADD_DATA_SOURCE_TO_SOLUTION_ERROR.",
  params: Type.Object({ documentSolutionId: UuidParam('The document solution'), dataSourceId: UuidParam('The data source') }),
  response: {
    200: successEnvelope(
      Type.Object({
        documentSolutionId: Type.String({ format: 'uuid' }),
        dataSourceId: Type.String({ format: 'uuid' }),
        message: Type.String(),
      }),
    ),
    404: noContent("Empty body: the solution or the data source does not exist in the caller's subscription"),
    ...errorResponses(400, 401, 500),
  },
};

// ---- option values (2.6, 4.6) ----

const OPTION_TAG = 'Option values';

/** The system options, for descriptions and messages. */
export const OPTION_CATALOGUE = Object.entries(OPTION_DEFINITIONS)
  .map(([id, d]) => `${id} ${d.group}/${d.key} (${d.systemType})`)
  .join(', ');

export const OptionItem = component(
  'OptionItem',
  Type.Object(
    {
      optionDefinitionId: Type.Optional(
        Type.Unknown({
          description: `Integer id of a system option: ${OPTION_CATALOGUE}. Null or empty string means none. Json options take JSON text, Boolean options true or false`,
        }),
      ),
      customKey: Type.Optional(Type.String({ maxLength: 200, description: 'Key of a custom option' })),
      customGroup: Type.Optional(Type.String({ maxLength: 200, description: 'Group of a custom option' })),
      value: Type.Optional(Type.String({ maxLength: 100_000, description: 'Default empty' })),
    },
    {
      description:
        'Exactly one of optionDefinitionId and customKey; neither gives 400 OPTION_VALUE_MISSING_DEFINITION_OR_KEY, both 400 VALIDATION_ERROR',
    },
  ),
);

export const OptionValue = component(
  'OptionValue',
  Type.Object({
    optionValueGuid: Type.String({ format: 'uuid' }),
    entityType: Type.String(),
    entityId: Type.String({ format: 'uuid' }),
    optionDefinitionId: Type.Union([Type.Integer(), Type.Literal('')], {
      description: 'The system option id; empty string for a custom option',
    }),
    customKey: Type.String({ description: 'Empty for a system option' }),
    customGroup: Type.String({ description: 'Empty for a system option' }),
    value: Type.String(),
    effectiveKey: Type.String({ description: "The definition's key, or customKey" }),
    effectiveGroup: Type.String({ description: "The definition's group, or customGroup" }),
    systemType: Type.String({
      description: 'How the value is read: Json, Boolean or String for system options; Custom for custom options',
    }),
    createdDate: Type.String({ format: 'date-time' }),
    lastModifiedDate: Type.String({ format: 'date-time' }),
  }),
);

const EntityParams = Type.Object({
  entityType: Type.String({ maxLength: 100, description: `${ENTITY_TYPES.join(', ')} (case-insensitive)` }),
  entityId: UuidParam('The owning record'),
});
const OptionParams = Type.Object({ optionValueGuid: UuidParam('The option value') });
const oneOption = successEnvelope(Type.Object({ optionValue: OptionValue }));
const ENTITY_RULES = `entityType is one of ${ENTITY_TYPES.join(', ')} (case-insensitive; another value gives 400 VALIDATION_ERROR); entityId must be a live record of that type in the caller's subscription (404 NOT_FOUND_BY_ID otherwise).`;

export const createOptionValue = {
  operationId: 'createOptionValue',
  tags: [OPTION_TAG],
  summary: 'Create an option value',
  description: `Adds one option value to a record. ${ENTITY_RULES} Exactly one of optionDefinitionId (system option) and customKey (custom option): neither gives 400 OPTION_VALUE_MISSING_DEFINITION_OR_KEY, both 400 VALIDATION_ERROR. A record holds one value per key: a second value for the same definition, or the same customKey and customGroup, gives 400 VALIDATION_ERROR (use update or replace). In the response a custom option has optionDefinitionId "" (empty string).`,
  params: EntityParams,
  body: OptionItem,
  response: { 200: oneOption, ...errorResponses(400, 401, 404, 500) },
};

export const replaceOptionValues = {
  operationId: 'replaceOptionValues',
  tags: [OPTION_TAG],
  summary: "Replace a record's option values",
  description: `The body is the complete new set: every current value of the record is removed (soft delete) and these are written, in one transaction. An empty array removes all. Each item is validated as on create (its position is named, e.g. [2]); two items for the same key give 400 VALIDATION_ERROR. ${ENTITY_RULES}`,
  params: EntityParams,
  body: Type.Array(OptionItem, { maxItems: 200 }),
  response: {
    200: successEnvelope(Type.Object({ entityId: Type.String({ format: 'uuid' }), entityType: Type.String(), message: Type.String() })),
    ...errorResponses(400, 401, 404, 500),
  },
};

export const listOptionValues = {
  operationId: 'listOptionValues',
  tags: [OPTION_TAG],
  summary: "List a record's option values (extension)",
  description: `All live option values of the record, oldest first (a record has few; no paging). ${ENTITY_RULES}`,
  params: EntityParams,
  response: { 200: successEnvelope(Type.Object({ optionValues: Type.Array(OptionValue) })), ...errorResponses(400, 401, 404, 500) },
};

export const updateOptionValue = {
  operationId: 'updateOptionValue',
  tags: [OPTION_TAG],
  summary: 'Update an option value',
  description:
    "Changes the fields sent: `value` always; `customKey` and `customGroup` of a custom option. Which record owns the option and which system option it is (entityType, entityId, optionDefinitionId) are fixed at creation and ignored here, as are server-managed fields. A blank customKey on a custom option gives 400 OPTION_VALUE_MISSING_DEFINITION_OR_KEY; a value that does not suit a system option's type gives 400 VALIDATION_ERROR. An unknown, deleted or other subscription's id gives 404 NOT_FOUND_BY_ID.",
  params: OptionParams,
  body: OptionItem,
  response: { 200: oneOption, ...errorResponses(400, 401, 404, 500) },
};

export const deleteOptionValue = {
  operationId: 'deleteOptionValue',
  tags: [OPTION_TAG],
  summary: 'Delete an option value (soft delete)',
  description:
    "Deleting again, or an unknown or other subscription's id, gives 404 NOT_FOUND_BY_ID; a non-uuid id gives 400 VALIDATION_ERROR.",
  params: OptionParams,
  response: { 200: Deleted('optionValueGuid'), ...errorResponses(400, 401, 404, 500) },
};

// ---- document records (2.5, 4.7) ----

const DOCUMENT_TAG = 'Document record';
/** The e-mail list fields (spec 2.5): comma-separated addresses. */
export const EMAIL_LISTS = DOCUMENT_UPDATABLE.flatMap(([f]) => (f.endsWith('EmailList') ? [f] : []));

export const DocumentUpdate = component(
  'DocumentUpdate',
  Type.Object(
    propertiesOf(
      DOCUMENT_UPDATABLE.map(([f]) => f),
      (f) =>
        Type.Optional(
          Type.String({ maxLength: 10_000, ...(EMAIL_LISTS.includes(f) ? { description: 'Comma-separated e-mail addresses' } : {}) }),
        ),
    ),
    {
      description: 'Only the fields sent change. Other fields (ids, links, timestamps, isDeleted) are server-managed and ignored when sent',
    },
  ),
);

export const Document = component(
  'Document',
  Type.Object(
    oneProperties(DOCUMENT, {
      ...Object.fromEntries(LINK_FIELDS.map(([f]) => [f, 'Empty when absent'])),
      initiatorEmail: 'Extension: the X-Email header of the manage request that made or moved the document (spec 5.2); empty otherwise',
    }),
    { description: 'The record of a generated or managed document (spec 2.5)' },
  ),
);

const DocumentParams = Type.Object({ documentGuid: UuidParam('The document record (documentGuid of the generate response)') });
const oneDocument = successEnvelope(Type.Object({ document: Document }));

export const updateDocument = {
  operationId: 'updateDocument',
  tags: [DOCUMENT_TAG],
  summary: 'Update a document record',
  description:
    "Changes the record's metadata, not the file: only the fields sent change (all strings). The e-mail list fields take comma-separated addresses (400 VALIDATION_ERROR naming the field otherwise). An unknown, deleted or other subscription's documentGuid gives 404 NOT_FOUND_BY_ID; a non-uuid one 400 VALIDATION_ERROR.",
  params: DocumentParams,
  body: DocumentUpdate,
  response: { 200: oneDocument, ...errorResponses(400, 401, 404, 500) },
};

export const getDocument = {
  operationId: 'getDocument',
  tags: [DOCUMENT_TAG],
  summary: 'Get a document record (extension)',
  description: "An unknown, deleted or other subscription's documentGuid gives 404 NOT_FOUND_BY_ID; a non-uuid one 400 VALIDATION_ERROR.",
  params: DocumentParams,
  response: { 200: oneDocument, ...errorResponses(400, 401, 404, 500) },
};

export const listDocuments = {
  operationId: 'listDocuments',
  tags: [DOCUMENT_TAG],
  summary: 'List document records (extension)',
  description: `${listDescription(DOCUMENT_COLUMNS)} Newest first by default; e.g. filter by Urn to find the record of a generated file.`,
  querystring: ListQuerystring,
  response: {
    200: successEnvelope(Type.Object({ documents: Type.Array(Document), rowCount: Type.Integer() })),
    ...errorResponses(400, 401, 500),
  },
};

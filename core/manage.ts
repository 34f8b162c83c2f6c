// The manage request (spec 4.8 manage) as the API receives it and as the workflow sees it, and the rules of
// the spec's table, checked before any workflow starts. Which locations can do what is the location
// catalog's answer (core/locations.ts, from connectors/registry.ts); the spec's own rules are here.
import Type, { type Static } from 'typebox';
import { type InnerError, innerError } from './errors.ts';
import { ALL_FORMATS, canConvert, isFormat } from './formats.ts';
import { isJsonObjectText, oneOf } from './generate.ts';
import { type LinkField, type LocationCatalog, type LocationNeed, methodsFor, pathWording, urnWording } from './locations.ts';
import type { RunContext } from './run.ts';
import { parseTarget, type Target } from './target.ts';

export type ManageOperation = 'copy' | 'move' | 'delete' | 'convert';
export type RemoveMode = 'none' | 'delete' | 'permanentDelete';

export const REMOVE_MODES: readonly RemoveMode[] = ['none', 'delete', 'permanentDelete'];

/** What the manage workflow receives (validated by the API): references, never bytes. */
export interface ManageInput {
  /** Its user is the acting user: the bearer token's user, or the X-Service-Authorization token's (spec 5.2). */
  run: RunContext;
  /** Who acted, when it was not the bearer token's user: the service token's user (spec 5.2). */
  serviceUser?: { email: string; fullName?: string };
  /** X-Email (spec 5.2): the e-mail of the user who started the process, recorded on the document. */
  initiatorEmail?: string;
  operation: ManageOperation;
  source: { urn: string; fileFormat: string; loadMethod: string; remove: RemoveMode };
  /** Absent for delete (core/target.ts). */
  target?: Target;
  /** data.embedded: JSON text of an object written to the output file's custom properties. */
  embedded?: string;
}

const JsonObject = Type.Object({}, { additionalProperties: true });

/** The body of manage (spec 4.8) but externalContext (the API's), its descriptions naming the registered
 *  locations. */
export function manageRequestSchema(catalog: LocationCatalog) {
  const methods = { source: methodsFor(catalog, 'manage', 'readDocument'), target: methodsFor(catalog, 'manage', 'write') };
  return Type.Object({
    sourceDocument: Type.Object({
      urn: Type.String({
        minLength: 1,
        description: `The urn the location gave (result.data.document.urn of generate or manage): ${urnWording(catalog, 'manage', 'readDocument')}`,
      }),
      fileFormat: oneOf(ALL_FORMATS, 'The format of the source file'),
      loadMethod: oneOf(methods.source, 'Where the source is (crm: urn is a ContentVersion id)'),
      remove: Type.Optional(
        oneOf(
          REMOVE_MODES,
          'none (default), delete or permanentDelete. Storage: delete makes the urn stop resolving and soft-deletes the record, keeping the bytes for an operator; permanentDelete also erases the bytes.',
        ),
      ),
      options: Type.Optional(JsonObject),
    }),
    targetDocument: Type.Optional(
      Type.Object({
        name: Type.String({ minLength: 1 }),
        fileFormat: oneOf(ALL_FORMATS, 'Same as the source for copy and move; different for convert (docx/xlsx/pptx to pdf, xlsx to csv)'),
        deliveryMethod: oneOf(methods.target, 'Where the document goes (crm: options.crm)'),
        path: Type.String({ description: pathWording(catalog, 'manage') }),
        options: Type.Optional(
          Type.Object(
            {
              pdfSaveOptions: Type.Optional(Type.Unknown({ description: 'JSON text, read when fileFormat is pdf' })),
              docxSaveOptions: Type.Optional(Type.Unknown()),
              crm: Type.Optional(JsonObject),
              driveA: Type.Optional(JsonObject),
            },
            { additionalProperties: true },
          ),
        ),
      }),
    ),
    data: Type.Optional(
      Type.Object({
        embedded: Type.Optional(Type.String({ description: 'JSON text of an object written to the output file properties' })),
      }),
    ),
  });
}

/** A manage request as its schema admits it. */
export type ManageRequest = Static<ReturnType<typeof manageRequestSchema>>;

/** A request checked by parseManageRequest: the workflow input less its run (who asks, the connections);
 *  what it asks of the locations; or every problem with it. */
export interface ParsedManage {
  input: Pick<ManageInput, 'operation' | 'source' | 'target' | 'embedded'>;
  needs: LocationNeed[];
  problems: InnerError[];
}

/** Spec 4.8's table: the operation the payload asks for, its target (core/target.ts, as generate's), what it
 *  asks of the locations, and every problem with it at once. */
export function parseManageRequest(body: ManageRequest, catalog: LocationCatalog): ParsedManage {
  const problems: InnerError[] = [];
  const bad = (message: string) => problems.push(innerError('VALIDATION_ERROR', message));
  const src = body.sourceDocument;
  const tgt = body.targetDocument;
  const remove = (src.remove ?? 'none') as RemoveMode;
  const sources = methodsFor(catalog, 'manage', 'readDocument');
  if (!REMOVE_MODES.includes(remove)) bad(`sourceDocument.remove must be one of ${REMOVE_MODES.join(', ')}`);
  if (!sources.includes(src.loadMethod)) bad(`sourceDocument.loadMethod must be one of ${sources.join(', ')}`);
  if (!isFormat(src.fileFormat)) bad(`sourceDocument.fileFormat must be one of ${ALL_FORMATS.join(', ')}`);
  if (src.loadMethod === 'crm' && remove === 'permanentDelete') {
    bad(
      "sourceDocument.remove permanentDelete is not available for crm: Salesforce keeps a deleted file in the org's recycle bin; use remove delete",
    );
  }
  const embedded = body.data?.embedded;
  if (embedded !== undefined && embedded !== '' && !isJsonObjectText(embedded)) bad('data.embedded must be JSON text of an object');
  const source = { urn: src.urn, fileFormat: src.fileFormat, loadMethod: src.loadMethod, remove };
  const field = 'sourceDocument.loadMethod';
  const withEmbedded = embedded ? { embedded } : {};
  if (!tgt) {
    if (remove === 'none') {
      bad(
        'without targetDocument the operation is Delete, which needs sourceDocument.remove delete or permanentDelete; Copy, Move and Convert need a targetDocument',
      );
    }
    return {
      input: { operation: 'delete', source, ...withEmbedded },
      needs: [{ method: src.loadMethod, capability: 'delete', field }],
      problems,
    };
  }
  const operation: ManageOperation = tgt.fileFormat === src.fileFormat ? (remove === 'none' ? 'copy' : 'move') : 'convert';
  const parsed = parseTarget(tgt, { field: 'targetDocument', request: 'manage' }, catalog);
  problems.push(...parsed.problems);
  if (operation === 'convert' && isFormat(tgt.fileFormat) && isFormat(src.fileFormat) && !canConvert(src.fileFormat, tgt.fileFormat)) {
    bad(`Convert from ${src.fileFormat} to ${tgt.fileFormat} is not possible: docx, xlsx and pptx convert to pdf, and xlsx to csv`);
  }
  const needs: LocationNeed[] = [
    { method: src.loadMethod, capability: 'readDocument', field },
    ...(remove !== 'none' ? [{ method: src.loadMethod, capability: 'remove' as const, field }] : []),
    ...parsed.needs,
  ];
  return { input: { operation, source, target: parsed.target, ...withEmbedded }, needs, problems };
}

export interface ManageResult {
  document: { deliveryMethod: string; name: string; fileFormat: string; urn: string; uri?: string } & Partial<Record<LinkField, string>>;
  documentGuid: string;
  consumption: { dimension: string; value: number }[];
}

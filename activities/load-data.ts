import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { SealedValueError, unsealHeaderVariables } from '../api/auth/sealed.ts';
import { GraphqlEndpointError, GraphqlResponseError, runGraphqlQuery } from '../connectors/graphql/client.ts';
import type { BlobRef } from '../connectors/storage/blob-store.ts';
import { innerError } from '../core/errors.ts';
import { type GenerateInput, graphqlRequestOf } from '../core/generate.ts';
import { getFile } from '../store/files.ts';
import { type ActivityDeps, outboundOf } from './deps.ts';
import { callerFailure } from './failures.ts';

export function loadDataActivity(deps: ActivityDeps) {
  /** Resolves the data file and checks it is JSON, so a bad file fails here with a clear cause rather
   *  than deep inside the merge. For GraphQL, runs the query and keeps its `data` as a scratch blob. */
  return async function loadData(input: Pick<GenerateInput, 'subscriptionId' | 'data'>): Promise<BlobRef> {
    const { data } = input;
    if (data.loadMethod === 'GraphQL') return loadGraphql(deps, input.subscriptionId, data);
    if (data.loadMethod !== 'Storage') {
      throw callerFailure('NOT_SUPPORTED', `data.loadMethod ${data.loadMethod} is not available in this deployment yet`);
    }
    const file = await getFile(deps.db, input.subscriptionId, data.urn, ['data']);
    if (!file || !(await deps.blobs.exists(file.blobKey))) {
      throw callerFailure(
        'DATA_NOT_FOUND',
        `data.urn ${data.urn} does not resolve: upload the file with POST /documents/data/upload (uploads expire after use or 24 hours)`,
      );
    }
    const bytes = await deps.blobs.get(file.blobKey);
    try {
      JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch (err) {
      throw callerFailure('DATA_INVALID', `data.urn ${data.urn} is not valid JSON: ${(err as Error).message}`);
    }
    return { key: file.blobKey, sha256: file.sha256, size: file.size, contentType: 'application/json' };
  };
}

/** GraphQL errors and an unreachable or refused endpoint are the caller's: DATA_NOT_FOUND, one inner
 *  error per message of the server. The result goes to scratch/<workflowId>/data.json. */
async function loadGraphql(deps: ActivityDeps, subscriptionId: string, data: GenerateInput['data']): Promise<BlobRef> {
  // `header` variables arrive sealed (api/auth/sealed.ts); they are opened only here, for the request.
  let variables = data.variables;
  try {
    if (variables) variables = await unsealHeaderVariables(deps.db, subscriptionId, variables);
  } catch (err) {
    if (err instanceof SealedValueError) throw ApplicationFailure.create({ type: 'SEALED_VALUE', message: err.message, nonRetryable: true });
    throw err;
  }
  const request = graphqlRequestOf({ ...data, variables });
  if (request.errors.length > 0) {
    throw callerFailure('VALIDATION_ERROR', request.errors.join('; '), request.errors.map((m) => innerError('VALIDATION_ERROR', m)));
  }
  const outbound = outboundOf(deps);
  let result: Record<string, unknown>;
  try {
    result = await runGraphqlQuery({
      endpoint: request.endpoint,
      query: request.query,
      variables: request.variables,
      headers: request.headers,
      policy: outbound.policy,
      timeoutMs: outbound.timeoutMs,
      maxResponseBytes: outbound.maxResponseBytes,
    });
  } catch (err) {
    if (err instanceof GraphqlResponseError) {
      throw callerFailure(
        'DATA_NOT_FOUND',
        err.message,
        err.messages.map((m) => innerError('DATA_NOT_FOUND', `GraphQL: ${m}`)),
      );
    }
    // Blocked or unreachable: retrying the same input at once will not help, and a synchronous caller waits.
    if (err instanceof GraphqlEndpointError) throw callerFailure('DATA_NOT_FOUND', err.message);
    throw err;
  }
  const key = `scratch/${scratchId()}/data.json`;
  const put = await deps.blobs.put(key, Buffer.from(JSON.stringify(result), 'utf8'));
  return { key, sha256: put.sha256, size: put.size, contentType: 'application/json' };
}

/** The workflow id (a blob-key-safe form), so the run's other scratch blobs sit beside this one. */
function scratchId(): string {
  let id: string | undefined;
  try {
    id = Context.current().info.workflowExecution?.workflowId;
  } catch {
    id = undefined;
  }
  id ??= `adhoc-${Date.now()}`;
  return id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[^A-Za-z0-9]/, 'x');
}

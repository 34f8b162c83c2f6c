import { ApplicationFailure } from '@temporalio/common';
import { SealedValueError, unsealHeaderVariables } from '../security/sealed.ts';
import { GraphqlEndpointError, GraphqlResponseError, runGraphqlQuery } from '../connectors/graphql/client.ts';
import type { BlobRef } from '../core/blob.ts';
import { innerError } from '../core/errors.ts';
import { type GenerateInput, graphqlRequestOf } from '../core/generate.ts';
import type { RunContext } from '../core/run.ts';
import { type ActivityDeps, outboundOf, type ResolvedActivityDeps } from './deps.ts';
import { callerFailure } from '../core/failures.ts';
import { atLocation, contextOf } from './locations.ts';
import { scratchRunId } from './scratch.ts';

export interface LoadDataInput {
  run: RunContext;
  data: GenerateInput['data'];
}

export function loadDataActivity(deps: ResolvedActivityDeps) {
  /** Resolves the data file and checks it is JSON, so a bad file fails here with a clear cause rather
   *  than deep inside the merge. For GraphQL, runs the query and keeps its `data` as a scratch blob. */
  return async function loadData(input: LoadDataInput): Promise<BlobRef> {
    const { data, run } = input;
    if (data.loadMethod === 'GraphQL') return loadGraphql(deps, run.subscriptionId, data);
    const need = { method: data.loadMethod, capability: 'readData', field: 'data.loadMethod' } as const;
    const ref = await atLocation(deps.locations, need, (l) => l.readData!(contextOf(run, data.loadMethod), data.urn), run.callerDeadline);
    const bytes = await deps.blobs.get(ref.key);
    try {
      JSON.parse(Buffer.from(bytes).toString('utf8'));
    } catch (err) {
      throw callerFailure('DATA_INVALID', `data.urn ${data.urn} is not valid JSON: ${(err as Error).message}`);
    }
    return ref;
  };
}

/** GraphQL errors and an unreachable or refused endpoint are the caller's: DATA_NOT_FOUND, one inner
 *  error per message of the server. The result goes to scratch/<workflowId>/data.json. */
async function loadGraphql(deps: ActivityDeps, subscriptionId: string, data: GenerateInput['data']): Promise<BlobRef> {
  // `header` variables arrive sealed (security/sealed.ts); they are opened only here, for the request.
  let variables = data.variables;
  try {
    if (variables) variables = await unsealHeaderVariables(deps.db, subscriptionId, variables);
  } catch (err) {
    if (err instanceof SealedValueError)
      throw ApplicationFailure.create({ type: 'SEALED_VALUE', message: err.message, nonRetryable: true });
    throw err;
  }
  const request = graphqlRequestOf({ ...data, variables });
  if (request.errors.length > 0) {
    throw callerFailure(
      'VALIDATION_ERROR',
      request.errors.join('; '),
      request.errors.map((m) => innerError('VALIDATION_ERROR', m)),
    );
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
  const key = `scratch/${scratchRunId()}/data.json`;
  const put = await deps.blobs.put(key, Buffer.from(JSON.stringify(result), 'utf8'));
  return { key, sha256: put.sha256, size: put.size, contentType: 'application/json' };
}

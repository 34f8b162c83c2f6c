// GraphQL data for generation (spec 4.5, 4.8: data.loadMethod GraphQL). The query runs with graphql-request,
// whose `fetch` is the project's guarded client (connectors/http/safe-fetch.ts): addresses checked at
// connect time against the allow-list, no redirects followed, response size and time capped.
import { ClientError, GraphQLClient } from 'graphql-request';
import type { OutboundPolicy } from '../http/address-policy.ts';
import { OutboundBlockedError, OutboundError, safeFetch } from '../http/safe-fetch.ts';

export interface GraphqlQueryOptions {
  endpoint: string;
  query: string;
  variables?: Record<string, unknown>;
  /** Extra request headers, e.g. Authorization (from data.variables of type `header`). */
  headers?: Record<string, string>;
  policy: OutboundPolicy;
  timeoutMs: number;
  maxResponseBytes: number;
}

/** The server answered, with GraphQL errors (or no data): the caller's query or variables are wrong. */
export class GraphqlResponseError extends Error {
  override name = 'GraphqlResponseError';
  /** The server's messages, one per GraphQL error. */
  readonly messages: string[];
  constructor(message: string, messages: string[]) {
    super(message);
    this.messages = messages;
  }
}

/** The endpoint could not be reached or did not answer as a GraphQL server (blocked address, refused
 *  connection, time-out, too large, redirect, HTTP error without a GraphQL body). */
export class GraphqlEndpointError extends Error {
  override name = 'GraphqlEndpointError';
}

/** A WHATWG fetch on top of safeFetch, enough for graphql-request (POST/GET, text bodies). */
export function guardedFetch(opts: Pick<GraphqlQueryOptions, 'policy' | 'timeoutMs' | 'maxResponseBytes'>): typeof fetch {
  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string') throw new TypeError('guardedFetch sends text bodies only');
    const res = await safeFetch(url, {
      policy: opts.policy,
      method: init?.method ?? 'GET',
      headers,
      ...(typeof body === 'string' ? { body } : {}),
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: opts.maxResponseBytes,
      redirect: 'manual',
      ...(init?.signal ? { signal: init.signal } : {}),
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
    }
    // A Response cannot carry a body with these statuses.
    const empty = res.status === 204 || res.status === 304 || (res.status >= 100 && res.status < 200);
    return new Response(empty ? null : new Uint8Array(res.body), { status: res.status, headers: out });
  };
}

/** Runs the query and returns its `data` object; throws GraphqlResponseError or GraphqlEndpointError. */
export async function runGraphqlQuery(opts: GraphqlQueryOptions): Promise<Record<string, unknown>> {
  const client = new GraphQLClient(opts.endpoint, {
    fetch: guardedFetch(opts),
    headers: { 'user-agent': 'docgen', ...opts.headers },
    method: 'POST',
  });
  let data: unknown;
  try {
    const res = await client.rawRequest<Record<string, unknown>>(opts.query, opts.variables ?? {});
    data = res.data;
  } catch (err) {
    if (err instanceof ClientError) {
      const errors = err.response.errors ?? [];
      if (errors.length > 0) {
        const messages = errors.map((e) => String(e.message));
        throw new GraphqlResponseError(`the GraphQL server at ${opts.endpoint} answered with errors: ${messages.join('; ')}`, messages);
      }
      throw new GraphqlEndpointError(
        `the GraphQL server at ${opts.endpoint} answered HTTP ${err.response.status} without a GraphQL result`,
      );
    }
    if (err instanceof OutboundBlockedError || err instanceof OutboundError) {
      throw new GraphqlEndpointError(`the GraphQL endpoint ${opts.endpoint} cannot be reached: ${err.message}`);
    }
    const e = err as NodeJS.ErrnoException;
    throw new GraphqlEndpointError(
      `the GraphQL endpoint ${opts.endpoint} failed: ${e.code ? `${e.code} ` : ''}${e.message || String(err)}`,
    );
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new GraphqlResponseError(`the GraphQL server at ${opts.endpoint} returned no data`, ['the response has no data object']);
  }
  return data as Record<string, unknown>;
}

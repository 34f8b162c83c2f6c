// A Salesforce REST session for a crm connection, through @jsforce/jsforce-node: the token comes from the
// connection's flow (client credentials, or a JWT bearer assertion signed with its private key), is cached
// per connection (and per credentials, so a PUT with new secrets takes effect at once), and is renewed
// once when Salesforce answers 401 INVALID_SESSION_ID (jsforce's refresh delegate re-runs the flow and
// replays the request). Token refusals become LocationError CONNECTION_ERROR; everything else the caller
// maps (crmFailure). Binary fields are downloaded as a stream (jsforce's own blob() reads the whole answer
// into memory as well), with the same one renewal on 401.
import { createPrivateKey, createSign } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Connection } from '@jsforce/jsforce-node';
import { LocationError } from '../location.ts';
import type { OpenedConnection } from '../connections.ts';
import { type CrmSettings, loginUrlProblem } from './connection.ts';

interface TokenResponse {
  access_token: string;
  instance_url: string;
  id: string;
}

interface Cached {
  accessToken: string;
  instanceUrl: string;
}

const cache = new Map<string, Cached>();

/** The connection's version changes whenever it is replaced (PUT), so new credentials take effect at once. */
function cacheKey(c: OpenedConnection): string {
  return c.version;
}

/** A JWT bearer assertion (RS256): iss = client id, sub = username, aud = the login URL, 3 minutes. */
export function jwtAssertion(settings: CrmSettings, privateKeyPem: string, now = Date.now()): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = b64({ alg: 'RS256', typ: 'JWT' });
  const body = b64({ iss: settings.clientId, sub: settings.username, aud: settings.loginUrl, exp: Math.floor(now / 1000) + 180 });
  const signature = createSign('RSA-SHA256').update(`${head}.${body}`).sign(createPrivateKey(privateKeyPem)).toString('base64url');
  return `${head}.${body}.${signature}`;
}

/** jsforce, loaded on first use: a process without crm connections never loads it (about 12 MB of heap,
 *  docs/decisions/034-the-memory-of-docgen-start.md). */
const jsforce = () => import('@jsforce/jsforce-node');

const REFUSALS = /^(invalid_|unauthorized_client|unsupported_grant_type|inactive_|ERROR_HTTP_4\d\d)/;

async function requestToken(c: OpenedConnection, settings: CrmSettings, allowedHosts: readonly string[]): Promise<Cached> {
  const { OAuth2 } = await jsforce();
  const oauth2 = new OAuth2({
    loginUrl: settings.loginUrl,
    clientId: settings.clientId,
    ...(c.secrets.clientSecret ? { clientSecret: c.secrets.clientSecret } : {}),
  });
  let res: TokenResponse;
  try {
    res = (await oauth2.requestToken(
      settings.flow === 'client_credentials'
        ? { grant_type: 'client_credentials' }
        : { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwtAssertion(settings, c.secrets.privateKey ?? '') },
    )) as unknown as TokenResponse;
  } catch (err) {
    const e = err as Error;
    if (REFUSALS.test(e.name)) {
      throw new LocationError(
        'CONNECTION_ERROR',
        `Salesforce refused the crm connection's credentials (${e.name}: ${e.message}); update them with PUT /common/connection/crm`,
        [{ error: e.name, error_description: e.message }],
      );
    }
    throw err;
  }
  // A token endpoint that answers something else than JSON (a proxy's HTML page) is the connection's
  // problem, said at once, not a TypeError retried until the caller's 504.
  if (!res || typeof res !== 'object' || typeof res.access_token !== 'string' || typeof res.instance_url !== 'string') {
    const head = typeof res === 'string' ? `: ${JSON.stringify((res as string).slice(0, 80))}` : '';
    throw new LocationError(
      'CONNECTION_ERROR',
      `the crm connection's token endpoint (${settings.loginUrl}) answered without an access token and instance URL: not JSON as Salesforce answers${head}; check the connection's loginUrl (PUT /common/connection/crm)`,
    );
  }
  const problem = loginUrlProblem(res.instance_url, allowedHosts);
  if (problem)
    throw new LocationError(
      'CONNECTION_ERROR',
      `the crm connection's org answered with an instance URL this service may not call: ${problem}`,
    );
  return { accessToken: res.access_token, instanceUrl: res.instance_url };
}

/** What `work` gets beside the jsforce Connection. */
export interface CrmSession {
  /** A binary field of a record (e.g. ContentVersion VersionData) as a stream, read as it arrives. */
  blob(sobject: string, id: string, field: string): Promise<Readable>;
}

/** Time limit of a binary download (connect to last byte). */
const DOWNLOAD_TIMEOUT_MS = 300_000;

/** Runs `work` with an authorized jsforce Connection for the opened crm connection. A refusal while
 *  renewing the token is the LocationError CONNECTION_ERROR (jsforce would wrap it in a plain Error). */
export async function withCrm<T>(
  c: OpenedConnection,
  opts: { apiVersion: string; loginHosts: readonly string[] },
  work: (conn: Connection, session: CrmSession) => Promise<T>,
): Promise<T> {
  const settings = c.settings as unknown as CrmSettings;
  const problem = loginUrlProblem(settings.loginUrl, opts.loginHosts);
  if (problem) throw new LocationError('CONNECTION_ERROR', `the crm connection's loginUrl ${problem}`);
  const key = cacheKey(c);
  let session = cache.get(key);
  if (!session) {
    session = await requestToken(c, settings, opts.loginHosts);
    cache.set(key, session);
  }
  let refusal: LocationError | undefined;
  const { Connection } = await jsforce();
  const conn = new Connection({
    loginUrl: settings.loginUrl,
    instanceUrl: session.instanceUrl,
    accessToken: session.accessToken,
    version: opts.apiVersion,
    refreshFn: (self, callback) => {
      cache.delete(key);
      requestToken(c, settings, opts.loginHosts).then(
        (fresh) => {
          cache.set(key, fresh);
          self.instanceUrl = fresh.instanceUrl;
          callback(undefined, fresh.accessToken);
        },
        (err: unknown) => {
          if (err instanceof LocationError) refusal = err;
          callback(err as Error);
        },
      );
    },
  });
  const binary: CrmSession = {
    async blob(sobject, id, field) {
      for (let renewed = false; ; renewed = true) {
        const url = `${conn.instanceUrl}/services/data/v${opts.apiVersion}/sobjects/${encodeURIComponent(sobject)}/${encodeURIComponent(id)}/${encodeURIComponent(field)}`;
        const res = await fetch(url, {
          headers: { authorization: `Bearer ${conn.accessToken}` },
          redirect: 'error',
          signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS),
        });
        if (res.ok && res.body) return Readable.fromWeb(res.body as never);
        const text = await res.text().catch(() => '');
        if (res.status === 401 && !renewed) {
          cache.delete(key);
          const fresh = await requestToken(c, settings, opts.loginHosts);
          cache.set(key, fresh);
          conn.accessToken = fresh.accessToken;
          conn.instanceUrl = fresh.instanceUrl;
          continue;
        }
        // Salesforce's error body: [{errorCode, message}]; 5xx and 429 are transient for the caller.
        let first: { errorCode?: string; message?: string } | undefined;
        try {
          first = (JSON.parse(text) as { errorCode?: string; message?: string }[])[0];
        } catch {
          first = undefined;
        }
        const errorCode =
          res.status >= 500 || res.status === 429 ? `ERROR_HTTP_${res.status}` : (first?.errorCode ?? `ERROR_HTTP_${res.status}`);
        throw Object.assign(new Error(first?.message ?? `HTTP ${res.status}`), { errorCode, data: first ? [first] : undefined });
      }
    },
  };
  try {
    return await work(conn, binary);
  } catch (err) {
    if (refusal) throw refusal;
    throw err;
  }
}

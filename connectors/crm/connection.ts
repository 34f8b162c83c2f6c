// The crm connection (PUT /v1/common/connection/crm): a Salesforce org reached with an External Client
// App / Connected App, either by the client-credentials flow (clientId + clientSecret, the app's run-as
// user) or by the JWT bearer flow (clientId + username + the RSA private key whose certificate is on the
// app). The login URL is checked against CRM_LOGIN_HOSTS (a service setting): a tenant can never make the
// service call an arbitrary host. Secrets (clientSecret, privateKey) are sealed at rest and never returned.
import { createPrivateKey } from 'node:crypto';
import Type from 'typebox';
import { type InnerError, innerError } from '../../core/errors.ts';
import type { ConnectionKind } from '../connections.ts';
import { crmSettings } from './settings.ts';
import { valuesOf } from '../../core/settings.ts';

export const CrmConnectionBody = Type.Object(
  {
    loginUrl: Type.String({
      description:
        "The org's login URL, e.g. https://login.salesforce.com, https://test.salesforce.com or https://<domain>.my.salesforce.com. Its host must be one the service allows (CRM_LOGIN_HOSTS).",
    }),
    clientId: Type.String({ description: 'Consumer key of the External Client App / Connected App' }),
    clientSecret: Type.Optional(Type.String({ description: 'Client-credentials flow: the consumer secret (write-only, sealed at rest)' })),
    username: Type.Optional(Type.String({ description: 'JWT bearer flow: the Salesforce username the service acts as' })),
    privateKey: Type.Optional(
      Type.String({
        description: 'JWT bearer flow: PEM RSA private key whose certificate is uploaded to the app (write-only, sealed at rest)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Whether a login (or instance) URL names a host the service allows. Entries: `host`, `host:port`,
 *  `*.domain` (any subdomain), each https only; an entry spelled `http://host:port` also allows plain
 *  http to exactly that host and port (local test servers). */
export function loginUrlProblem(raw: string, allowed: readonly string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.username || url.password || url.search || url.hash) return 'must not carry credentials, a query or a fragment';
  if (url.pathname !== '/' && url.pathname !== '') return 'must be the origin only (e.g. https://login.salesforce.com)';
  const host = url.host.toLowerCase();
  const ok = allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    if (!e) return false;
    if (e.startsWith('http://')) return url.protocol === 'http:' && host === e.slice('http://'.length).replace(/\/+$/, '');
    if (url.protocol !== 'https:') return false;
    const h = e.replace(/^https:\/\//, '').replace(/\/+$/, '');
    if (h.startsWith('*.')) return host.endsWith(h.slice(1)) && host.length > h.length - 1;
    // host includes a non-default port: an entry without one allows the standard https port only.
    return host === h;
  });
  return ok ? undefined : `host ${url.host} is not one this service may call (CRM_LOGIN_HOSTS: ${allowed.join(', ')})`;
}

export interface CrmSettings {
  loginUrl: string;
  clientId: string;
  flow: 'client_credentials' | 'jwt_bearer';
  username?: string;
}

export const crmConnection: ConnectionKind = {
  kind: 'crm',
  body: CrmConnectionBody,
  parse(body, connectorSettings) {
    const errors: InnerError[] = [];
    const str = (k: string) => (typeof body[k] === 'string' ? (body[k] as string).trim() : undefined);
    const problem = (field: string, message: string) => errors.push(innerError('VALIDATION_ERROR', `connection.${field} ${message}`));
    for (const k of Object.keys(body)) {
      if (!['loginUrl', 'clientId', 'clientSecret', 'username', 'privateKey'].includes(k)) problem(k, 'is not a field of a crm connection');
    }
    const loginUrl = str('loginUrl');
    const clientId = str('clientId');
    const clientSecret = str('clientSecret');
    const username = str('username');
    const privateKey = str('privateKey');
    if (!loginUrl) problem('loginUrl', 'is required (e.g. https://login.salesforce.com)');
    else {
      const why = loginUrlProblem(loginUrl, valuesOf(crmSettings, connectorSettings).crmLoginHosts);
      if (why) problem('loginUrl', why);
    }
    if (!clientId) problem('clientId', 'is required (the consumer key of the app)');
    if (clientSecret && (username || privateKey)) {
      problem(
        'clientSecret',
        'and connection.username/privateKey are two different flows: give clientSecret (client credentials) or username with privateKey (JWT bearer)',
      );
    } else if (!clientSecret && !(username && privateKey)) {
      if (username && !privateKey) problem('privateKey', 'is required with connection.username (JWT bearer flow)');
      else if (privateKey && !username) problem('username', 'is required with connection.privateKey (JWT bearer flow)');
      else problem('clientSecret', 'is required, or connection.username with connection.privateKey (JWT bearer flow)');
    }
    if (privateKey) {
      try {
        const key = createPrivateKey(privateKey);
        if (key.asymmetricKeyType !== 'rsa')
          problem('privateKey', 'must be an RSA key (Salesforce signs JWT bearer assertions with RS256)');
      } catch {
        problem('privateKey', 'is not a PEM private key');
      }
    }
    if (errors.length > 0) return { errors };
    const settings: CrmSettings = {
      loginUrl: new URL(loginUrl!).origin,
      clientId: clientId!,
      flow: clientSecret ? 'client_credentials' : 'jwt_bearer',
    };
    if (username) settings.username = username;
    const secrets: Record<string, string> = clientSecret ? { clientSecret } : { privateKey: privateKey! };
    return { settings: settings as unknown as Record<string, unknown>, secrets };
  },
};

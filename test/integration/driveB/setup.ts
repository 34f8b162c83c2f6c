// Shared setup of the DriveB suites: the local Google server, a stack pointed at it (DRIVEB_API_URL,
// DRIVEB_TOKEN_URL), and an HTTP(S) proxy environment that routes anything meant for another host to the
// fake's proxy side, where it is recorded as foreign instead of leaving the machine.
import { expect } from 'vitest';
import type { Credentials } from '../../../api/auth/credentials.ts';
import { type GoogleFake, startGoogleFake } from '../../fakes/google/server.ts';
import { client } from '../../support/http.ts';

export type Api = ReturnType<typeof client>;

const PROXY_VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'] as const;

/** Starts the fake with two OAuth users (ada, eve) and sets the proxy variables of this test process. */
export async function startFakeGoogle(): Promise<{
  fake: GoogleFake;
  restoreEnv(): void;
  settings: { driveBApiUrl: string; driveBTokenUrl: string };
}> {
  const fake = await startGoogleFake();
  fake.addOAuthClient({ clientId: 'client-a', clientSecret: 'secret-a', refreshToken: 'refresh-ada', user: 'ada@example.com' });
  fake.addOAuthClient({ clientId: 'client-e', clientSecret: 'secret-e', refreshToken: 'refresh-eve', user: 'eve@example.com' });
  const saved = Object.fromEntries(PROXY_VARS.map((k) => [k, process.env[k]]));
  process.env.HTTP_PROXY = fake.url;
  process.env.HTTPS_PROXY = fake.url;
  process.env.NO_PROXY = '127.0.0.1,localhost';
  return {
    fake,
    settings: { driveBApiUrl: `${fake.url}/`, driveBTokenUrl: `${fake.url}/token` },
    restoreEnv() {
      for (const k of PROXY_VARS) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    },
  };
}

export const ADA = { clientId: 'client-a', clientSecret: 'secret-a', refreshToken: 'refresh-ada' };
export const EVE = { clientId: 'client-e', clientSecret: 'secret-e', refreshToken: 'refresh-eve' };

export async function connect(api: Api, connection: Record<string, unknown>): Promise<void> {
  const res = await api.call('PUT', '/common/connection/driveB', { json: { connection } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
}

export function apiOf(creds: Credentials): Api {
  return client(creds);
}

/** Every request the fake served came to its own host, and nothing reached its proxy side. */
export function expectOnlyConfiguredHost(fake: GoogleFake): void {
  expect(fake.foreign).toEqual([]);
  expect([...new Set(fake.requests.map((r) => r.host))]).toEqual([new URL(fake.url).host]);
}

export function driveBBody(
  template: { urn: string; fileFormat: string; loadMethod?: string },
  data: { urn: string; loadMethod?: string },
  document: Record<string, unknown>,
) {
  return {
    template: { loadMethod: 'DriveB', ...template },
    data: { loadMethod: 'Storage', ...data },
    document: {
      name: 'letter',
      fileFormat: template.fileFormat,
      deliveryMethod: 'DriveB',
      path: '',
      timezone: 'Europe/Paris',
      locale: 'en-GB',
      ...document,
    },
  };
}

// Development credentials: a subscription (created on first use, by name), its first user, a fresh API
// key and a bearer token. Used by `docgen credentials` and the loopback-only admin route.
import type { Config } from '../../config/env.ts';
import { createApiKey, ensureFirstUser, ensureSubscription } from '../../store/accounts.ts';
import type { Db } from '../../store/db.ts';
import { issueAccessToken } from '../../security/tokens.ts';

export interface Credentials {
  baseUrl: string;
  apiKey: string;
  accessToken: string;
  subscriptionId: string;
  userId: string;
}

export const DEFAULT_SUBSCRIPTION = 'default';

export async function issueCredentials(
  db: Db,
  config: Config,
  baseUrl: string,
  subscriptionName = DEFAULT_SUBSCRIPTION,
): Promise<Credentials> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/i.test(subscriptionName)) {
    throw new Error('subscription name: letters, digits and dashes, 1-63 characters');
  }
  const sub = await ensureSubscription(db, subscriptionName);
  const user = await ensureFirstUser(db, sub);
  const apiKey = await createApiKey(db, user);
  const accessToken = await issueAccessToken(db, config, { userId: user.id, subscriptionId: sub.id, name: user.name, email: user.email });
  return { baseUrl: `${baseUrl}/v1`, apiKey, accessToken, subscriptionId: sub.id, userId: user.id };
}

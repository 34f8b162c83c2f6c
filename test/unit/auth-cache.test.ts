import { describe, expect, it } from 'vitest';
import { AuthCache } from '../../api/plugins/auth.ts';

const who = { subscriptionId: 's', userId: 'u' };

describe('AuthCache (verified bearer token + API key pairs)', () => {
  it('keys by the exact pair', () => {
    expect(AuthCache.key('k', 't')).toBe(AuthCache.key('k', 't'));
    expect(AuthCache.key('k', 't')).not.toBe(AuthCache.key('k', 't '));
    expect(AuthCache.key('k', 't')).not.toBe(AuthCache.key('kt', ''));
    expect(AuthCache.key('k', 't')).not.toContain('t');
  });

  it('forgets an entry after its time, and never keeps one past the token expiry', () => {
    const c = new AuthCache(30_000, 10);
    c.set('a', who, undefined, 1_000);
    expect(c.get('a', 30_999)).toMatchObject(who);
    expect(c.get('a', 31_000)).toBeUndefined();
    c.set('b', who, 5_000, 1_000); // the token expires at 5 s
    expect(c.get('b', 4_999)).toMatchObject(who);
    expect(c.get('b', 5_000)).toBeUndefined();
    c.set('c', who, 1_000, 1_000); // already expired: not kept
    expect(c.size).toBe(0);
  });

  it('keeps at most its bound, evicting the least recently used', () => {
    const c = new AuthCache(30_000, 2);
    c.set('a', who, undefined, 0);
    c.set('b', who, undefined, 0);
    expect(c.get('a', 1)).toBeDefined(); // a is now the most recent
    c.set('c', who, undefined, 2);
    expect(c.size).toBe(2);
    expect(c.get('b', 3)).toBeUndefined();
    expect(c.get('a', 3)).toBeDefined();
    expect(c.get('c', 3)).toBeDefined();
  });

  it('remembers nothing when turned off (AUTH_CACHE_SECONDS=0)', () => {
    const c = new AuthCache(0, 10);
    c.set('a', who, undefined, 0);
    expect(c.get('a', 0)).toBeUndefined();
  });
});

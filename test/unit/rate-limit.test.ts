// The token buckets of api/plugins/rate-limit.ts on a fake clock: refill, Retry-After, the bound on
// memory under a flood of new keys, and how client addresses are counted.
import { describe, expect, it } from 'vitest';
import { clientKey, TokenBuckets } from '../../api/plugins/rate-limit.ts';

describe('TokenBuckets', () => {
  it('allows the burst, then one request per refill interval, and says how long to wait', () => {
    let t = 0;
    const b = new TokenBuckets(60, 3, 100, () => t);
    expect([b.take('k'), b.take('k'), b.take('k')]).toEqual([undefined, undefined, undefined]);
    expect(b.take('k')).toBe(1);
    expect(b.wait('k')).toBe(1);
    t += 500;
    expect(b.take('k')).toBe(1); // half a token is not a request
    t += 500;
    expect(b.take('k')).toBeUndefined();
    expect(b.take('other')).toBeUndefined();
    // wait() does not spend: a key it has never seen is not even stored.
    expect(b.wait('never')).toBeUndefined();
    expect(b.size).toBe(2);
  });

  it('holds at most maxKeys under a flood of new keys; a key in use is not forgotten', () => {
    let t = 0;
    const b = new TokenBuckets(60, 3, 1_000, () => t);
    // A busy key, out of tokens.
    for (let i = 0; i < 3; i++) b.take('busy');
    expect(b.take('busy')).toBe(1);
    // Keys that sent one request each and are full again a few seconds later.
    for (let i = 0; i < 500; i++) b.take(`idle-${i}`);
    t += 3_000;
    // The busy key keeps sending (stays recently used), a flood of 100 000 new keys arrives.
    for (let i = 0; i < 100_000; i++) {
      b.take(`flood-${i}`);
      if (i % 100 === 0) b.take('busy');
      expect(b.size).toBeLessThanOrEqual(1_000);
    }
    // The busy key was never forgotten (it stayed among the most recently used), so it is still limited.
    expect(b.wait('busy')).toBeGreaterThanOrEqual(1);
  });
});

describe('clientKey', () => {
  it('counts IPv4 (also IPv4-mapped) by address and IPv6 by its /64', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:0:0:9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('2001:db8:1:2:3:4:192.0.2.1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });
});

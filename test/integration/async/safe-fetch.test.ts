// The guarded HTTP client against real local servers: loopback in every spelling is refused unless
// allow-listed, redirects are not followed blindly (and each hop is re-checked when they are), and
// responses are limited in size and time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedReason, outboundPolicy } from '../../../connectors/http/address-policy.ts';
import { OutboundBlockedError, OutboundError, safeFetch } from '../../../connectors/http/safe-fetch.ts';
import { signWebhook } from '../../../security/webhooks.ts';
import { verifyCallback } from '../../../client/webhooks.ts';
import { type Receiver, startReceiver } from './receiver.ts';

describe('address policy', () => {
  it('blocks every non-public range, in IPv4 and IPv6 spellings', () => {
    const blocked = [
      '127.0.0.1',
      '127.1.2.3',
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '169.254.0.1',
      '100.64.0.1',
      '100.127.255.254',
      '224.0.0.1',
      '239.255.255.250',
      '255.255.255.255',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::',
      '::127.0.0.1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fe80::1%eth0',
      'ff02::1',
      '[::1]',
    ];
    for (const ip of blocked) expect(blockedReason(ip), ip).toBeTruthy();
    for (const ip of ['8.8.8.8', '1.1.1.1', '100.128.0.1', '172.32.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '2002:808:808::']) {
      expect(blockedReason(ip), ip).toBeUndefined();
    }
    expect(blockedReason('169.254.169.254')).toContain('metadata');
    expect(blockedReason('::ffff:127.0.0.1')).toContain('embedded in an IPv6 address');
  });

  it('allow-lists hosts, wildcard domains, addresses and CIDRs, and rejects bad entries', () => {
    const p = outboundPolicy('localhost, *.internal.example, 10.1.0.0/16, 127.0.0.1, fd00::/8');
    expect(p.hostAllowed('LOCALHOST')).toBe(true);
    expect(p.hostAllowed('api.internal.example')).toBe(true);
    expect(p.hostAllowed('internal.example.com')).toBe(false);
    expect(p.addressAllowed('10.1.200.3')).toBe(true);
    expect(p.addressAllowed('10.2.0.1')).toBe(false);
    expect(p.addressAllowed('127.0.0.1')).toBe(true);
    expect(p.addressAllowed('127.0.0.2')).toBe(false);
    expect(p.addressAllowed('fd00::5')).toBe(true);
    expect(() => outboundPolicy('10.0.0.0/33')).toThrow(/prefix/);
    expect(() => outboundPolicy('http://x')).toThrow(/expected a host name/);
  });
});

describe('safeFetch against real servers', () => {
  let target: Receiver;
  let other: Receiver;
  const none = outboundPolicy('');
  const loopback = outboundPolicy('127.0.0.1');

  beforeAll(async () => {
    target = await startReceiver('127.0.0.1');
    other = await startReceiver('127.0.0.2');
  });
  afterAll(async () => {
    await target?.close();
    await other?.close();
  });

  it('refuses 127.0.0.1, [::ffff:127.0.0.1] and localhost unless allow-listed, before sending anything', async () => {
    const before = target.deliveries.length;
    for (const url of [
      `${target.url}/a`,
      `http://[::ffff:127.0.0.1]:${target.port}/a`,
      `http://[::ffff:7f00:1]:${target.port}/a`,
      `http://localhost:${target.port}/a`,
    ]) {
      await expect(safeFetch(url, { policy: none }), url).rejects.toBeInstanceOf(OutboundBlockedError);
    }
    expect(target.deliveries.length).toBe(before);
    const ok = await safeFetch(`${target.url}/a`, { policy: loopback });
    expect(ok.status).toBe(200);
    const mapped = await safeFetch(`http://[::ffff:127.0.0.1]:${target.port}/a`, { policy: loopback });
    expect(mapped.status).toBe(200);
    const byName = await safeFetch(`http://localhost:${target.port}/a`, { policy: outboundPolicy('localhost') });
    expect(byName.status).toBe(200);
  });

  it('returns a redirect instead of following it, and re-checks every hop when asked to follow', async () => {
    target.script('/hop', [
      { status: 302, headers: { location: `${other.url}/secret` } },
      { status: 307, headers: { location: `${other.url}/secret` } },
    ]);
    const manual = await safeFetch(`${target.url}/hop`, { policy: loopback, method: 'POST', body: '{}' });
    expect(manual.status).toBe(302);
    expect(manual.headers.location).toBe(`${other.url}/secret`);
    await expect(safeFetch(`${target.url}/hop`, { policy: loopback, redirect: 'follow' })).rejects.toBeInstanceOf(OutboundBlockedError);
    expect(other.at('/secret')).toHaveLength(0);
    // Allowed hops are followed, and credentials do not cross origins.
    target.script('/hop2', [{ status: 302, headers: { location: `${other.url}/fine` } }]);
    const followed = await safeFetch(`${target.url}/hop2`, {
      policy: outboundPolicy('127.0.0.1,127.0.0.2'),
      redirect: 'follow',
      headers: { authorization: 'Bearer x' },
    });
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${other.url}/fine`);
    expect(other.at('/fine')[0]?.headers.authorization).toBeUndefined();
  });

  it('limits the response size and the time', async () => {
    target.script('/big', [{ status: 200, body: 'x'.repeat(200_000) }]);
    await expect(safeFetch(`${target.url}/big`, { policy: loopback, maxResponseBytes: 100_000 })).rejects.toMatchObject({
      code: 'ETOOLARGE',
    });
    const silent = http.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      // The server never answers: only the client's time limit can end the request.
      const err = await safeFetch(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, {
        policy: loopback,
        timeoutMs: 300,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OutboundError);
      expect((err as OutboundError).code).toBe('ETIMEOUT');
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('refuses non-http schemes and credentials in the URL', async () => {
    await expect(safeFetch('file:///etc/passwd', { policy: loopback })).rejects.toMatchObject({ code: 'EBADURL' });
    await expect(safeFetch(`http://u:p@127.0.0.1:${target.port}/`, { policy: loopback })).rejects.toMatchObject({ code: 'EBADURL' });
  });
});

describe('Standard Webhooks signatures', () => {
  it('verifies what it signs, and nothing else', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    // Test vector of the Standard Webhooks specification.
    const body = '{"test": 2432232314}';
    expect(signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    const now = 1614265330 * 1000;
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    expect(verifyCallback(secret, headers, body, { now })).toBe(true);
    expect(verifyCallback(secret, headers, `${body} `, { now })).toBe(false);
    expect(verifyCallback(secret, headers, body, { now: now + 600_000 })).toBe(false);
    expect(verifyCallback('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', headers, body, { now })).toBe(false);
  });
});

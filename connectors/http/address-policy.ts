// Which addresses outbound HTTP may reach. Everything that is not a public unicast address is refused
// (loopback, private, link-local incl. the 169.254.169.254 metadata endpoint, CGNAT, multicast, reserved,
// documentation ranges, and the same ranges hidden in IPv4-mapped / NAT64 / 6to4 IPv6 forms), unless the
// deployment's allow-list names the host or a CIDR containing the address.
import { BlockList, isIP } from 'node:net';

const BLOCKED_V4: [string, number, string][] = [
  ['0.0.0.0', 8, 'this network (0/8)'],
  ['10.0.0.0', 8, 'private (10/8)'],
  ['100.64.0.0', 10, 'carrier-grade NAT (100.64/10)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local / cloud metadata (169.254/16)'],
  ['172.16.0.0', 12, 'private (172.16/12)'],
  ['192.0.0.0', 24, 'IETF protocol assignments (192.0.0/24)'],
  ['192.0.2.0', 24, 'documentation (192.0.2/24)'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private (192.168/16)'],
  ['198.18.0.0', 15, 'benchmarking (198.18/15)'],
  ['198.51.100.0', 24, 'documentation (198.51.100/24)'],
  ['203.0.113.0', 24, 'documentation (203.0.113/24)'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved / broadcast'],
];

const BLOCKED_V6: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (fc00::/7)'],
  ['fe80::', 10, 'link-local (fe80::/10)'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const v4Rules = BLOCKED_V4.map(([net, prefix, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv4');
  return { list, reason };
});
const v6Rules = BLOCKED_V6.map(([net, prefix, reason]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv6');
  return { list, reason };
});

/** The 16 bytes of an IPv6 address (any textual form, including a dotted IPv4 tail). */
function ipv6Bytes(address: string): number[] | undefined {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail?.[1]) {
    const parts = tail[1].split('.').map(Number);
    text = `${text.slice(0, -tail[1].length)}${(((parts[0] ?? 0) << 8) | (parts[1] ?? 0)).toString(16)}:${(((parts[2] ?? 0) << 8) | (parts[3] ?? 0)).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  const groups = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...rest];
  if (groups.length !== 8) return undefined;
  const bytes: number[] = [];
  for (const g of groups) {
    const n = parseInt(g, 16);
    if (!/^[0-9a-f]{1,4}$/i.test(g) || Number.isNaN(n)) return undefined;
    bytes.push(n >> 8, n & 0xff);
  }
  return bytes;
}

/** The IPv4 address an IPv6 address carries, when it is one of the forms that route to IPv4 anyway
 *  (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16). The deprecated IPv4-compatible
 *  form ::/96 is blocked outright. */
export function embeddedIpv4(address: string): string | undefined {
  const b = ipv6Bytes(address);
  if (!b) return undefined;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (o: number) => `${b[o]}.${b[o + 1]}.${b[o + 2]}.${b[o + 3]}`;
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** Why this address must not be reached, or undefined for a public unicast address. */
export function blockedReason(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return v4Rules.find((r) => r.list.check(bare, 'ipv4'))?.reason;
  if (family === 6) {
    const inner = embeddedIpv4(bare);
    if (inner) {
      const reason = blockedReason(inner);
      return reason ? `${reason}, embedded in an IPv6 address` : undefined;
    }
    return v6Rules.find((r) => r.list.check(bare, 'ipv6'))?.reason;
  }
  return 'not an IP address';
}

/** The OUTBOUND_ALLOW setting: host names (exact, or `*.example.com`), IP addresses and CIDRs. */
export interface OutboundPolicy {
  /** The entries as configured, kept so the policy can travel in a workflow input. */
  readonly entries: readonly string[];
  hostAllowed(hostname: string): boolean;
  addressAllowed(address: string): boolean;
}

export class AllowListError extends Error {
  override name = 'AllowListError';
}

export function outboundPolicy(entries: readonly string[] | string): OutboundPolicy {
  const list = (typeof entries === 'string' ? entries.split(',') : entries).map((e) => e.trim()).filter(Boolean);
  const cidrs = new BlockList();
  const hosts: string[] = [];
  const suffixes: string[] = [];
  for (const entry of list) {
    const [addr, prefixText] = entry.split('/');
    const bare = (addr ?? '').replace(/^\[|\]$/g, '');
    const family = isIP(bare);
    if (family) {
      const max = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? max : Number(prefixText);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new AllowListError(`${entry}: bad prefix length`);
      cidrs.addSubnet(bare, prefix, family === 4 ? 'ipv4' : 'ipv6');
    } else if (/^\*\.[a-z0-9.-]+$/i.test(entry)) {
      suffixes.push(entry.slice(1).toLowerCase());
    } else if (/^[a-z0-9.-]+$/i.test(entry) && prefixText === undefined) {
      hosts.push(entry.toLowerCase());
    } else {
      throw new AllowListError(`${entry}: expected a host name, *.domain, an IP address or a CIDR`);
    }
  }
  return {
    entries: list,
    hostAllowed(hostname) {
      const h = hostname.toLowerCase().replace(/\.$/, '');
      return hosts.includes(h) || suffixes.some((s) => h.endsWith(s));
    },
    addressAllowed(address) {
      const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
      const family = isIP(bare);
      if (family === 0) return false;
      if (cidrs.check(bare, family === 4 ? 'ipv4' : 'ipv6')) return true;
      const inner = family === 6 ? embeddedIpv4(bare) : undefined;
      return inner !== undefined && cidrs.check(inner, 'ipv4');
    },
  };
}

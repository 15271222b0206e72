import { isIP } from 'node:net';

/**
 * What a webhook may be sent to (spec 4.5, issue: SSRF defences): public unicast addresses
 * only. Pure: the URL check runs at registration, the address check again at each delivery
 * on what DNS answered, and the delivery connects to the address it checked.
 */

export type AddressClass =
  | 'public'
  | 'private'
  | 'loopback'
  | 'link-local'
  | 'unique-local'
  | 'multicast'
  | 'cgnat'
  | 'unspecified'
  | 'reserved';

type Range = [base: bigint, prefix: number, cls: AddressClass];

const v4 = (a: number, b: number, c: number, d: number) => BigInt(((a << 24) >>> 0) + (b << 16) + (c << 8) + d);

const V4_RANGES: Range[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'cgnat'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'reserved'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(198, 51, 100, 0), 24, 'reserved'],
  [v4(203, 0, 113, 0), 24, 'reserved'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function inRange(value: bigint, bits: number, [base, prefix]: Range): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

function parseV4(ip: string): bigint {
  return ip.split('.').reduce((n, part) => (n << 8n) + BigInt(Number(part)), 0n);
}

/** The 128 bits of an IPv6 address (isIP has validated it), with an embedded dotted IPv4 tail. */
function parseV6(ip: string): bigint {
  let text = ip.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = parseV4(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) + BigInt(parseInt(g, 16)), 0n);
}

function classifyV4(n: bigint): AddressClass {
  if (n === 0xffffffffn) return 'reserved';
  return V4_RANGES.find((r) => inRange(n, 32, r))?.[2] ?? 'public';
}

const V6_RANGES: Range[] = [
  [0xfc00n << 112n, 7, 'unique-local'],
  [0xfe80n << 112n, 10, 'link-local'],
  [0xfec0n << 112n, 10, 'private'],
  [0xff00n << 112n, 8, 'multicast'],
  [0x20010db8n << 96n, 32, 'reserved'],
];

function classifyV6(n: bigint): AddressClass {
  if (n === 0n) return 'unspecified';
  if (n === 1n) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address inside.
  if (n >> 32n === 0xffffn || n >> 32n === 0x64ff9bn << 64n) return classifyV4(n & 0xffffffffn);
  // 6to4 (2002:aabb:ccdd::/48) carries the IPv4 address it tunnels to.
  if (n >> 112n === 0x2002n) {
    const inner = classifyV4((n >> 80n) & 0xffffffffn);
    if (inner !== 'public') return inner;
  }
  const known = V6_RANGES.find((r) => inRange(n, 128, r));
  if (known) return known[2];
  // Only global unicast (2000::/3) is public; the rest (IPv4-compatible ::/96, discard, ...) is not routable.
  return n >> 125n === 1n ? 'public' : 'reserved';
}

/** The class of an IP address literal (IPv6 without brackets); null when it is not one. */
export function classifyAddress(ip: string): AddressClass | null {
  const family = isIP(ip.replace(/%.*$/, ''));
  if (family === 4) return classifyV4(parseV4(ip));
  if (family === 6) return classifyV6(parseV6(ip));
  return null;
}

/** Ports a public HTTPS receiver listens on; the development setting allows any. */
export const WEBHOOK_PORTS = [443, 8443] as const;

export interface UrlPolicy {
  /** The development setting: plain HTTP, private and loopback receivers, any port. */
  allowPrivate: boolean;
}

export type UrlCheck = { ok: true; url: URL; host: string; port: number } | { ok: false; reason: string };

/** Names that never resolve to a public receiver. */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$/;

/**
 * Whether `text` may be a webhook URL: HTTPS, no credentials, an allowed port, and a host
 * that is a public address or a dotted DNS name (resolved and checked again at delivery).
 * The URL parser normalises decimal, octal and hex IPv4 forms, so `https://2130706433/`
 * is classified as 127.0.0.1.
 */
export function checkWebhookUrl(text: string, policy: UrlPolicy): UrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'must be an absolute URL' };
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return { ok: false, reason: 'must be an https URL' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'must not carry credentials' };
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (!policy.allowPrivate && !(WEBHOOK_PORTS as readonly number[]).includes(port)) {
    return { ok: false, reason: `port must be one of ${WEBHOOK_PORTS.join(', ')}` };
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  if (host === '') return { ok: false, reason: 'must name a host' };
  const cls = classifyAddress(host);
  if (policy.allowPrivate) return { ok: true, url, host, port };
  if (cls !== null) return cls === 'public' ? { ok: true, url, host, port } : { ok: false, reason: `must not be a ${cls} address` };
  if (!host.includes('.') || LOCAL_NAME.test(host)) return { ok: false, reason: 'must be a public host name' };
  return { ok: true, url, host, port };
}

/** The address a delivery may connect to among what DNS answered: refused unless every one is public. */
export function pickPublicAddress(addresses: readonly string[], policy: UrlPolicy): { ok: true; address: string } | { ok: false; reason: string } {
  if (addresses.length === 0) return { ok: false, reason: 'the host did not resolve' };
  if (!policy.allowPrivate) {
    for (const a of addresses) {
      const cls = classifyAddress(a);
      if (cls !== 'public') return { ok: false, reason: `the host resolves to a ${cls ?? 'invalid'} address (${a})` };
    }
  }
  return { ok: true, address: addresses[0] };
}

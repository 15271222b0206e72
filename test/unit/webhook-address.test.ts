import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, classifyAddress, pickPublicAddress, type AddressClass } from '../../webhooks/address.ts';

const ADDRESSES: [string, AddressClass | null][] = [
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['100.63.255.255', 'public'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['10.0.0.1', 'private'],
  ['172.15.255.255', 'public'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link-local'],
  ['0.0.0.0', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:8.8.8.8', 'public'],
  ['64:ff9b::169.254.169.254', 'link-local'],
  ['2002:c0a8:0101::1', 'private'],
  ['::127.0.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2606:4700:4700::1111', 'public'],
  ['example.com', null],
];

describe('webhook address classifier', () => {
  it.each(ADDRESSES)('classifies %s as %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });
});

const STRICT = { allowPrivate: false };
const URLS: [string, string | null][] = [
  ['https://hooks.example.com/in', null],
  ['https://hooks.example.com:8443/in', null],
  ['https://hooks.example.com./in', null],
  ['https://8.8.8.8/in', null],
  ['http://hooks.example.com/in', 'https'],
  ['ftp://hooks.example.com/in', 'https'],
  ['hooks.example.com/in', 'absolute'],
  ['https://hooks.example.com:22/in', 'port'],
  ['https://127.0.0.1/in', 'loopback'],
  ['https://2130706433/in', 'loopback'],
  ['https://0x7f.0.0.1/in', 'loopback'],
  ['https://0177.0.0.1/in', 'loopback'],
  ['https://0x7f000001/in', 'loopback'],
  ['https://127.1/in', 'loopback'],
  ['https://127.0.0.1./in', 'loopback'],
  ['https://[::1]/in', 'loopback'],
  ['https://[::ffff:127.0.0.1]/in', 'loopback'],
  ['https://[::ffff:a9fe:a9fe]/in', 'link-local'],
  ['https://169.254.169.254/latest/meta-data', 'link-local'],
  ['https://100.100.100.200/', 'cgnat'],
  ['https://0.0.0.0/', 'unspecified'],
  ['https://[fd00::1]/', 'unique-local'],
  ['https://hooks.example.com@127.0.0.1/in', 'credentials'],
  ['https://user:pass@hooks.example.com/in', 'credentials'],
  ['https://127.0.0.1#@hooks.example.com/', 'loopback'],
  ['https://localhost/in', 'public host'],
  ['https://localhost./in', 'public host'],
  ['https://api.localhost/in', 'public host'],
  ['https://printer.local/in', 'public host'],
  ['https://intranet/in', 'public host'],
];

describe('webhook URL check', () => {
  it.each(URLS)('%s → %s', (url, refusal) => {
    const result = checkWebhookUrl(url, STRICT);
    if (refusal === null) expect(result.ok).toBe(true);
    else expect(result.ok ? 'accepted' : result.reason).toContain(refusal);
  });

  it('allows plain HTTP, loopback and any port only with the development setting', () => {
    const check = checkWebhookUrl('http://127.0.0.1:4567/in', { allowPrivate: true });
    expect(check).toMatchObject({ ok: true, host: '127.0.0.1', port: 4567 });
    expect(checkWebhookUrl('http://127.0.0.1:4567/in', STRICT).ok).toBe(false);
  });

  it('refuses a name that resolves to any non-public address, and picks the checked address', () => {
    expect(pickPublicAddress(['8.8.8.8'], STRICT)).toEqual({ ok: true, address: '8.8.8.8' });
    expect(pickPublicAddress(['8.8.8.8', '127.0.0.1'], STRICT)).toMatchObject({ ok: false, reason: expect.stringContaining('loopback') });
    expect(pickPublicAddress(['::ffff:192.168.0.1'], STRICT)).toMatchObject({ ok: false });
    expect(pickPublicAddress([], STRICT)).toMatchObject({ ok: false });
    expect(pickPublicAddress(['127.0.0.1'], { allowPrivate: true })).toEqual({ ok: true, address: '127.0.0.1' });
  });
});

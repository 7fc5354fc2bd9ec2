// Who a request to the relay command comes from behind proxies (TRUST_PROXY_HOPS): the address that many places
// from the right of X-Forwarded-For, never an entry the client wrote, for the per-client bounds and for the
// operators' loopback rule.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { networkPrefix } from '../src/door/clientIdentity';
import { clientAddress, createTillAccess } from '../src/server/tillAccess';
import { createTillTokens } from '../src/server/tillTokens';

const request = (remoteAddress: string, forwardedFor?: string): IncomingMessage =>
  ({
    socket: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as IncomingMessage;

const access = (trustProxyHops: number) =>
  createTillAccess({
    tokens: createTillTokens({ entries: [], shop: 'shop-a' }),
    storefrontOpen: false,
    public: false,
    opsToken: undefined,
    trustProxyHops,
  });

describe('the client a request comes from (TRUST_PROXY_HOPS)', () => {
  it('is the connecting address without trusted proxies, whatever X-Forwarded-For says', () => {
    expect(clientAddress(request('203.0.113.7', '127.0.0.1'), 0)).toBe('203.0.113.7');
  });

  it('is the entry the trusted proxy appended, not one the client wrote further left', () => {
    // the client sent "X-Forwarded-For: 127.0.0.1"; the proxy (10.0.0.2) appended the address it was reached from
    expect(clientAddress(request('10.0.0.2', '127.0.0.1, 198.51.100.4'), 1)).toBe('198.51.100.4');
    // two proxies: the outer one appended the client, the inner one the outer proxy
    expect(clientAddress(request('10.0.0.3', 'spoofed, 198.51.100.4, 10.0.0.2'), 2)).toBe('198.51.100.4');
  });

  it('never goes left of what the proxies wrote when fewer entries came than hops are trusted', () => {
    expect(clientAddress(request('10.0.0.2'), 1)).toBe('10.0.0.2');
    expect(clientAddress(request('10.0.0.2', '198.51.100.4'), 3)).toBe('198.51.100.4');
  });

  it("keeps per-client bounds apart by that address's network, so two shoppers behind one proxy are two clients", () => {
    const a = access(1);
    expect(a.clientId(request('10.0.0.2', '198.51.100.4'))).toEqual({
      id: 'ip:198.51.100.0/24',
      identified: false,
      network: 'ip:198.51.100.0/24',
    });
    expect(a.clientId(request('10.0.0.2', '203.0.113.5'))).toMatchObject({
      id: 'ip:203.0.113.0/24',
      identified: false,
    });
    // addresses of one network are one client: rotating within it buys nothing
    expect(a.clientId(request('10.0.0.2', '198.51.100.250'))).toEqual(a.clientId(request('10.0.0.2', '198.51.100.4')));
    expect(a.clientId(request('10.0.0.2', '2001:db8:7:9:1::5')).id).toBe('ip:2001:db8:7:9::/64');
  });

  it('names a till by its token, and counts its refusals on the network it came from, like any client of it', () => {
    const token = 'static-till-token-0a1b2c3d4e5f';
    const a = createTillAccess({
      tokens: createTillTokens({ entries: [{ name: 'front-1', token }], shop: 'shop-a' }),
      storefrontOpen: false,
      public: false,
      opsToken: undefined,
      trustProxyHops: 1,
    });
    const withToken = request('10.0.0.2', '198.51.100.4');
    withToken.headers.authorization = `Bearer ${token}`;
    expect(a.clientId(withToken)).toEqual({ id: 'till:front-1', identified: true, network: 'ip:198.51.100.0/24' });
    expect(a.clientId(request('10.0.0.2', '198.51.100.9')).network).toBe('ip:198.51.100.0/24');
  });

  it("opens the operators' routes (no OPS_TOKEN) to this machine only: a client writing 127.0.0.1 through a proxy is refused", () => {
    const a = access(1);
    expect(a.mayOperate(request('10.0.0.2', '127.0.0.1, 198.51.100.4'), 'metrics')).toBe(false);
    expect(access(0).mayOperate(request('198.51.100.4', '127.0.0.1'), 'metrics')).toBe(false);
    expect(access(0).mayOperate(request('127.0.0.1'), 'metrics')).toBe(true);
    expect(a.mayOperate(request('::1'), 'metrics')).toBe(true);
  });

  it('never takes a forwarded address for this machine: a client reaching the relay directly writes it itself', () => {
    // with one trusted hop, "X-Forwarded-For: 127.0.0.1" sent straight to the relay looks like a proxy's entry
    expect(access(1).mayOperate(request('10.0.0.2', '127.0.0.1'), 'metrics')).toBe(false);
    // a proxy on this machine connects from loopback for every client it forwards
    expect(access(0).mayOperate(request('127.0.0.1', '198.51.100.4'), 'metrics')).toBe(false);
    expect(access(1).mayOperate(request('127.0.0.1', '127.0.0.1'), 'metrics')).toBe(false);
    const other = (headers: Record<string, string>): IncomingMessage =>
      ({ socket: { remoteAddress: '127.0.0.1' }, headers }) as unknown as IncomingMessage;
    expect(access(0).mayOperate(other({ forwarded: 'for=127.0.0.1' }), 'metrics')).toBe(false);
    expect(access(0).mayOperate(other({ 'x-real-ip': '127.0.0.1' }), 'metrics')).toBe(false);
    expect(access(1).authorize(request('10.0.0.2', '127.0.0.1'), 'status')).toMatchObject({ status: 403 });
  });
});

describe('the network an anonymous client counts as', () => {
  it('is the /24 of an IPv4 address (also written IPv4-mapped) and the /64 of an IPv6 one', () => {
    expect(networkPrefix('203.0.113.77')).toBe('203.0.113.0/24');
    expect(networkPrefix('::ffff:203.0.113.77')).toBe('203.0.113.0/24');
    expect(networkPrefix('::ffff:cb00:714d')).toBe('203.0.113.0/24');
    expect(networkPrefix('2001:db8:1:2:aa::7')).toBe('2001:db8:1:2::/64');
    expect(networkPrefix('2001:DB8:1:2::')).toBe('2001:db8:1:2::/64');
    expect(networkPrefix('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(networkPrefix('::1')).toBe('0:0:0:0::/64');
    expect(networkPrefix('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    // not an address (a name the host gives): as it is
    expect(networkPrefix('till-7')).toBe('till-7');
  });
});

describe('guesses of OPS_TOKEN', () => {
  it('are bounded per client: past ten a minute /metrics is refused (429) before the token is compared, a right one too', async () => {
    const a = createTillAccess({
      tokens: createTillTokens({ entries: [], shop: 'shop-a' }),
      storefrontOpen: false,
      public: false,
      opsToken: 'ops-token-4b1e77c2d9',
      trustProxyHops: 1,
    });
    const asking = (from: string, token: string): IncomingMessage =>
      ({
        socket: { remoteAddress: '10.0.0.2' },
        headers: { 'x-forwarded-for': from, authorization: `Bearer ${token}` },
      }) as unknown as IncomingMessage;
    // rotating addresses within one network buys nothing
    for (let guess = 0; guess < 10; guess++)
      expect(await a.operate(asking(`198.51.100.${guess}`, `guess-${guess}`))).toBe(false);
    expect(await a.operate(asking('198.51.100.77', 'guess-10'))).toEqual({ retryAfterS: expect.any(Number) });
    expect(await a.operate(asking('198.51.100.77', 'ops-token-4b1e77c2d9'))).toEqual({
      retryAfterS: expect.any(Number),
    });
    // another network's operator is not held back
    expect(await a.operate(asking('203.0.113.9', 'ops-token-4b1e77c2d9'))).toBe(true);
  });
});

// Who a request comes from, once per request: a client the host identified (a till by its token: its own turn, and
// the tills' share of the upstream budget) or an anonymous one. An anonymous client named by an IP address is its
// network (/24 for IPv4, /64 for IPv6), so a flood that rotates addresses within one network is still one client.
// Every client also has the network it came from, where its refused requests are counted: whatever its token says,
// so the right token from a network past its refusal bound is refused like a wrong one.
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { ClientId } from './types';

/** A request's client as the door counts it. */
export interface Client {
  /** The client's name for its bounds, refusal count and upstream turn. */
  id: string;
  /** The host identified it (a till with a valid token): its reads go ahead of anonymous ones. */
  identified: boolean;
  /**
   * The network it came from, where its refusals are counted (refusalBounds.ts) before its token is looked at;
   * default `id`.
   */
  network?: string;
}

/** The eight 16-bit groups of an IPv6 address (with `::` expanded and a dotted IPv4 tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}

/**
 * The network an address belongs to: /24 for IPv4 (IPv4-mapped IPv6 too), /64 for IPv6; anything else as given.
 * @example networkPrefix('203.0.113.77') // '203.0.113.0/24'
 * @example networkPrefix('2001:db8:1:2:aa::7') // '2001:db8:1:2::/64'
 */
export function networkPrefix(address: string): string {
  const kind = isIP(address.split('%')[0]!);
  if (kind === 4) return `${address.split('.').slice(0, 3).join('.')}.0/24`;
  if (kind !== 6) return address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.0/24`;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/**
 * The door's view of the host's `clientId` (default: the connecting address): a string is an anonymous client
 * (grouped by its network when it is an address), `{ id, identified, network? }` as the host says (without
 * `network`, the connecting address's network).
 * @example const clientOf = clientResolver(options.clientId);
 * clientOf(req) // { id: '203.0.113.0/24', identified: false, network: '203.0.113.0/24' }
 */
export function clientResolver(
  clientId: ((req: IncomingMessage) => ClientId) | undefined,
): (req: IncomingMessage) => Client {
  return (req) => {
    const given = clientId ? clientId(req) : (req.socket.remoteAddress ?? 'unknown');
    if (typeof given === 'string') {
      const id = networkPrefix(given);
      return { id, identified: false, network: id };
    }
    const network = given.network ?? networkPrefix(req.socket.remoteAddress ?? 'unknown');
    return { id: given.id, identified: given.identified === true, network };
  };
}

// Which shop a hub request names: `{basePath}/shops/{shopId}/…`, the shop id one plain path segment (letters,
// digits, `.`, `_`, `-`; no percent-encoding, no braces: it also names the shop's Redis hash tag).
import { localUrl } from '../door/allowedPaths';

/** A shop id the hub accepts. @example SHOP_ID.test('shop-7f3a') // true */
export const SHOP_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export type ShopPath =
  | { ok: true; shopId: string; shopBase: string; rest: string }
  | { ok: false; rest: string; reason: string };

/**
 * The shop a URL names, the base path its relay is mounted at, and what follows; undefined outside `{basePath}/shops`.
 * @example parseShopPath('/api/shops/s1/relay/v1/feed', '/api') // { ok: true, shopId: 's1', shopBase:
 * '/api/shops/s1', rest: '/relay/v1/feed' }
 */
export function parseShopPath(url: string, basePath: string): ShopPath | undefined {
  const local = basePath === '' ? url : localUrl(url, basePath);
  if (local === undefined || !/^\/shops(?:[/?]|$)/.test(local)) return undefined;
  const after = local.slice('/shops'.length);
  const match = /^\/([^/?]*)(.*)$/s.exec(after);
  if (!match) return { ok: false, rest: after, reason: 'the path names no shop: use /shops/{shopId}/…' };
  const [, segment, rest] = match as unknown as [string, string, string];
  if (!SHOP_ID.test(segment) || segment === '.' || segment === '..') {
    return {
      ok: false,
      rest,
      reason: 'the shop id must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    };
  }
  return { ok: true, shopId: segment, shopBase: `${basePath}/shops/${segment}`, rest };
}

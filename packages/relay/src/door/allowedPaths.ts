// The only upstream paths the proxy serves, and the rules that keep a client from reaching anything else.
// Segments are checked raw and forwarded byte-for-byte: decoding and re-encoding could turn an innocent-looking
// request into another one (a dot segment, an extra '/'), so we only decode to look, never to forward.

import type { RouteName } from './types';

/** Which rate-limit class an upstream call counts against. */
type CallClass = 'list' | 'other';

/**
 * An allowed request: the upstream path (raw, as received) and the query to forward ('' or '?offset=…&limit=…').
 */
export interface AllowedRoute {
  ok: true;
  path: string;
  query: string;
  cls: CallClass;
  /** What it asks for, for authorize. */
  name: RouteName;
}

/** A refused request, with a reason a person can act on. */
export interface RouteRefusal {
  ok: false;
  status: 400 | 404;
  reason: string;
}

/** The path shapes the proxy forwards, for error messages. */
const ALLOWED_SHAPES = [
  '/v2/shop/coupons',
  '/v2/shop/coupons/{code}',
  '/v2/shop/issue-coupons/{code}',
  '/v2/shop/products/{no}/options',
  '/v2/shop/products/{no}/options/{no or code}',
] as const;

// RFC 3986 pchar: unreserved, sub-delims, ':' and '@', or a %XX escape. Everything else must arrive encoded.
const PCHAR = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*$/;
const PRODUCT_NO = /^[0-9]{1,15}$/;
// C0 controls (NUL included) and DEL, once decoded.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL = /[\u0000-\u001f\u007f]/;
// A decoded segment that still holds an escape of '.', '/', '\', NUL or '%' was encoded twice: a server that decodes
// again would see a dot segment or a separator we never checked.
const DOUBLE_ENCODED = /%(?:2e|2f|5c|00|25)/i;
const PAGING_VALUE = /^[0-9]{1,9}$/;

/** Why a single raw segment is unsafe, or undefined when it is fine. */
function segmentProblem(raw: string): string | undefined {
  if (raw === '') return 'empty path segments (// or a trailing /) are not allowed';
  if (!PCHAR.test(raw)) {
    if (raw.includes('\\')) return 'backslashes are not allowed in the path';
    if (/%(?![0-9A-Fa-f]{2})/.test(raw)) return 'the path has malformed percent-encoding';
    return 'the path has characters that must be percent-encoded';
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return 'the path has malformed percent-encoding (not UTF-8)';
  }
  // '%2F' inside a code is allowed, but not as a way to smuggle a dot segment: check the parts it would split into.
  if (decoded.split('/').some((part) => part === '.' || part === '..')) {
    return 'dot segments (. or ..), raw or percent-encoded, are not allowed';
  }
  if (decoded.includes('\\')) return 'backslashes, raw or percent-encoded, are not allowed';
  if (CONTROL.test(decoded)) return 'control characters (such as %00) are not allowed in the path';
  if (DOUBLE_ENCODED.test(decoded)) return 'double percent-encoding (such as %252e) is not allowed';
  return undefined;
}

/** offset and limit (digits only, first occurrence), in that order; everything else is dropped. */
function pagingQuery(rawQuery: string): string {
  const kept: { offset?: string; limit?: string } = {};
  for (const pair of rawQuery.split('&')) {
    const at = pair.indexOf('=');
    if (at < 0) continue;
    const name = pair.slice(0, at);
    const value = pair.slice(at + 1);
    if ((name === 'offset' || name === 'limit') && kept[name] === undefined && PAGING_VALUE.test(value)) {
      kept[name] = value;
    }
  }
  const parts: string[] = [];
  if (kept.offset !== undefined) parts.push(`offset=${kept.offset}`);
  if (kept.limit !== undefined) parts.push(`limit=${kept.limit}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** The call class and name of a shape made of raw segments, or undefined when it is not one we serve. */
function classOf(segments: readonly string[]): { cls: CallClass; name: RouteName } | undefined {
  const [v2, shop, resource, id, sub, last] = segments;
  if (v2 !== 'v2' || shop !== 'shop') return undefined;
  const n = segments.length;
  if (resource === 'coupons') {
    return n === 3 ? { cls: 'list', name: 'coupons' } : n === 4 ? { cls: 'other', name: 'coupon' } : undefined;
  }
  if (resource === 'issue-coupons') return n === 4 ? { cls: 'other', name: 'issuedCoupon' } : undefined;
  if (resource === 'products' && PRODUCT_NO.test(id ?? '') && sub === 'options') {
    if (n === 5) return { cls: 'list', name: 'productOptions' };
    if (n === 6 && last !== undefined) return { cls: 'other', name: 'productOption' };
  }
  return undefined;
}

/**
 * Matches a request URL (basePath already stripped, query included) against the served shapes.
 * @example matchAllowedPath('/v2/shop/coupons?offset=2&foo=1') // { ok: true, path: '/v2/shop/coupons', query:
 * '?offset=2', cls: 'list', name: 'coupons' }
 */
export function matchAllowedPath(url: string): AllowedRoute | RouteRefusal {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const rawQuery = q < 0 ? '' : url.slice(q + 1);
  const notServed: RouteRefusal = {
    ok: false,
    status: 404,
    reason: `this proxy only serves GET ${ALLOWED_SHAPES.join(', ')}`,
  };
  if (!path.startsWith('/')) return notServed;
  const segments = path.slice(1).split('/');
  for (const segment of segments) {
    const problem = segmentProblem(segment);
    if (problem) return { ok: false, status: 400, reason: problem };
  }
  const shape = classOf(segments);
  if (!shape) return notServed;
  return { ok: true, path, query: shape.cls === 'list' ? pagingQuery(rawQuery) : '', ...shape };
}

/**
 * The part of `url` the proxy is responsible for, with basePath stripped; undefined when the URL is outside it
 * (with no basePath, only '/v2' and '/v2/…' are claimed, so the proxy can sit in front of a dev server).
 * @example localUrl('/shop-api/v2/shop/coupons?limit=5', '/shop-api') // '/v2/shop/coupons?limit=5'
 */
export function localUrl(url: string, basePath: string): string | undefined {
  const prefix = basePath === '' ? '/v2' : basePath;
  if (!url.startsWith(prefix)) return undefined;
  const after = url.charAt(prefix.length);
  if (after !== '' && after !== '/' && after !== '?') return undefined;
  return basePath === '' ? url : url.slice(basePath.length);
}

/**
 * '/shop-api/' → '/shop-api'; throws for a basePath that does not start with '/'.
 * @example normalizeBasePath('/shop-api/', 'createShopRelay') // '/shop-api'
 */
export function normalizeBasePath(basePath: string, component: string): string {
  const trimmed = basePath.replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/')) {
    throw new TypeError(`${component}: basePath must start with '/' (got '${basePath}')`);
  }
  return trimmed;
}

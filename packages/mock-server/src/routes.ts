// Which /v2 endpoint a path names, and what the data holds for it. Pure: no HTTP, no auth, no limits.
import type { RouteKind } from './faults';
import type { MockData, WireRecord } from './types';

type Endpoint = 'auth' | 'coupons' | 'coupon' | 'couponIssues' | 'issuedCoupon' | 'options' | 'option' | 'unknown';

export interface Route {
  endpoint: Endpoint;
  kind: RouteKind;
  /** Decoded path parameters, in path order (coupon code; product_no and option segment; …). */
  params: string[];
  /** Decoded pathname (segments joined by '/'), or the raw pathname when decoding failed. */
  path: string;
  /** A segment was not valid percent-encoding: the answer is -10. */
  badEncoding: boolean;
}

export type Lookup = { error: number; detail?: string } | { item: WireRecord } | { list: WireRecord[] };

const KIND_OF: Record<Endpoint, RouteKind> = {
  auth: 'auth',
  coupons: 'list',
  couponIssues: 'list',
  options: 'list',
  coupon: 'item',
  issuedCoupon: 'item',
  option: 'item',
  unknown: 'other',
};

function endpointOf(s: string[]): { endpoint: Endpoint; params: string[] } {
  const [v2, area, resource, id, sub, last] = s;
  const n = s.length;
  if (v2 !== 'v2') return { endpoint: 'unknown', params: [] };
  if (n === 2 && area === 'auth') return { endpoint: 'auth', params: [] };
  if (area !== 'shop' || resource === undefined) return { endpoint: 'unknown', params: [] };
  if (resource === 'coupons') {
    if (n === 3) return { endpoint: 'coupons', params: [] };
    if (n === 4) return { endpoint: 'coupon', params: [id as string] };
    if (n === 5 && sub === 'issue-coupons') return { endpoint: 'couponIssues', params: [id as string] };
  }
  if (resource === 'issue-coupons' && n === 4) return { endpoint: 'issuedCoupon', params: [id as string] };
  if (resource === 'products' && sub === 'options') {
    if (n === 5) return { endpoint: 'options', params: [id as string] };
    if (n === 6) return { endpoint: 'option', params: [id as string, last as string] };
  }
  return { endpoint: 'unknown', params: [] };
}

/**
 * Parses a raw pathname. Segments are decoded one by one AFTER splitting on '/', so an encoded '/' (%2F) in a
 * coupon code stays inside its segment.
 * @example parseRoute('/v2/shop/coupons/%EB%B4%84%20%EC%84%B8%EC%9D%BC%2F10%25%3F%23%26').params // ['봄
 * 세일/10%?#&']
 */
export function parseRoute(rawPath: string): Route {
  const raw = rawPath.split('/').slice(1);
  // A trailing slash names the same resource; an empty segment elsewhere names nothing.
  if (raw.length > 1 && raw[raw.length - 1] === '') raw.pop();
  let segments: string[];
  try {
    segments = raw.map((segment) => decodeURIComponent(segment));
  } catch {
    return { endpoint: 'unknown', kind: 'other', params: [], path: rawPath, badEncoding: true };
  }
  const { endpoint, params } = segments.includes('')
    ? { endpoint: 'unknown' as const, params: [] }
    : endpointOf(segments);
  return { endpoint, kind: KIND_OF[endpoint], params, path: `/${segments.join('/')}`, badEncoding: false };
}

/** Codes compare as strings; numbers are accepted because tests may store malformed records. */
function sameCode(value: unknown, wanted: string): boolean {
  return (typeof value === 'string' || typeof value === 'number') && String(value) === wanted;
}

const notFound = (what: string): Lookup => ({ error: -11, detail: what });

function optionsOf(data: MockData, productNo: string): WireRecord[] | Lookup {
  const no = Number(productNo);
  if (!/^\d+$/.test(productNo) || !Number.isSafeInteger(no)) {
    return { error: -10, detail: 'product_no must be an integer' };
  }
  return data.products.get(no) ?? notFound(`product ${productNo}`);
}

/**
 * The option a segment names, as the real service decides: an all-digit segment that is some option's `no` wins;
 * otherwise an option whose `code` equals the segment. So code "12" is answered with option no 12 when one exists.
 */
function findOption(options: WireRecord[], segment: string): WireRecord | undefined {
  if (/^\d+$/.test(segment)) {
    const wanted = Number(segment);
    const byNo = options.find((option) => {
      const no = option.no;
      return (typeof no === 'number' || (typeof no === 'string' && no !== '')) && Number(no) === wanted;
    });
    if (byNo) return byNo;
  }
  return options.find((option) => sameCode(option.code, segment));
}

/**
 * What the data holds for a route (never called for 'auth' or 'unknown').
 * @example lookup(parseRoute('/v2/shop/coupons/WELCOME10'), data) // { item: { coupon_code: 'WELCOME10', … } }
 */
export function lookup(route: Route, data: MockData): Lookup {
  const [first = '', second = ''] = route.params;
  switch (route.endpoint) {
    case 'coupons':
      return { list: data.coupons };
    case 'coupon': {
      const item = data.coupons.find((coupon) => sameCode(coupon.coupon_code, first));
      return item ? { item } : notFound(`coupon ${first}`);
    }
    case 'couponIssues': {
      if (!data.coupons.some((coupon) => sameCode(coupon.coupon_code, first))) return notFound(`coupon ${first}`);
      return { list: data.issuedCoupons.filter((issued) => sameCode(issued.coupon_code, first)) };
    }
    case 'issuedCoupon': {
      const item = data.issuedCoupons.find((issued) => sameCode(issued.coupon_issue_code, first));
      return item ? { item } : notFound(`issued coupon ${first}`);
    }
    case 'options': {
      const options = optionsOf(data, first);
      return Array.isArray(options) ? { list: options } : options;
    }
    case 'option': {
      const options = optionsOf(data, first);
      if (!Array.isArray(options)) return options;
      const item = findOption(options, second);
      return item ? { item } : notFound(`option ${second} of product ${first}`);
    }
    default:
      return { error: -98 };
  }
}

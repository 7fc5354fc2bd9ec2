// The feed's ETags. Weak (`W/"…"`): one version of a feed answer goes out brotli- or gzip-coded or as it is, three
// representations whose bytes differ, which one strong tag may not name (RFC 9110 §8.8.1); If-None-Match is compared
// weakly (§13.1.2), so a till keeps its tag whatever coding brought it, and a tag from before they were weak matches.
import type { FeedHead } from '../store/relayStore';

/**
 * `W/"<handle>.<version>.<newest confirmedAt>"`, `.options` for a feed without coupons, and `.degraded` while the
 * relay is: a till that holds the data sees the relay's state change in a 200 answer (with its reason), not a 304.
 * @example feedEtag(head, head.version, false, true) // 'W/"m1x2-ab12.812.1763900000000"'
 */
export function feedEtag(head: FeedHead, version: number, degraded: boolean, coupons: boolean): string {
  const confirmed = Math.max(
    0,
    ...Object.entries(head.confirmedAt).map(([r, v]) => (coupons || r !== 'coupons' ? (v ?? 0) : 0)),
  );
  return `W/"${head.handle}.${version}.${confirmed}${coupons ? '' : '.options'}${degraded ? '.degraded' : ''}"`;
}

const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');

/**
 * Whether an If-None-Match header names `etag` (weak comparison; `*` names any).
 * @example noneMatch('"m1.812.1763900000000"', 'W/"m1.812.1763900000000"') // true
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const tags = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.some((tag) => opaque(tag) === opaque(etag));
}

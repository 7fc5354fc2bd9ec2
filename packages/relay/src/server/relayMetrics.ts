// The relay command's metrics in Prometheus text format (prom-client): upstream calls by route and status, 429s from
// upstream, listings (duration, changes), the feed's version and the age of the last confirmed listing, long-polls,
// connections, requests answered and refused, the store's health and errors, whether this instance holds the lease.
// Fed by the relay's observer hooks (in hub mode the hub's, for every shop), a wrapped upstream fetch, and the status
// read at each scrape (of every open shop in hub mode: the only metrics labelled by shop, bounded by MAX_HOT_SHOPS).
import { matchAllowedPath } from '../door/allowedPaths';
import type { StoreHealth } from '../store/relayStore';
import type { RelayObserver, RelayStatus, UsesEvent } from '../types';
import type { PromClient } from './optionalPeers';

export interface RelayMetrics {
  /** Hooks for the relay's (or, with the shop's id, a hub shop's) observer; the server adds its log lines. */
  observer: {
    listing(event: Parameters<NonNullable<RelayObserver['listing']>>[0]): void;
    /** A sync lease taken or given up; in hub mode, of the shop named. */
    lease(held: boolean, shopId?: string): void;
    storeHealth(health: StoreHealth): void;
    /** What happened to the tills' uses of issued coupons (in hub mode summed over the shops). */
    uses(event: UsesEvent): void;
  };
  /** Counts every upstream call of `fetch` by route and status. */
  observeFetch(fetch: typeof globalThis.fetch): typeof globalThis.fetch;
  /** One request answered by this process. */
  answered(route: string, status: number): void;
  /** One request refused, by why (no_token, expired, ops_only, over_capacity, …). */
  refused(reason: string): void;
  /** The exposition text and its content type. */
  scrape(): Promise<{ text: string; contentType: string }>;
}

export interface RelayMetricsOptions {
  /** The status of each shop served here now: the relay's (none while it starts), or in hub mode each open shop's. */
  statuses: () => Promise<RelayStatus[]>;
  /**
   * Hub mode: the per-shop gauges (feed version, listing age) carry a `shop` label, one series per shop open here
   * (at most MAX_HOT_SHOPS); every other metric is summed over the shops.
   */
  byShop?: boolean;
  /** Open connections now. */
  connections: () => number;
  /** Whether /readyz would answer 200. */
  ready: () => Promise<boolean>;
  now?: () => number;
}

/** The upstream route of a URL: 'auth', or the name of one of the six paths, or 'other'. */
function upstreamRoute(url: string): string {
  // an upstream origin with a path of its own (a hub shop's `target`, a gateway) puts it before /v2/
  const full = new URL(url).pathname;
  const path = full.slice(Math.max(0, full.indexOf('/v2/')));
  if (path === '/v2/auth') return 'auth';
  const match = matchAllowedPath(path);
  return match.ok ? match.name : 'other';
}

const kindOf = (resource: string): 'coupons' | 'options' => (resource === 'coupons' ? 'coupons' : 'options');

/** @example const metrics = createRelayMetrics(prom, { status: () => relay.status(), connections, ready }); */
export function createRelayMetrics(prom: PromClient, options: RelayMetricsOptions): RelayMetrics {
  const now = options.now ?? Date.now;
  const registry = new prom.Registry();
  const registers = [registry];
  prom.collectDefaultMetrics({ register: registry, prefix: 'shop_relay_' });
  let statuses: RelayStatus[] = [];
  const byShop = options.byShop === true;
  const shopLabel = (s: RelayStatus): Record<string, string> => (byShop ? { shop: s.shop } : {});

  const upstream = new prom.Counter({
    name: 'shop_relay_upstream_requests_total',
    help: 'Calls to the shop API, by route (auth, coupons, coupon, issuedCoupon, productOptions, productOption) and HTTP status (or "unreachable").',
    labelNames: ['route', 'status'],
    registers,
  });
  const throttled = new prom.Counter({
    name: 'shop_relay_upstream_throttled_total',
    help: 'Answers 429 (too many requests) from the shop API, by route.',
    labelNames: ['route'],
    registers,
  });
  const listingDuration = new prom.Histogram({
    name: 'shop_relay_listing_duration_seconds',
    help: 'Time from the start of a listing (on whichever instance started it) to its commit, by resource kind.',
    labelNames: ['resource'],
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers,
  });
  const listings = new prom.Counter({
    name: 'shop_relay_listings_total',
    help: 'Listings this instance ended, by resource kind and outcome (committed, failed).',
    labelNames: ['resource', 'outcome'],
    registers,
  });
  const listed = new prom.Counter({
    name: 'shop_relay_listing_records_total',
    help: 'Records changed by committed listings: upserted, deleted, or rejected by their schema (kept at their last good copy).',
    labelNames: ['op'],
    registers,
  });
  const answered = new prom.Counter({
    name: 'shop_relay_requests_total',
    help: 'Requests answered, by route and HTTP status.',
    labelNames: ['route', 'status'],
    registers,
  });
  const refused = new prom.Counter({
    name: 'shop_relay_refused_total',
    help: 'Clients refused or throttled, by reason (no_token, unknown_token, bad_signature, expired, wrong_shop, malformed, ops_only, throttled, over_capacity).',
    labelNames: ['reason'],
    registers,
  });
  const uses = new prom.Counter({
    name: 'shop_relay_uses_total',
    help: "Tills' uses of issued coupons: recorded, of which conflicting with an earlier sale (conflict), and released by their till (a voided sale).",
    labelNames: ['event'],
    registers,
  });
  const usesDropped = new prom.Counter({
    name: 'shop_relay_uses_dropped_total',
    help: 'Uses dropped, by why: expired (usesRetentionMs), confirmed (the shop API shows the code used: a mark stays), operator (dropUses), unknown (a code the shop does not have).',
    labelNames: ['why'],
    registers,
  });
  const usesRefused = new prom.Counter({
    name: 'shop_relay_uses_refused_total',
    help: "POST relay/v1/uses refused, or a part of one, by reason: uses_full, till_uses_full, claim_refused (another sale has the voucher), release_refused (another till's use), bad_request, relay_unavailable.",
    labelNames: ['reason'],
    registers,
  });
  const storeErrors = new prom.Counter({
    name: 'shop_relay_store_errors_total',
    help: 'Times the store (Redis) became unreachable.',
    registers,
  });
  let storeUp = 1;
  // the shops whose sync lease this instance holds ('' for the one shop of a single relay)
  const leases = new Set<string>();
  new prom.Gauge({
    name: 'shop_relay_store_up',
    help: '1 when the store (Redis, or memory) answers, else 0.',
    registers,
    collect() {
      this.set(storeUp);
    },
  });
  new prom.Gauge({
    name: 'shop_relay_lease_held',
    help: 'Sync leases this instance holds: 1 while it is the one listing the shop API (hub mode: the shops it lists now).',
    registers,
    collect() {
      this.set(leases.size);
    },
  });
  new prom.Gauge({
    name: 'shop_relay_ready',
    help: '1 when /readyz answers 200.',
    registers,
    async collect() {
      this.set((await options.ready()) ? 1 : 0);
    },
  });
  new prom.Gauge({
    name: 'shop_relay_connections',
    help: 'Open client connections.',
    registers,
    collect() {
      this.set(options.connections());
    },
  });
  new prom.Gauge({
    name: 'shop_relay_long_polls',
    help: 'Long-polls parked on this instance.',
    registers,
    collect() {
      this.set(statuses.reduce((sum, s) => sum + s.waiting, 0));
    },
  });
  new prom.Gauge({
    name: 'shop_relay_feed_version',
    help: byShop
      ? "Each open shop's feed version (grows with every change of the shop)."
      : "The feed's version (shop-wide; grows with every change).",
    labelNames: byShop ? ['shop'] : [],
    registers,
    collect() {
      this.reset();
      for (const s of statuses) if (s.version != null) this.set(shopLabel(s), s.version);
    },
  });
  new prom.Gauge({
    name: 'shop_relay_last_listing_age_seconds',
    help: `Age of the last confirmed listing: of the coupons, and of the oldest of the tracked products' options${byShop ? ', of each open shop.' : '.'}`,
    labelNames: byShop ? ['shop', 'resource'] : ['resource'],
    registers,
    collect() {
      this.reset();
      for (const s of statuses) {
        const oldest: Partial<Record<'coupons' | 'options', number>> = {};
        for (const [resource, at] of Object.entries(s.confirmedAt)) {
          const kind = kindOf(resource);
          oldest[kind] = Math.min(oldest[kind] ?? Infinity, at);
        }
        for (const [kind, at] of Object.entries(oldest))
          this.set({ ...shopLabel(s), resource: kind }, Math.max(0, (now() - at) / 1000));
      }
    },
  });

  return {
    observer: {
      listing(e) {
        const resource = kindOf(e.resource);
        listings.inc({ resource, outcome: e.ok ? 'committed' : 'failed' });
        if (!e.ok) return;
        if (e.durationMs !== null) listingDuration.observe({ resource }, e.durationMs / 1000);
        listed.inc({ op: 'upsert' }, e.upserts);
        listed.inc({ op: 'delete' }, e.deletes);
        listed.inc({ op: 'rejected' }, e.rejected);
      },
      lease(held, shopId = '') {
        if (held) leases.add(shopId);
        else leases.delete(shopId);
      },
      storeHealth(health) {
        if (!health.ok && storeUp === 1) storeErrors.inc();
        storeUp = health.ok ? 1 : 0;
      },
      uses(e) {
        if (e.kind === 'recorded') {
          uses.inc({ event: 'recorded' }, e.uses);
          if (e.conflicts > 0) uses.inc({ event: 'conflict' }, e.conflicts);
        } else if (e.kind === 'released') uses.inc({ event: 'released' }, e.uses);
        else if (e.kind === 'dropped') usesDropped.inc({ why: e.why }, e.uses);
        else usesRefused.inc({ reason: e.reason });
      },
    },
    observeFetch(fetch) {
      return async (input, init) => {
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        const route = upstreamRoute(url);
        try {
          const res = await fetch(input, init);
          upstream.inc({ route, status: String(res.status) });
          if (res.status === 429) throttled.inc({ route });
          return res;
        } catch (error) {
          if (!init?.signal?.aborted) upstream.inc({ route, status: 'unreachable' });
          throw error;
        }
      };
    },
    answered: (route, status) => answered.inc({ route, status: String(status) }),
    refused: (reason) => refused.inc({ reason }),
    async scrape() {
      statuses = await options.statuses().catch(() => []);
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
  };
}

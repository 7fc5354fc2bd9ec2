// The relay (or, with SHOPS_FILE, the hub) a relay process serves, made from a configuration: at start, and again
// when a reload changed the key, the secret or REDIS_URL. What it tells (listings, the lease, the store's health,
// uses) becomes the process's metrics and log lines, the same in both modes; authorize marks each request's route.
import { createShopRelay } from '../createShopRelay';
import { createRelayHub } from '../hub/createRelayHub';
import type { RelayHub } from '../hub/hubTypes';
import type { RelayStore, StoreHealth } from '../store/relayStore';
import type { ShopRelay, UsesEvent } from '../types';
import type { RelayLogger } from './relayLogger';
import type { RelayMetrics } from './relayMetrics';
import type { RelayServerConfig } from './relayServerConfig';
import type { ServerAccess } from './serverAccess';
import type { ServerState } from './serverState';

export interface ServerUpstream {
  makeRelay(config: RelayServerConfig): ShopRelay;
  makeHub(config: RelayServerConfig): RelayHub;
}

export interface ServerUpstreamDeps {
  access: ServerAccess;
  metrics: RelayMetrics;
  log: RelayLogger;
  /** The upstream fetch, its tokens watched (serverState.ts). */
  fetch: typeof globalThis.fetch;
  /** A single relay without Redis: the memory store kept across a reload that makes the relay again. */
  memory: RelayStore | undefined;
}

/** @example const upstream = serverUpstream(state, deps); state.relay = upstream.makeRelay(state.config); */
export function serverUpstream(state: ServerState, deps: ServerUpstreamDeps): ServerUpstream {
  const { access, metrics, log, memory } = deps;
  const { routes } = state.requests;
  const fetch = metrics.observeFetch(deps.fetch);
  // what the relay, or each shop of the hub (named by its id), tells the server: the same metrics and lines in both
  const told = {
    listing(e: Parameters<typeof metrics.observer.listing>[0], shopId?: string): void {
      metrics.observer.listing(e);
      // (a failed listing is the relay's own log line, through `log`)
      if (e.ok)
        log.info(
          {
            ...(shopId ? { shopId } : {}),
            resource: e.resource,
            ms: e.durationMs,
            upserts: e.upserts,
            deletes: e.deletes,
            rejected: e.rejected,
          },
          'listing committed',
        );
    },
    lease(held: boolean, shopId?: string): void {
      metrics.observer.lease(held, shopId);
      log.info({ ...(shopId ? { shopId } : {}), held }, held ? 'sync lease taken' : 'sync lease given up');
    },
    storeHealth(health: StoreHealth): void {
      metrics.observer.storeHealth(health);
      state.storeError = health.ok ? null : (health.error ?? 'unreachable');
      if (health.ok) log.info('store reachable again');
      else log.error({ error: health.error }, 'store unreachable');
    },
    log: (level: 'warn' | 'error', message: string, error?: unknown): void =>
      error === undefined ? log[level](message) : log[level]({ err: error }, message),
  };

  const makeHub = (c: RelayServerConfig): RelayHub =>
    createRelayHub({
      credentials: (id) => {
        const entry = state.shops.get(id);
        return entry ? { key: entry.key, secret: entry.secret, target: entry.target ?? c.target } : null;
      },
      shops: () => state.shops.keys(),
      target: c.target,
      basePath: c.basePath,
      ...(c.redisUrl ? { redis: c.redisUrl } : {}),
      maxHotShops: c.maxHotShops,
      maxHotRecords: c.maxHotRecords,
      rateLimits: c.rateLimits,
      refreshIntervalMs: c.refreshIntervalMs,
      usesRetentionMs: c.usesRetentionMs,
      maxUses: c.maxUses,
      ...(c.maxUsesPerTill === undefined ? {} : { maxUsesPerTill: c.maxUsesPerTill }),
      leaseMs: c.leaseMs,
      maxLongPolls: c.limits.maxLongPolls,
      cors: access.cors(c),
      fetch,
      authorize: (req, route, shopId) => {
        if (!routes.has(req)) routes.set(req, route);
        return access.hub!.forShop(shopId).authorize(req, route);
      },
      clientId: (req) => access.now.clientId(req),
      observer: {
        shop: ({ shopId, kind }) => log.info({ shopId, kind }, `shop ${kind}`),
        listing: ({ shopId, ...e }) => told.listing(e, shopId),
        lease: ({ shopId, held }) => told.lease(held, shopId),
        storeHealth: told.storeHealth,
        log: told.log,
        uses: ({ shopId: _shop, ...e }) => metrics.observer.uses(e as UsesEvent),
      },
    });

  const makeRelay = (c: RelayServerConfig): ShopRelay =>
    createShopRelay({
      key: c.key,
      secret: c.secret,
      target: c.target,
      basePath: c.basePath,
      // the shop's id stays the start's: a key rotated without SHOP_ID must not rename the shop under its tills
      shopId: state.shop,
      ...(memory ? { store: memory } : { redis: c.redisUrl }),
      products: c.products,
      rateLimits: c.rateLimits,
      refreshIntervalMs: c.refreshIntervalMs,
      usesRetentionMs: c.usesRetentionMs,
      maxUses: c.maxUses,
      ...(c.maxUsesPerTill === undefined ? {} : { maxUsesPerTill: c.maxUsesPerTill }),
      leaseMs: c.leaseMs,
      maxLongPolls: c.limits.maxLongPolls,
      cors: access.cors(c),
      fetch,
      authorize: (req, route) => {
        // the first route asked is the request's (see serverAccess.ts, onRefused)
        if (!routes.has(req)) routes.set(req, route);
        return access.now.authorize(req, route);
      },
      clientId: (req) => access.now.clientId(req),
      observer: {
        listing: (e) => told.listing(e),
        lease: (held) => told.lease(held),
        storeHealth: told.storeHealth,
        log: told.log,
        uses: metrics.observer.uses,
      },
    });

  return { makeRelay, makeHub };
}

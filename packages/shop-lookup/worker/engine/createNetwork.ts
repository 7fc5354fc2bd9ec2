// The engine's lazily loaded chunk: its network side (API client, limiter, retries, sync runner and scheduler, relay
// feed). Only loadNetwork.ts imports it, with import(), so it stays out of the worker's entry: answering from
// IndexedDB needs none of it, and the first answer after a reload does not wait for it to parse. Import nothing from
// here statically (types aside).
import Dexie, { RangeSet } from 'dexie';
import { type LookupErrorCode, type ShopLookupError, toLookupError } from '../../src/protocol';
import {
  acceptEncodingSettable,
  askCompressed,
  type ApiClient,
  createApiClient,
  createRateLimiter,
  createTransport,
  DEFAULT_PAGE_SIZE,
  DEFAULT_RATE_LIMITS,
  DEFAULT_TIMEOUT_MS,
  LOOKUP_RETRY,
  type RateLimiter,
  retry,
  type RetryPolicy,
  serverRefusal,
  SYNC_RETRY,
  typedCode,
} from '@shop-lookup/shop-api';
import type { AskToken, SyncReport } from '../../src/protocol';
import { metaKey, type ClaimAnswer, type Confirmation, type OutgoingUse } from '../store/store';
import type { OpeningReads } from '../sync/openingReads';
import type { SyncContext } from '../sync/syncContext';
import { createReportDraft, finishReport } from '../sync/syncReport';
import { refreshIssuedCoupon } from '../sync/readThrough';
import { createDirectListingSource } from '../sync/direct/directListingSource';
import { createSourceChooser, probeRelay, sourceModeOf, type SourceChoice } from '../sync/relay/relayDiscovery';
import { createRelayFeedClient } from '../sync/relay/relayFeedClient';
import { createRelayFeedSource, PRODUCTS_UNIT } from '../sync/relay/relayFeedSource';
import { startRelayLive } from '../sync/relay/relayLive';
import type { StorageChanges } from '../store/storageChanges';
import { watchUseConflicts } from '../sync/relay/useConflicts';
import { createUsesSender } from '../sync/relay/usesSender';
import { createSyncRunner } from '../sync/syncRunner';
import { createSyncScheduler, isSyncDue, type SyncScheduler } from '../sync/syncScheduler';
import type { DatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';
import { networkClaim } from './networkClaim';
import { withTillToken } from './tillToken';
import { ENGINE_DEFAULTS } from '../defaults';

export { refreshCoupon, refreshIssuedCoupon, refreshOptionByCode, refreshOptionByNo } from '../sync/readThrough';
export { syncProductOptions } from '../sync/direct/syncProductOptions';
export { answerWhileOpening } from './answerWhileOpening';
export { startNetworkEarly } from './startNetworkEarly';

/** The refusal a relay's discovery answer implies for `route` (it left the route out for this client). */
function refusedByDiscovery(route: string): ShopLookupError<LookupErrorCode> {
  const label = { method: 'GET', path: '/relay/v1' };
  const error = serverRefusal(
    label,
    403,
    { refusal: { code: 'forbidden', route, by: 'relay' } },
    'its discovery answer leaves this route out',
  )!;
  delete error.status;
  return error;
}

export interface NetworkDeps
  extends Pick<
    EngineCore,
    'options' | 'db' | 'now' | 'refreshIntervalMs' | 'connectivity' | 'resources' | 'status' | 'signal' | 'leadership'
  > {
  fetch: typeof fetch;
  /** Asks the host for the till's token (the `token` option); none: no Authorization is sent. */
  askToken?: AskToken | undefined;
  syncRetry?: RetryPolicy | undefined;
  lookupRetry?: RetryPolicy | undefined;
  trackedProducts: () => Promise<number[]>;
  /**
   * Whose the database is (databaseClaim.ts): the shop this engine serves (writes outside a sync check the database
   * is still its), syncs under the sync lock once it still is, the shop a relay names checked against it
   * (networkClaim.ts), and whether background syncs may start (not when the database is another shop's, or unusable).
   */
  claim: DatabaseClaim;
  /** A full sync (the relay's feed asks for one when it has to start again); resolves ok or not. */
  resync(): Promise<boolean>;
  /** Back online (every engine, leader or not): the watches on screen refresh what is due. */
  onReconnect(): void;
  /** The `Date` header of every answer of the API or the relay (the engine's clock, serverClock.ts). */
  onServerDate(date: string | null): void;
  /** Committed writes, by any tab: the outbox (uses to send) and the journal (status().useConflicts) are followed. */
  changes: StorageChanges;
}

export interface Network {
  limiter: RateLimiter;
  runner: ReturnType<typeof createSyncRunner>;
  /** When this engine syncs by itself (syncScheduler.ts); sync() from the host runs through it too. */
  scheduler: SyncScheduler;
  /** The leader's long-poll for a relay's live changes (relayLive.ts). */
  live: { dispose(): void };
  /** The context of work somebody waits for (a lookup's refresh): quick retries, ahead of background work. */
  userContext(): SyncContext;
  /** The refusal of `route` the relay's discovery answer implies (it left the route out for this client), else null. */
  refusal(route: string): ShopLookupError | null;
  /** Fetches these issued coupons (background work outside a sync, patient retries); the outcome is a report. */
  prefetchIssuedCoupons(codes: string[]): Promise<SyncReport>;
  /** Claims one use from the relay (usesSender.ts), within `claimTimeoutMs`. */
  claimUse(use: OutgoingUse): Promise<ClaimAnswer>;
}

/**
 * What reaching the API (or the relay) takes, made before the database opens where a storefront's start reads at
 * once.
 */
export interface ApiAccessDeps extends Pick<EngineCore, 'options' | 'connectivity' | 'signal'> {
  fetch: typeof fetch;
  /** Asks the host for the till's token (the `token` option); none: no Authorization is sent. */
  askToken?: AskToken | undefined;
  /** The `Date` header of every answer of the API or the relay (the engine's clock, serverClock.ts). */
  onServerDate(date: string | null): void;
}

/** The one way this engine reaches the API: its fetch (telling the time), rate limiter and client. */
export interface ApiAccess {
  fetch: typeof fetch;
  limiter: RateLimiter;
  client: ApiClient;
}

/**
 * @example const access = createApiAccess({ options, fetch, connectivity, signal, onServerDate }); await
 * access.client.listCoupons(1);
 */
export function createApiAccess(deps: ApiAccessDeps): ApiAccess {
  const { options } = deps;
  // every request carries the till's token, also those another part makes (the relay's feed, its discovery)
  const sent = deps.askToken ? withTillToken(deps.fetch, deps.askToken) : deps.fetch;
  // compressed answers where the platform lets the engine ask (Node; a browser asks by itself)
  const settable = acceptEncodingSettable();
  // every answer of the API and the relay tells the time (its Date header), before its body is read
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const res = await sent(input, askCompressed(init, settable));
    deps.onServerDate(res.headers.get('date'));
    return res;
  };
  const limiter = createRateLimiter(options.rateLimits ?? DEFAULT_RATE_LIMITS);
  const transport = createTransport({
    baseUrl: options.baseUrl,
    fetch,
    limiter,
    timeoutMs: options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    auth: options.auth,
    onAnswer: () => deps.connectivity.reportAnswer(),
    onUnreachable: () => deps.connectivity.reportUnreachable(),
    signal: deps.signal,
  });
  return { fetch, limiter, client: createApiClient({ transport, pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE }) };
}

/**
 * @param access made already when a storefront's start read at once (else here)
 * @param opening that start's opening reads: its first sync and lookup refreshes take them
 * @example const net = createNetwork({ options, db, fetch, now, connectivity, resources, status, signal,
 * trackedProducts, claim, leadership, resync });
 */
export function createNetwork(
  deps: NetworkDeps,
  access: ApiAccess = createApiAccess(deps),
  opening?: OpeningReads,
): Network {
  const { options, db, now, signal, claim } = deps;
  const { fetch, limiter, client } = access;
  const { exclusive, relayShop } = networkClaim(claim, options.baseUrl, db.name);
  const shop = () => claim.shop();
  const syncPolicy = deps.syncRetry ?? { ...SYNC_RETRY, ...options.retry };
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const onAnswer = () => deps.connectivity.reportAnswer();
  const onUnreachable = () => deps.connectivity.reportUnreachable();
  const feedClient = createRelayFeedClient({
    baseUrl: options.baseUrl,
    fetch,
    timeoutMs,
    signal,
    onAnswer,
    onUnreachable,
  });
  const uses = createUsesSender({ db, client: feedClient, takesUses: (s) => takesUses(s), now, signal });
  const relay = createRelayFeedSource({
    db,
    client: feedClient,
    uses,
    onVersion: (relayVersion) => {
      deps.status.facts.set({ relayVersion });
      // what the feed confirmed shows in status() at once (a live change or confirmation arrives outside a sync)
      void db.meta.bulkGet([metaKey.coupons, 'options']).then(
        ([c, o]) => {
          const at = deps.status.facts.get().lastSyncedAt;
          const confirmed = (r: unknown) => (r as Confirmation | undefined)?.confirmedAt ?? null;
          deps.status.facts.set({
            lastSyncedAt: { coupons: confirmed(c) ?? at.coupons, options: confirmed(o) ?? at.options },
          });
        },
        () => undefined,
      );
    },
    checkShop: (name) => checkShop(name),
    onRelayState: (relay) => deps.status.facts.set({ relay }),
  });
  // coupons: 'byCode' (a storefront) never lists coupons, and the relay's feed is the coupon list: such an engine
  // reads the tracked products' options by their GET route (the relay answers them from its snapshot)
  const byCode = options.coupons === 'byCode';
  const direct = createDirectListingSource(db, now, !byCode);
  const chooser = createSourceChooser(sourceModeOf(options.source, options.auth), async (s) => {
    const answer = await probeRelay(fetch, options.baseUrl, timeoutMs, s ? AbortSignal.any([signal, s]) : signal);
    if (answer.kind === 'unknown') onUnreachable();
    else onAnswer();
    return answer;
  });
  /** A relay was found and the shop it names is this database's: only then does a long-poll go to it. */
  let relayAccepted = false;
  const checkShop = (name: string | null) =>
    relayShop(name).catch((error: unknown) => {
      relayAccepted = false;
      throw error;
    });
  /** Whether a relay that said which routes this client may use allows `route` (a relay that did not say: yes). */
  const allows = (choice: SourceChoice, route: string) =>
    choice.kind !== 'relay' || !choice.info?.routes || choice.info.routes.includes(route);
  let lastChoice: SourceChoice | null = null;
  async function choose(s?: AbortSignal) {
    const choice = await chooser.choose(s);
    lastChoice = choice;
    // another shop's relay is refused before anything is asked of it (its feed answers are checked too)
    if (choice.kind === 'relay' && choice.info) await checkShop(choice.info.shop || null);
    // what the relay's discovery answer leaves out is never asked (the storefront mode): without its feed the
    // options come by their GET route, without the coupon list no coupon is listed
    if (!byCode && !allows(choice, 'feed') && !allows(choice, 'coupons'))
      runner.refuseAhead(metaKey.coupons, refusedByDiscovery('coupons'));
    if (!allows(choice, 'products')) runner.refuseAhead(PRODUCTS_UNIT, refusedByDiscovery('products'));
    relayAccepted = choice.kind === 'relay' && !byCode && allows(choice, 'feed');
    return choice;
  }
  /** The routes a relay forced by `source: 'relay'` lists, asked once (the chooser had no reason to ask). */
  let forcedRoutes: Promise<string[] | null> | null = null;
  const routesOf = async (choice: SourceChoice, s?: AbortSignal) => {
    if (choice.info) return choice.info.routes;
    forcedRoutes ??= probeRelay(fetch, options.baseUrl, timeoutMs, s ? AbortSignal.any([signal, s]) : signal).then(
      (a) => (a.kind === 'relay' ? (a.info?.routes ?? null) : null),
    );
    // (no answer: asked again next time)
    return forcedRoutes.catch(() => (forcedRoutes = null));
  };
  /** The relay this engine syncs from takes its uses of issued coupons: only when its discovery lists `uses`. */
  async function takesUses(s?: AbortSignal): Promise<boolean> {
    try {
      const choice = await choose(s);
      return choice.kind === 'relay' && (await routesOf(choice, s))?.includes('uses') === true;
    } catch {
      return false; // (no answer yet: the next sync asks again)
    }
  }
  const runner = createSyncRunner({
    source: async (s) => {
      const choice = await choose(s);
      return choice.kind === 'relay' && !byCode && allows(choice, 'feed') ? relay : direct;
    },
    // (a relay is a relay to the till whatever it lets it read; a storefront says 'direct', as below)
    shownSource: (s) => (!byCode && chooser.current === 'relay' ? 'relay' : s.kind),
    db,
    client,
    resources: deps.resources,
    status: deps.status,
    now,
    policy: syncPolicy,
    trackedProducts: deps.trackedProducts,
    shop,
    exclusive,
    opening,
  });
  // The scheduler only ever starts syncs, which run on this side: it comes with this chunk, not the worker's entry.
  const scheduler = createSyncScheduler({
    sync: (options) => runner.sync(options),
    // (what a storefront's start read is stored by its start sync, also when the data was fresh enough to wait)
    isDue: () =>
      opening?.untaken
        ? Promise.resolve(true)
        : isSyncDue(db, now(), deps.refreshIntervalMs, byCode ? 'options' : metaKey.coupons),
    ready: claim.ready.then((blocked) => !blocked),
    connectivity: deps.connectivity,
    leadership: deps.leadership,
    refreshIntervalMs: deps.refreshIntervalMs,
    onReconnect: deps.onReconnect,
  });
  // Is baseUrl a relay, and of this shop? Asked once at start (cached; asked again by the next sync if no answer
  // came). With a relay, the leader keeps a long-poll open for live changes (the status change wakes it).
  choose(signal)
    .catch(() => undefined)
    .then(() => chooser.current && deps.status.facts.set({ source: byCode ? 'direct' : chooser.current }));
  const live = startRelayLive({
    poll: (waitS, s) => relay.poll(waitS, s),
    // after the first sync (which finds out whether the relay serves this client its feed): a relay that refused it
    // is not asked again by the live long-poll either
    isRelay: () => relayAccepted && runner.ranOnce && !runner.isRefused(metaKey.coupons),
    resync: deps.resync,
    leadership: deps.leadership,
    connectivity: deps.connectivity,
    onChange: (l) => deps.status.facts.subscribe(l),
    signal,
  });
  // every key of a table (storageChanges.ts's wholeTable, whose import would move that module out of the first load)
  const whole = (table: 'outbox' | 'journal') => ({ [table]: new RangeSet(-Infinity, [[]]) });
  watchUseConflicts({
    db,
    status: deps.status,
    watchJournal: (changed) => deps.changes.watch(whole('journal'), changed),
  });
  // A use written to the outbox (a verdict in any tab) goes to the relay at once, sent by the leader alone (one
  // sender per database); a failure waits for the next sync, which retries and reports it. Offline, the sync on
  // reconnect sends what waits.
  deps.changes.watch(whole('outbox'), () => {
    if (!deps.leadership.isLeader || deps.connectivity.offline) return;
    // (told inside the committing transaction's completion: the send runs outside its zone)
    void Dexie.ignoreTransaction(() => uses.send((step) => retry(step, syncPolicy, { signal }))).catch(() => undefined);
  });
  const context = (priority: SyncContext['priority'], policy: RetryPolicy): SyncContext => ({
    db,
    client,
    report: createReportDraft(),
    now,
    priority,
    signal,
    call: (step) => retry(step, policy, { signal }),
    shop: shop(),
    // (a lookup's refresh during the start takes its product's opening read, as the start sync would)
    opening,
  });
  return {
    limiter,
    runner,
    scheduler,
    live,
    userContext: () => context('user', deps.lookupRetry ?? LOOKUP_RETRY),
    refusal: (route) => (lastChoice && !allows(lastChoice, route) ? refusedByDiscovery(route) : null),
    claimUse: (use) => uses.claim(use, options.claimTimeoutMs ?? ENGINE_DEFAULTS.claimTimeoutMs),
    async prefetchIssuedCoupons(codes) {
      const ctx = context('background', syncPolicy);
      // (each code in the one form every lookup uses: pathSegment.ts)
      for (const code of Array.isArray(codes) ? codes.map(typedCode) : codes) {
        try {
          await deps.resources.track(metaKey.issued(code), () => refreshIssuedCoupon(ctx, code));
        } catch (error) {
          ctx.report.complete = false;
          const e = toLookupError(error);
          if (e.code !== 'invalid_record') ctx.report.errors.push(e);
          if (e.code === 'network_error' || e.code === 'closed') break;
        }
      }
      return finishReport(ctx.report);
    },
  };
}

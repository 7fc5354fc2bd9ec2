// One upstream listing per shop at any time, whatever the number of relay instances and the interval: whoever holds
// the store's lease lists what is due (every refreshIntervalMs, or at once for a newly tracked product), renewing the
// lease while it lists. A run that finds another listing under way (here or on another instance) waits for it and
// counts it: what that listing confirmed after the run was asked for is not listed again, so a due refresh or a
// refresh() during a listing resolves when that listing commits. A lister that died is noticed when its lease
// lapses; its listing is then resumed from the checkpoint. A listing that failed is tried again after 2 s, 4 s, ...
// 60 s until it succeeds. A store found without its data (Redis restarted empty, flushed) lists what it lost at once.
import type { ApiClient, RetryPolicy } from '@shop-lookup/shop-api';
import { listResource, type ListingResult } from './listResource';
import { failureText } from '../door/upstreamErrors';
import type { FeedHead, Lease, ListingCheckpoint, RelayStore, ResourceId } from '../store/relayStore';

export interface UpstreamSyncOptions {
  store: RelayStore;
  client: ApiClient;
  /** This instance's name as lease owner. */
  owner: string;
  now: () => number;
  refreshIntervalMs: number;
  leaseMs: number;
  retry: RetryPolicy;
  /** Told about every listing that failed (the relay logs it and shows it in status). */
  onError?: (resource: ResourceId, error: unknown) => void;
  onListed?: (resource: ResourceId, result: ListingResult) => void;
  /** Products no client asked for in this long are dropped before a run (productTracking.ts); default never. */
  productTtlMs?: number;
  /** Products never dropped (the host's `products`). */
  keepProducts?: readonly number[];
  /** Told the products dropped. */
  onDropped?: (productNos: number[]) => void;
  /** Passed to every listing: records are redacted before they are staged (nothing an upstream echoed is served). */
  scrub?: <T>(records: T) => T;
}

export interface UpstreamSync {
  /** Lists what is due now (or everything with `force`), resolving when done; `only` narrows to those resources. */
  run(options?: { force?: boolean; only?: ResourceId[] }): Promise<void>;
  /** The listing under way in this instance, for status. */
  listing(): ListingCheckpoint | null;
  /** The last listing error in words, null after a success. */
  lastError(): string | null;
  /** True while a run here waits for another instance's listing to end. */
  waitingForLister(): boolean;
  close(): void;
}

const LEASE = 'sync';
/** Pauses before a failed listing is tried again: doubling from the first to the last, until one succeeds. */
const FAILED_RETRY_MIN_MS = 2_000;
const FAILED_RETRY_MAX_MS = 60_000;

type Confirmed = FeedHead['confirmedAt'];

/**
 * @example const sync = createUpstreamSync({ store, client, owner, now, refreshIntervalMs, leaseMs, retry }); await
 * sync.run();
 */
export function createUpstreamSync(options: UpstreamSyncOptions): UpstreamSync {
  const { store, now, refreshIntervalMs, leaseMs } = options;
  const closing = new AbortController();
  let chain: Promise<void> = Promise.resolve();
  let current: ListingCheckpoint | null = null;
  let error: string | null = null;
  let storeFailed = false; // `error` came from the store (a run that could not even start), not from a listing
  let waiting = false;
  /** confirmedAt of the listings this instance committed, by resource. */
  const ownCommits = new Map<ResourceId, number>();
  /** The due run started by the timer, queued or running: later ticks join it instead of queueing more. */
  let dueRun: Promise<void> | null = null;
  /** Resources whose last listing here failed, and when they are tried again. */
  const failing = new Set<ResourceId>();
  let failedTimer: ReturnType<typeof setTimeout> | undefined;
  let failedDelay = FAILED_RETRY_MIN_MS;
  /** The feed history this instance last saw in the store (its handle): another one means the data was lost. */
  let history: string | null = null;

  // Recently confirmed (by any instance) is not due: 10% slack so timers of several instances do not double up.
  const isDue = (confirmedAt: number | undefined): boolean =>
    confirmedAt === undefined || now() - confirmedAt >= refreshIntervalMs * 0.9;

  /**
   * What to list: everything (force) or what is due, less what a listing confirmed after the run was asked for
   * (`asked`: what was confirmed then). A due run counts every such listing; refresh() (force) counts another
   * instance's, and lists anew after this instance's own (it may follow a change upstream made meanwhile).
   */
  async function due(force: boolean, only: ResourceId[] | undefined, asked: Confirmed | null): Promise<ResourceId[]> {
    const [head, tracked] = await Promise.all([store.head(), store.trackedProducts()]);
    history = head.handle;
    const all: ResourceId[] = only ?? ['coupons', ...tracked.map((no): ResourceId => `options:${no}`)];
    const counted = (r: ResourceId): boolean => {
      const at = head.confirmedAt[r];
      if (asked === null || at === undefined || at === asked[r]) return false;
      return !(force && ownCommits.get(r) === at);
    };
    const open = all.filter((r) => !counted(r));
    return force ? open : open.filter((r) => isDue(head.confirmedAt[r]));
  }

  /** Resolves when another instance's listing may have moved on: a commit anywhere, its lease lapsing, or close. */
  function anotherListingMoves(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        off();
        closing.signal.removeEventListener('abort', done);
        resolve();
      };
      const off = store.onHeadChange(done);
      // a lister that died (or whose listing failed without a commit) is noticed when its lease could have lapsed
      const timer = setTimeout(done, Math.max(50, leaseMs / 2));
      timer.unref?.();
      closing.signal.addEventListener('abort', done, { once: true });
    });
  }

  // A listing that failed (the API down or erring) is tried again after 2 s, 4 s, ... 60 s, not only at the next
  // refreshIntervalMs, until it succeeds: a relay started before the API is up serves its tills as soon as it is.
  function retryFailing(): void {
    if (failing.size === 0) {
      clearTimeout(failedTimer);
      failedTimer = undefined;
      failedDelay = FAILED_RETRY_MIN_MS;
      return;
    }
    if (closing.signal.aborted || failedTimer !== undefined) return;
    failedTimer = setTimeout(() => {
      failedTimer = undefined;
      void run({ only: [...failing] });
    }, failedDelay);
    failedTimer.unref?.();
    failedDelay = Math.min(FAILED_RETRY_MAX_MS, failedDelay * 2);
  }

  async function listUnderLease(lease0: Lease, resources: ResourceId[]): Promise<void> {
    let lease = lease0;
    const lost = new AbortController();
    const signal = AbortSignal.any([closing.signal, lost.signal]);
    const renewer = setInterval(() => {
      void store.renewLease(lease, leaseMs).then(
        (renewed) => {
          if (renewed) lease = renewed;
          else lost.abort(new Error('the sync lease was lost (another instance took it over)'));
        },
        () => undefined, // a store hiccup: the next renewal tries again, a lost lease fences our writes anyway
      );
    }, leaseMs / 3);
    try {
      for (const resource of resources) {
        if (signal.aborted) break;
        try {
          const result = await listResource(
            {
              store,
              client: options.client,
              now,
              retry: options.retry,
              signal,
              lease: () => lease,
              onPage: (cp) => (current = cp),
              ...(options.scrub ? { scrub: options.scrub } : {}),
            },
            resource,
          );
          error = null;
          failing.delete(resource);
          ownCommits.set(resource, result.head.confirmedAt[resource]!);
          options.onListed?.(resource, result);
        } catch (e) {
          if (closing.signal.aborted) break;
          // a lost lease is no failure of the listing: the instance that took it over lists
          if (!lost.signal.aborted) failing.add(resource);
          error = `${resource}: ${failureText(e)}`;
          options.onError?.(resource, e);
        } finally {
          current = null;
        }
      }
    } finally {
      clearInterval(renewer);
      await store.releaseLease(lease).catch(() => undefined);
    }
  }

  async function runOnce(
    force: boolean,
    only: ResourceId[] | undefined,
    asked: Promise<Confirmed | null>,
  ): Promise<void> {
    if (closing.signal.aborted) return;
    if (options.productTtlMs !== undefined && only === undefined) {
      const dropped = await store.dropProductsAskedBefore(now() - options.productTtlMs, options.keepProducts ?? []);
      if (dropped.length > 0) options.onDropped?.(dropped);
    }
    const since = await asked;
    for (;;) {
      const resources = await due(force, only, since);
      // listed meanwhile (by any instance): nothing to try again
      for (const r of failing) if ((!only || only.includes(r)) && !resources.includes(r)) failing.delete(r);
      // the store answers again (Redis back): its failure is over, whether or not anything is due now
      if (storeFailed) [error, storeFailed] = [null, false];
      if (resources.length === 0 || closing.signal.aborted) return retryFailing();
      const lease = await store.acquireLease(LEASE, options.owner, leaseMs);
      if (lease) {
        // looked at again under the lease: another instance may have committed and let go between our look and our
        // lease (hub instances sweeping the same shops), and its listing counts
        const still = await due(force, only, since).catch(async (e: unknown) => {
          await store.releaseLease(lease).catch(() => undefined);
          throw e;
        });
        const todo = resources.filter((r) => still.includes(r));
        if (todo.length === 0) {
          await store.releaseLease(lease).catch(() => undefined);
          return retryFailing();
        }
        await listUnderLease(lease, todo);
        return retryFailing();
      }
      // another instance lists: wait for it, then look again at what its listing left to do
      waiting = true;
      try {
        await anotherListingMoves();
      } finally {
        waiting = false;
      }
    }
  }

  function run({ force = false, only }: { force?: boolean; only?: ResourceId[] } = {}): Promise<void> {
    // what was confirmed when the run was asked for (a listing confirmed later counts for it)
    const asked = store.head().then(
      (h): Confirmed | null => h.confirmedAt,
      () => null,
    );
    // one run at a time in this instance; a run asked for meanwhile follows it
    const next = chain.then(() => runOnce(force, only, asked));
    chain = next.catch((e: unknown) => {
      error = failureText(e);
      storeFailed = true;
    });
    return chain;
  }

  const timer = setInterval(() => {
    // a due refresh while a run is queued or under way joins it
    if (dueRun === null) {
      dueRun = run().finally(() => {
        dueRun = null;
      });
    }
  }, refreshIntervalMs);
  timer.unref?.();
  // the store is back (Redis reconnected): look at once, so status stops saying degraded and due work resumes
  const offHealth = store.onHealthChange((health) => {
    if (health.ok && storeFailed) void run();
  });
  // A head of another history: the store lost its data (Redis back without it, flushed) and began a new one, which
  // confirms nothing yet. The store hands it to its listeners as soon as it reads it (at once after a reconnect):
  // list now, not at the next refresh tick. Tills meanwhile get 503 relay_not_ready or 409 must_refetch.
  const offHead = store.onHeadChange((head) => {
    const lost = history !== null && head.handle !== history;
    history = head.handle;
    if (lost) void run();
  });

  return {
    run,
    listing: () => current,
    lastError: () => error,
    waitingForLister: () => waiting,
    close() {
      closing.abort(new Error('the relay was closed'));
      clearInterval(timer);
      clearTimeout(failedTimer);
      offHealth();
      offHead();
    },
  };
}

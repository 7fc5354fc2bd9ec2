// One upstream sync per shop, whatever the number of relay instances: whoever holds the store's lease lists what
// is due (every refreshIntervalMs, or at once for a newly tracked product), renewing the lease while it lists;
// the others skip what was confirmed recently and try again shortly while something is due (the lister may have
// died: its listing is then resumed from the checkpoint).
import type { ApiClient } from '../worker/api/apiClient';
import type { RetryPolicy } from '../worker/api/retryer';
import { listResource, type ListingResult } from './listResource';
import type { Lease, ListingCheckpoint, RelayStore, ResourceId } from './relayStore';

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
}

export interface UpstreamSync {
  /** Lists what is due now (or everything with `force`), resolving when done; `only` narrows to those resources. */
  run(options?: { force?: boolean; only?: ResourceId[] }): Promise<void>;
  /** The listing under way in this instance, for status. */
  listing(): ListingCheckpoint | null;
  /** The last listing error in words, null after a success. */
  lastError(): string | null;
  close(): void;
}

const LEASE = 'sync';
/** Pauses before a failed listing is tried again: doubling from the first to the last, until one succeeds. */
const FAILED_RETRY_MIN_MS = 2_000;
const FAILED_RETRY_MAX_MS = 60_000;

/** @example const sync = createUpstreamSync({ store, client, owner, now, refreshIntervalMs, leaseMs, retry }); await sync.run(); */
export function createUpstreamSync(options: UpstreamSyncOptions): UpstreamSync {
  const { store, now, refreshIntervalMs, leaseMs } = options;
  const closing = new AbortController();
  let chain: Promise<void> = Promise.resolve();
  let current: ListingCheckpoint | null = null;
  let error: string | null = null;
  let storeFailed = false; // `error` came from the store (a run that could not even start), not from a listing
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let failedTimer: ReturnType<typeof setTimeout> | undefined;
  let failedDelay = FAILED_RETRY_MIN_MS;

  // Recently confirmed (by any instance) is not due: 10% slack so timers of several instances do not double up.
  const isDue = (confirmedAt: number | undefined): boolean =>
    confirmedAt === undefined || now() - confirmedAt >= refreshIntervalMs * 0.9;

  async function due(force: boolean, only: ResourceId[] | undefined): Promise<ResourceId[]> {
    const [head, tracked] = await Promise.all([store.head(), store.trackedProducts()]);
    const all: ResourceId[] = only ?? ['coupons', ...tracked.map((no): ResourceId => `options:${no}`)];
    return force ? all : all.filter((r) => isDue(head.confirmedAt[r]));
  }

  function retryLater(only: ResourceId[] | undefined): void {
    if (closing.signal.aborted || retryTimer !== undefined) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void run({ only });
    }, Math.max(50, leaseMs / 2));
    retryTimer.unref?.();
  }

  // A listing that failed (the API down or erring) is tried again after 2 s, 4 s, ... 60 s, not only at the next
  // refreshIntervalMs, until it succeeds: a relay started before the API is up serves its tills as soon as it is.
  const failing = new Set<ResourceId>();
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

  async function runOnce(force: boolean, only: ResourceId[] | undefined): Promise<void> {
    if (closing.signal.aborted) return;
    const resources = await due(force, only);
    // listed meanwhile (by any instance): nothing to try again
    for (const r of failing) if ((!only || only.includes(r)) && !resources.includes(r)) failing.delete(r);
    // the store answers again (Redis back): its failure is over, whether or not anything is due now
    if (storeFailed) [error, storeFailed] = [null, false];
    if (resources.length === 0) return;
    let lease: Lease | null = await store.acquireLease(LEASE, options.owner, leaseMs);
    if (!lease) return retryLater(only); // another instance lists: look again once its lease could have lapsed
    const lost = new AbortController();
    const signal = AbortSignal.any([closing.signal, lost.signal]);
    const renewer = setInterval(() => {
      void store.renewLease(lease!, leaseMs).then(
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
            { store, client: options.client, now, retry: options.retry, signal, lease: () => lease!, onPage: (cp) => (current = cp) },
            resource,
          );
          error = null;
          failing.delete(resource);
          options.onListed?.(resource, result);
        } catch (e) {
          if (closing.signal.aborted) break;
          // a lost lease is no failure of the listing: the instance that took it over lists
          if (!lost.signal.aborted) failing.add(resource);
          error = `${resource}: ${e instanceof Error ? e.message : String(e)}`;
          options.onError?.(resource, e);
        } finally {
          current = null;
        }
      }
    } finally {
      clearInterval(renewer);
      await store.releaseLease(lease).catch(() => undefined);
    }
    retryFailing();
  }

  function run({ force = false, only }: { force?: boolean; only?: ResourceId[] } = {}): Promise<void> {
    // one run at a time in this instance; a run asked for meanwhile follows it
    const next = chain.then(() => runOnce(force, only));
    chain = next.catch((e: unknown) => {
      error = e instanceof Error ? e.message : String(e);
      storeFailed = true;
    });
    return chain;
  }

  const timer = setInterval(() => void run(), refreshIntervalMs);
  timer.unref?.();
  // the store is back (Redis reconnected): look at once, so status stops saying degraded and due work resumes
  const offHealth = store.onHealthChange((health) => {
    if (health.ok && storeFailed) void run();
  });

  return {
    run,
    listing: () => current,
    lastError: () => error,
    close() {
      closing.abort(new Error('the relay was closed'));
      clearInterval(timer);
      offHealth();
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      clearTimeout(failedTimer);
    },
  };
}

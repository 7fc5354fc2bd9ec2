// The engine's watches by id, each following a lookup (watchLookup.ts) or the status, told to the one listener.
// The first emission of a watch is the answer of its watchFirst call.
import type { LookupResult, SyncStatus, WatchListener, WatchQuery } from '../../src/protocol';
import { planLookup } from '../lookups/lookupPlans';
import { queryError } from '../lookups/queryError';
import { watchLookup, type Watch, type WatchEnv } from '../lookups/watchLookup';
import type { DatabaseClaim } from './databaseClaim';
import type { EngineCore } from './engineCore';

type Emission = LookupResult<unknown> | SyncStatus;

export interface WatchRegistryDeps extends EngineCore, Pick<WatchEnv, 'changes' | 'cache' | 'refresh'> {
  listener: WatchListener;
  /** A lookup watch reads once the claim current at its start says it may. */
  claim: DatabaseClaim;
}

export interface WatchRegistry {
  watchFirst(id: number, query: WatchQuery): Promise<Emission | null>;
  unwatch(id: number): void;
  readonly size: number;
  /** Starts every watch again (the database was claimed again): later emissions go to the listener. */
  restartAll(): void;
  /** Back online: refreshes what is on screen, where it is due. */
  refreshIfDue(): void;
  stopAll(): void;
}

/**
 * @example const watches = createWatchRegistry({ ...core, claim, changes, cache, refresh, listener }); await
 * watches.watchFirst(1, { kind: 'coupons' });
 */
export function createWatchRegistry(deps: WatchRegistryDeps): WatchRegistry {
  const { status } = deps;
  const watches = new Map<number, { query: WatchQuery; watch: Watch | null; stop: () => void }>();

  function start(query: WatchQuery, emit: (value: Emission) => void): { watch: Watch | null; stop: () => void } {
    if (query.kind === 'status') {
      const tell = () => emit(status.get());
      tell();
      return { watch: null, stop: status.subscribe(tell) };
    }
    const invalid = queryError(query);
    const watch = watchLookup(planLookup(query, deps.options.coupons), {
      ...deps,
      ready: invalid ? Promise.resolve(invalid) : deps.claim.ready,
      emit,
    });
    return { watch, stop: () => watch.stop() };
  }

  /** Emits to the listener; with `first`, the first emission goes there instead (watchFirst's answer). */
  function follow(id: number, query: WatchQuery, first?: (value: Emission | null) => void) {
    let answer = first;
    const emit = (value: Emission) => {
      if (!answer) return deps.listener(id, value);
      answer(value);
      answer = undefined;
    };
    watches.get(id)?.stop();
    const w = start(query, emit);
    watches.set(id, {
      query,
      watch: w.watch,
      stop() {
        w.stop();
        answer?.(null);
        answer = undefined;
      },
    });
  }

  return {
    watchFirst(id, query) {
      if (deps.isClosed()) return Promise.resolve(null);
      return new Promise((resolve) => follow(id, query, resolve));
    },
    unwatch(id) {
      watches.get(id)?.stop();
      watches.delete(id);
    },
    get size() {
      return watches.size;
    },
    restartAll() {
      for (const [id, w] of watches) follow(id, w.query);
    },
    refreshIfDue() {
      for (const w of watches.values()) w.watch?.refreshIfDue();
    },
    stopAll() {
      for (const w of watches.values()) w.stop();
      watches.clear();
    },
  };
}

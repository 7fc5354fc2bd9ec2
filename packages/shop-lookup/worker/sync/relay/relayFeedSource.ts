// A shop-lookup relay's feed as the sync source (docs/feed-protocol.md). First sync: the snapshot in large
// chunks, the next chunk on its way while one is written, the cursor kept with each chunk so an interruption resumes
// there. Re-sync: `since=<version>` with If-None-Match: nothing changed is one request answered 304 and no write;
// changes go in with the new version in one transaction. A "start again" (409, or another handle) builds the new
// snapshot aside in feedStage and swaps it in once complete and caught up: the last good data answers meanwhile.
// Every answer names the relay's shop, checked before anything of it is written, and says how the relay fares.
import { ShopLookupError } from '../../../src/protocol';
import type { SyncStatus } from '../../../src/protocol';
import { applyToLive, applyToStage, checkFeed, swapInStage, type Applied } from './applyFeedChanges';
import { loadFeedState, type FeedState, type SnapshotProgress } from '../../store/feedState';
import type { ApiError, FeedEnvelope } from '@shop-lookup/shop-api';
import type { FeedReply, RelayFeedClient } from './relayFeedClient';
import { metaKey, type Confirmation, type ShopDatabase } from '../../store/store';
import type { SyncContext } from '../syncContext';
import type { SourceRun, SyncSource } from '../syncSource';
import type { UsesSender } from './usesSender';

/** Records per feed answer while reading a snapshot (the protocol's maximum). */
const SNAPSHOT_LIMIT = 10_000;
/** The unit that tells the relay this engine's products (POST relay/v1/products). */
export const PRODUCTS_UNIT = 'relay:products';
/** The unit that sends the relay this till's uses of issued coupons (POST relay/v1/uses). */
const USES_UNIT = 'relay:uses';
/** A feed that keeps saying "start again" within one sync: give up for now, keep the local data. */
const MAX_RESTARTS = 2;

/** The relay's own state, as `status().relay` shows it. */
type RelayState = NonNullable<SyncStatus['relay']>;

export interface RelayFeedSourceDeps {
  db: ShopDatabase;
  client: RelayFeedClient;
  /** Told the version the local data is at after every change of it. */
  onVersion?: (version: number | null) => void;
  /**
   * The shop an answer names (null: none): rejects with `shop_mismatch` when the database is another shop's
   * (databaseClaim.ts). Asked before anything of the answer is written.
   */
  checkShop?: (shop: string | null) => Promise<void>;
  /** Told the relay's own state after each of its answers. */
  onRelayState?: (state: RelayState) => void;
  /** Sends this till's uses of issued coupons, at every sync (when the relay takes them). */
  uses?: UsesSender;
}

/** What one long-poll round did. `resync`: the feed needs a full sync (no data yet, more waiting, start again). */
export type PollOutcome = 'unchanged' | 'applied' | 'resync';

export type RelayFeedSource = SyncSource & {
  /** One long-poll round (`wait` seconds) from the local version; never writes data of another version. */
  poll(waitS: number, signal: AbortSignal): Promise<PollOutcome>;
};

const handleChanged = () =>
  new ShopLookupError('must_refetch', "The relay's feed started a new history; its snapshot is read again.");
const mustRefetch = (error: unknown) => (error as ApiError)?.code === 'must_refetch';

function count(ctx: SyncContext, answer: FeedEnvelope, applied: Applied | null) {
  ctx.report.fetched += answer.upserts.length;
  if (!applied) return;
  ctx.report.written += applied.written;
  ctx.report.deleted += applied.deleted;
  ctx.report.rejected += applied.errors.length;
  ctx.report.errors.push(...applied.errors);
}

/**
 * @example const source = createRelayFeedSource({ db, client: createRelayFeedClient({ baseUrl, fetch, timeoutMs })
 * });
 */
export function createRelayFeedSource(deps: RelayFeedSourceDeps): RelayFeedSource {
  const { db, client } = deps;
  const posted = new Set<number>();
  let relayState: RelayState | null = null;

  const tell = (state: RelayState) => {
    const same =
      relayState &&
      relayState.degraded === state.degraded &&
      relayState.error === state.error &&
      relayState.listedAt === state.listedAt;
    relayState = state;
    if (!same) deps.onRelayState?.(state);
  };

  /** An answer with a body: its shop checked first (another shop's relay writes nothing), then its state told. */
  async function heard(answer: FeedEnvelope): Promise<void> {
    await deps.checkShop?.(typeof answer.shop === 'string' && answer.shop !== '' ? answer.shop : null);
    tell({
      degraded: answer.relay?.degraded === true,
      error: answer.relay?.error ?? null,
      listedAt: answer.confirmedAt.coupons ?? null,
    });
  }

  /** A 304: nothing changed, nothing newly confirmed (the ETag has the confirmations and the degraded mark in it). */
  async function heardUnchanged(degraded: boolean): Promise<void> {
    // after a restart the listing time is the stored confirmation: what the relay confirmed last
    const stored = relayState
      ? null
      : ((await db.meta.get(metaKey.coupons).catch(() => undefined)) as Confirmation | undefined);
    const listedAt = relayState ? relayState.listedAt : (stored?.confirmedAt ?? null);
    tell({ degraded, error: degraded && relayState?.degraded ? relayState.error : null, listedAt });
  }

  const ask = (ctx: SyncContext, query: Record<string, string | number>, etag: string | null = null) =>
    ctx.call(() => client.feed(query, { signal: ctx.signal, counter: ctx.report, etag }));

  /** Tells the relay about products it was not told of by this engine yet (the set is shop-wide). */
  async function postProducts(ctx: SyncContext, products: number[]) {
    const fresh = products.filter((p) => !posted.has(p));
    if (fresh.length === 0) return;
    await ctx.call(() => client.postProducts(fresh, { signal: ctx.signal, counter: ctx.report }));
    for (const p of fresh) posted.add(p);
  }

  /** Reads the snapshot from where it stands (or from its start), then its catch-up; swaps a staged one in. */
  async function readSnapshot(ctx: SyncContext, state: FeedState): Promise<FeedState> {
    let snap = state.snapshot;
    let reply: Promise<FeedReply>;
    if (!snap) {
      const empty = state.version === null && (await db.coupons.count()) === 0;
      reply = ask(ctx, { limit: SNAPSHOT_LIMIT });
      reply.catch(() => undefined); // handled when awaited (it may be answered while the stage is still cleared)
      snap = { handle: '', version: 0, cursor: '', mode: empty ? 'direct' : 'staged', done: 0 };
      if (snap.mode === 'staged') await db.feedStage.clear();
    } else {
      reply = ask(
        ctx,
        snap.cursor === null
          ? { since: snap.version, handle: snap.handle }
          : { cursor: snap.cursor, handle: snap.handle, limit: SNAPSHOT_LIMIT },
      );
    }
    // one chunk's transaction commits while the next chunk is fetched and checked (IndexedDB runs them in order)
    let writing: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        const r = await reply;
        if (r.status === 304) throw new Error('the relay answered 304 to a request without If-None-Match');
        const { answer } = r;
        await heard(answer);
        if (snap.handle !== '' && answer.handle !== snap.handle) throw handleChanged();
        const inSnapshot = answer.kind === 'snapshot';
        const next: SnapshotProgress = {
          ...snap,
          handle: answer.handle,
          // a snapshot's version is its first chunk's; the catch-up moves it on
          version: snap.handle === '' || !inSnapshot ? answer.version : snap.version,
          cursor: inSnapshot ? answer.cursor : null,
          done: snap.done + answer.upserts.length,
        };
        const caughtUp = !inSnapshot && !answer.more;
        // ask for what follows while this answer is checked and written
        if (!caughtUp) {
          reply = ask(
            ctx,
            next.cursor !== null
              ? { cursor: next.cursor, handle: next.handle, limit: SNAPSHOT_LIMIT }
              : { since: next.version, handle: next.handle },
          );
          reply.catch(() => undefined); // handled when awaited
        }
        const feed = checkFeed(answer);
        const nextState: FeedState = { ...state, snapshot: next };
        await writing;
        if (caughtUp && next.mode === 'staged') {
          const applied = await applyToStage(db, feed, nextState);
          const final: FeedState = {
            ...state,
            handle: next.handle,
            version: next.version,
            etag: r.etag,
            snapshot: null,
          };
          const { written } = await swapInStage(db, answer, final);
          count(ctx, answer, { ...applied, written });
          return final;
        }
        if (caughtUp) {
          const final: FeedState = {
            ...state,
            handle: next.handle,
            version: next.version,
            etag: r.etag,
            snapshot: null,
          };
          count(ctx, answer, await applyToLive(db, feed, answer, final, state, true));
          return final;
        }
        const write =
          next.mode === 'direct'
            ? applyToLive(db, feed, answer, nextState, state, false)
            : applyToStage(db, feed, nextState);
        writing = write.then((applied) => {
          count(ctx, answer, applied);
          ctx.progress?.('coupons', next.done, null);
        });
        state = nextState;
        snap = next;
      }
    } catch (error) {
      await writing.catch(() => undefined); // no write left under way when the sync ends
      throw error;
    }
  }

  /** Applies the changes since the local version until none are waiting. */
  async function catchUp(ctx: SyncContext, state: FeedState): Promise<FeedState> {
    for (;;) {
      const r = await ask(ctx, { since: state.version!, handle: state.handle! }, state.etag);
      if (r.status === 304) {
        await heardUnchanged(r.degraded);
        return state;
      }
      await heard(r.answer);
      const outcome = await applyChanges(r, state);
      count(ctx, r.answer, outcome.applied);
      state = outcome.state;
      if (!r.answer.more) return state;
    }
  }

  /** Applies one changes answer asked from `state`; another writer having moved on first is not an error. */
  async function applyChanges(r: Extract<FeedReply, { status: 200 }>, state: FeedState) {
    const { answer } = r;
    if (answer.kind !== 'changes' || answer.handle !== state.handle) throw handleChanged();
    const next: FeedState = { ...state, version: answer.version, etag: answer.more ? null : r.etag };
    const applied = await applyToLive(db, checkFeed(answer), answer, next, state, true);
    if (applied) deps.onVersion?.(next.version);
    return { applied, state: applied ? next : await loadFeedState(db) };
  }

  async function syncFeed(ctx: SyncContext): Promise<void> {
    let state = await loadFeedState(db);
    const before = state.handle;
    let again = false;
    for (let restarts = 0; ; ) {
      try {
        state =
          again || state.snapshot || state.version === null
            ? await readSnapshot(ctx, state)
            : await catchUp(ctx, state);
        deps.onVersion?.(state.version);
        // a new feed is a relay that started over and may have forgotten this till's uses: they go again (the
        // outbox's watcher sends them now)
        if (before !== null && state.handle !== null && state.handle !== before) await deps.uses?.refill();
        return;
      } catch (error) {
        if (!mustRefetch(error) || ++restarts > MAX_RESTARTS) throw error;
        // start again aside: the local data keeps answering until the new snapshot is complete
        state = { ...(await loadFeedState(db)), snapshot: null };
        again = true;
      }
    }
  }

  /**
   * No data yet: waits (a long-poll) until the relay has a snapshot to give, then asks for the full sync that takes
   * it. A relay that has not finished its first listing holds the request until it has ('unchanged' when the wait
   * ended first: the next round waits again).
   */
  async function waitForSnapshot(waitS: number, signal: AbortSignal): Promise<PollOutcome> {
    try {
      await client.feed({ limit: 1, wait: waitS }, { signal, extraTimeoutMs: waitS * 1000 });
      return 'resync';
    } catch (error) {
      if ((error as ApiError)?.code === 'relay_not_ready') return 'unchanged';
      throw error;
    }
  }

  /**
   * The products, this till's uses (first: the feed read next then has them), the feed; each unit unless the sync
   * stops.
   */
  async function syncUnits(run: SourceRun, products: number[]) {
    // a relay that does not let this client add products (a storefront) still serves it the feed
    if (!(await run.unit(PRODUCTS_UNIT, () => postProducts(run.ctx, products)))) return;
    // (a relay that takes no uses from this client is no unit of the sync: nothing of it was asked or refused)
    const uses = deps.uses;
    if (
      uses &&
      (await uses.takesUses(run.ctx.signal)) &&
      !(await run.unit(USES_UNIT, () => uses.send(run.ctx.call, run.ctx.report).then(() => undefined)))
    )
      return;
    await run.unit(metaKey.coupons, () => syncFeed(run.ctx));
  }

  return {
    kind: 'relay',
    async syncAll(run, products) {
      await syncUnits(run, products);
      const options = (await db.meta.get('options').catch(() => undefined)) as Confirmation | undefined;
      return products.length > 0 && run.ctx.report.complete ? (options?.confirmedAt ?? null) : null;
    },
    async syncProducts(run, products) {
      await syncUnits(run, products);
    },
    async poll(waitS, signal) {
      const state = await loadFeedState(db);
      if (state.snapshot) return 'resync';
      if (state.version === null) return waitForSnapshot(waitS, signal);
      const query = { since: state.version, handle: state.handle!, wait: waitS };
      let r: FeedReply;
      try {
        r = await client.feed(query, { signal, etag: state.etag, extraTimeoutMs: waitS * 1000 });
        if (r.status === 304) {
          await heardUnchanged(r.degraded);
          return 'unchanged';
        }
        await heard(r.answer);
        const { state: after } = await applyChanges(r, state);
        return r.answer.more || after.version !== r.answer.version ? 'resync' : 'applied';
      } catch (error) {
        if (mustRefetch(error)) return 'resync';
        throw error;
      }
    },
  };
}

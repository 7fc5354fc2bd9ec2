// The shop's upstream budget (list 1/s, other 5/s, shared by every instance) shared fairly between the clients of one
// server: each client's requests wait in a short queue of their own, and each slot the limiter grants goes to the
// client served least recently, so a client that floods only lengthens its own queue (past its bound it is refused
// with 429) and a client that asks now and then is served within one round of the others. Identified clients (tills
// by their token) are a lane of their own: they take the next slot when they ask, and TILL_SHARE of the slots while
// both lanes wait, so a till never queues behind anonymous traffic however many addresses it comes from (and
// anonymous readers are not starved by a till that floods); an anonymous request waits at most `anonymousWaitMs`,
// then it is refused with a Retry-After instead of waiting on (a flood of networks never parks a reader for a
// minute). The server's own work (the relay's listing, token requests) keeps a reserved share of the slots while it
// waits.
import { setMaxListeners } from 'node:events';
import {
  createWaiterQueue,
  type Priority,
  type RateLimiter,
  type RequestClass,
  ShopLookupError,
  type WaiterQueue,
} from '@shop-lookup/shop-api';
import type { Client } from './clientIdentity';

export interface FairShareOptions {
  /** The shop-wide limiter every slot comes from (the relay's store's, shared by its instances). */
  limiter: RateLimiter;
  /** Upstream requests one client may have waiting; one more is refused (`too_many_requests`). */
  queued: number;
  /** Share of the slots kept for the server's own work while it waits (0 to 1); the clients get the rest. */
  ownShare: number;
  /** Requests per second of each class (for the Retry-After of a refusal); false: none. */
  limits: { list: number; other: number } | false;
  /**
   * Longest an anonymous client's request waits for its turn, ms; then it is refused (`too_many_requests`, with a
   * Retry-After of about one round of the anonymous clients). Identified clients wait as long as it takes (they go
   * first). Default Infinity.
   */
  anonymousWaitMs?: number | undefined;
}

export interface FairShare {
  /**
   * The limiter for one client's requests: they wait their turn among the clients' (the tills' lane or the
   * anonymous one); `gone` gives up a wait when nobody waits for its answer any more (the client hung up).
   */
  forClient(client: Client, gone?: AbortSignal): RateLimiter;
  /** The limiter for the server's own work: its reserved share. */
  readonly own: RateLimiter;
  /** Who got each of the last 1,000 slots, oldest first ('own' or a client id). */
  served(cls: RequestClass): readonly string[];
  /** Requests waiting for a slot now (every class, own work included). */
  waiting(): number;
  dispose(): void;
}

interface ClientTurn {
  id: string;
  identified: boolean;
  queue: WaiterQueue;
  /**
   * The slot number this client was last served at; a new client counts as served when it came, so it joins the
   * end of the round under way (a flood of new addresses does not go ahead of the tills served before it).
   */
  servedAt: number;
  /** Arrival order among clients, for ties. */
  since: number;
}

interface ClassState {
  cls: RequestClass;
  clients: Map<string, ClientTurn>;
  /** Identified clients with a request waiting (the tills' lane). */
  tills: Set<ClientTurn>;
  /** Anonymous clients with a request waiting. */
  anonymous: Set<ClientTurn>;
  own: WaiterQueue;
  granting: boolean;
  /** Slots the own work is owed while it waits: grows by ownShare per contested slot, spent one at a time. */
  credit: number;
  /** The same for the tills' lane against the anonymous one (full when a till starts waiting: it goes next). */
  tillCredit: number;
  slots: number;
  log: string[];
}

/** Client entries kept for their place in the turn; idle ones beyond this are forgotten (they then go ahead). */
const SWEEP_AT = 1_000;
const LOG_MAX = 1_000;
/** Share of the clients' slots the tills' lane takes while anonymous clients wait too. */
const TILL_SHARE = 0.75;
/** The longest Retry-After a refused turn names (a round of thousands of clients is still "a minute"). */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * @example const fair = createFairShare({ limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } }); await
 * fair.forClient({ id: ip, identified: false }).acquire('other', 'user');
 */
export function createFairShare(options: FairShareOptions): FairShare {
  const { limiter } = options;
  const ownShare = Math.min(1, Math.max(0, options.ownShare));
  const closing = new AbortController();
  setMaxListeners(0, closing.signal); // every slot asked for listens to it
  let arrivals = 0;

  const classes = (['list', 'other'] as const).map((cls): ClassState => {
    const state: ClassState = {
      cls,
      clients: new Map(),
      tills: new Set(),
      anonymous: new Set(),
      own: createWaiterQueue(() => pump(state)),
      granting: false,
      credit: 0,
      tillCredit: 1,
      slots: 0,
      log: [],
    };
    return state;
  });
  const byName = (cls: RequestClass): ClassState => classes[cls === 'list' ? 0 : 1]!;

  /** The client of one lane served least recently among those waiting (ties: the one that came first). */
  function nextIn(lane: Set<ClientTurn>): ClientTurn | undefined {
    let best: ClientTurn | undefined;
    for (const turn of lane) {
      if (turn.queue.length === 0) {
        lane.delete(turn); // its requests were abandoned
        continue;
      }
      if (!best || turn.servedAt < best.servedAt || (turn.servedAt === best.servedAt && turn.since < best.since))
        best = turn;
    }
    return best;
  }

  /** The next client: a till's when only tills wait or it is the tills' lane's turn, else an anonymous one's. */
  function nextClient(c: ClassState, spend: boolean): ClientTurn | undefined {
    const till = nextIn(c.tills);
    const anonymous = nextIn(c.anonymous);
    if (!till || !anonymous) return till ?? anonymous;
    if (!spend) return till;
    c.tillCredit = Math.min(1 + TILL_SHARE, c.tillCredit + TILL_SHARE);
    if (c.tillCredit < 1) return anonymous;
    c.tillCredit -= 1;
    return till;
  }

  const laneOf = (c: ClassState, turn: ClientTurn): Set<ClientTurn> => (turn.identified ? c.tills : c.anonymous);

  /** Hands one granted slot on: to the own work when it is its turn, else to the next client. */
  function give(c: ClassState): void {
    c.slots++;
    const anyClient = nextClient(c, false);
    const ownWaits = c.own.length > 0;
    let ownTurn = ownWaits && !anyClient;
    if (ownWaits && anyClient) {
      c.credit = Math.min(1 + ownShare, c.credit + ownShare);
      ownTurn = c.credit >= 1;
      if (ownTurn) c.credit -= 1;
    }
    if (ownTurn) {
      c.own.release();
      note(c, 'own');
      return;
    }
    const client = nextClient(c, true);
    if (!client) return; // everybody gave up meanwhile: the slot is spent as if used
    client.servedAt = c.slots;
    client.queue.release();
    if (client.queue.length === 0) laneOf(c, client).delete(client);
    note(c, client.id);
  }

  function note(c: ClassState, who: string): void {
    c.log.push(who);
    if (c.log.length > LOG_MAX) c.log.splice(0, c.log.length - LOG_MAX);
  }

  function pump(c: ClassState): void {
    if (c.granting || closing.signal.aborted) return;
    if (c.own.length === 0 && nextClient(c, false) === undefined) return;
    // one slot asked of the shop-wide limiter at a time: whose it is is decided when it is granted
    c.granting = true;
    limiter.acquire(c.cls, 'user', closing.signal).then(
      () => {
        c.granting = false;
        give(c);
        pump(c);
      },
      (error: unknown) => {
        c.granting = false;
        c.own.rejectAll(error);
        for (const turn of c.clients.values()) turn.queue.rejectAll(error);
        c.tills.clear();
        c.anonymous.clear();
      },
    );
  }

  function sweep(c: ClassState): void {
    for (const [id, turn] of c.clients) {
      if (turn.queue.length === 0 && c.slots - turn.servedAt > SWEEP_AT) c.clients.delete(id);
    }
  }

  /** A request refused its turn, with a Retry-After of about one round of the clients of its lane waiting now. */
  function refusal(c: ClassState, lane: Set<ClientTurn>, message: string): ShopLookupError {
    const perSecond = options.limits === false ? Infinity : options.limits[c.cls];
    const roundMs = Number.isFinite(perSecond) ? ((lane.size + 1) / perSecond) * 1000 : 1000;
    const error = new ShopLookupError('too_many_requests', message, { status: 429 }) as ShopLookupError & {
      retryAfterMs: number;
    };
    error.retryAfterMs = Math.min(MAX_RETRY_AFTER_MS, Math.max(1000, Math.ceil(roundMs)));
    return error;
  }

  const queueFull = (c: ClassState, lane: Set<ClientTurn>): ShopLookupError =>
    refusal(
      c,
      lane,
      `TOO MANY REQUESTS: this client already has ${options.queued} requests waiting for the shop API ` +
        '(its share is served in turn with the other clients); try again after the Retry-After delay.',
    );

  const waitedTooLong = (c: ClassState, lane: Set<ClientTurn>, ms: number): ShopLookupError =>
    refusal(
      c,
      lane,
      `TOO MANY REQUESTS: this request waited ${ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`} for its turn at the shop API, the most an ` +
        "anonymous client's request waits while many clients ask (signed-in tills go first); try again after the Retry-After delay.",
    );

  const view = (acquire: RateLimiter['acquire']): RateLimiter => ({
    acquire,
    pause: (cls, ms) => limiter.pause(cls, ms),
    dispose: () => undefined, // the share is disposed as a whole
  });

  return {
    forClient(client, gone) {
      const key = `${client.identified ? 'till' : 'anonymous'} ${client.id}`;
      return view((cls: RequestClass, _priority: Priority, signal?: AbortSignal) => {
        if (closing.signal.aborted) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
        const c = byName(cls);
        let turn = c.clients.get(key);
        if (!turn) {
          if (c.clients.size >= SWEEP_AT) sweep(c);
          turn = {
            id: client.id,
            identified: client.identified,
            queue: createWaiterQueue(() => pump(c)),
            servedAt: c.slots,
            since: arrivals++,
          };
          c.clients.set(key, turn);
        }
        const lane = laneOf(c, turn);
        if (turn.queue.length >= options.queued) return Promise.reject(queueFull(c, lane));
        if (turn.queue.length === 0) turn.since = arrivals++;
        // a till that starts waiting while no till waited takes the next slot the clients get
        if (turn.identified && nextIn(c.tills) === undefined) c.tillCredit = Math.max(c.tillCredit, 1);
        lane.add(turn);
        const given = [signal, gone].filter((s): s is AbortSignal => s !== undefined);
        const maxWait = options.anonymousWaitMs ?? Infinity;
        if (turn.identified || !Number.isFinite(maxWait))
          return turn.queue.wait('user', given.length > 1 ? AbortSignal.any(given) : given[0]);
        // an anonymous request waits so long at most, then is refused (its place in the queue given up)
        const bounded = new AbortController();
        const timer = setTimeout(() => bounded.abort(waitedTooLong(c, lane, maxWait)), maxWait);
        const waiting = turn.queue.wait('user', AbortSignal.any([...given, bounded.signal]));
        void waiting.then(
          () => clearTimeout(timer),
          () => clearTimeout(timer),
        );
        return waiting;
      });
    },
    own: view((cls, priority, signal) => {
      if (closing.signal.aborted) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
      return byName(cls).own.wait(priority, signal);
    }),
    served: (cls) => byName(cls).log,
    waiting: () =>
      classes.reduce(
        (sum, c) => sum + c.own.length + [...c.tills, ...c.anonymous].reduce((n, turn) => n + turn.queue.length, 0),
        0,
      ),
    dispose() {
      if (closing.signal.aborted) return;
      closing.abort(new ShopLookupError('closed', 'shop-lookup was closed.'));
      for (const c of classes) {
        c.own.rejectAll(closing.signal.reason);
        for (const turn of c.clients.values()) turn.queue.rejectAll(closing.signal.reason);
        c.tills.clear();
        c.anonymous.clear();
      }
    },
  };
}

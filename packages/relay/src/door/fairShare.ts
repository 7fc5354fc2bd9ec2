// The shop's upstream budget (list 1/s, other 5/s, shared by every instance) shared fairly between the clients of one
// server: each client's requests wait in a short queue of their own, and each slot the limiter grants goes to the
// client served least recently, so a client that floods only lengthens its own queue (past its bound it is refused
// with 429) and a till that asks now and then is served within one round of the others. The server's own work (the
// relay's listing, token requests) keeps a reserved share of the slots while it waits.
import { setMaxListeners } from 'node:events';
import { createWaiterQueue, type Priority, type RateLimiter, type RequestClass, ShopLookupError, type WaiterQueue } from '@shop-lookup/shop-api';

export interface FairShareOptions {
  /** The shop-wide limiter every slot comes from (the relay's store's, shared by its instances). */
  limiter: RateLimiter;
  /** Upstream requests one client may have waiting; one more is refused (`too_many_requests`). */
  queued: number;
  /** Share of the slots kept for the server's own work while it waits (0 to 1); the clients get the rest. */
  ownShare: number;
  /** Requests per second of each class (for the Retry-After of a refusal); false: none. */
  limits: { list: number; other: number } | false;
}

export interface FairShare {
  /** The limiter for one client's requests: they wait their turn among the clients'. */
  forClient(clientId: string): RateLimiter;
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
  /** Clients with a request waiting. */
  waiting: Set<ClientTurn>;
  own: WaiterQueue;
  granting: boolean;
  /** Slots the own work is owed while it waits: grows by ownShare per contested slot, spent one at a time. */
  credit: number;
  slots: number;
  log: string[];
}

/** Client entries kept for their place in the turn; idle ones beyond this are forgotten (they then go ahead). */
const SWEEP_AT = 1_000;
const LOG_MAX = 1_000;

/** @example const fair = createFairShare({ limiter, queued: 4, ownShare: 0.75, limits: { list: 1, other: 5 } }); await fair.forClient(ip).acquire('other', 'user'); */
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
      waiting: new Set(),
      own: createWaiterQueue(() => pump(state)),
      granting: false,
      credit: 0,
      slots: 0,
      log: [],
    };
    return state;
  });
  const byName = (cls: RequestClass): ClassState => classes[cls === 'list' ? 0 : 1]!;

  /** The client served least recently among those waiting (ties: the one that came first). */
  function nextClient(c: ClassState): ClientTurn | undefined {
    let best: ClientTurn | undefined;
    for (const turn of c.waiting) {
      if (turn.queue.length === 0) {
        c.waiting.delete(turn); // its requests were abandoned
        continue;
      }
      if (!best || turn.servedAt < best.servedAt || (turn.servedAt === best.servedAt && turn.since < best.since)) best = turn;
    }
    return best;
  }

  /** Hands one granted slot on: to the own work when it is its turn, else to the next client. */
  function give(c: ClassState): void {
    c.slots++;
    const client = nextClient(c);
    const ownWaits = c.own.length > 0;
    let ownTurn = ownWaits && !client;
    if (ownWaits && client) {
      c.credit = Math.min(1 + ownShare, c.credit + ownShare);
      ownTurn = c.credit >= 1;
      if (ownTurn) c.credit -= 1;
    }
    if (ownTurn) {
      c.own.release();
      note(c, 'own');
      return;
    }
    if (!client) return; // everybody gave up meanwhile: the slot is spent as if used
    client.servedAt = c.slots;
    client.queue.release();
    if (client.queue.length === 0) c.waiting.delete(client);
    note(c, client.id);
  }

  function note(c: ClassState, who: string): void {
    c.log.push(who);
    if (c.log.length > LOG_MAX) c.log.splice(0, c.log.length - LOG_MAX);
  }

  function pump(c: ClassState): void {
    if (c.granting || closing.signal.aborted) return;
    if (c.own.length === 0 && nextClient(c) === undefined) return;
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
        c.waiting.clear();
      },
    );
  }

  function sweep(c: ClassState): void {
    for (const [id, turn] of c.clients) {
      if (turn.queue.length === 0 && c.slots - turn.servedAt > SWEEP_AT) c.clients.delete(id);
    }
  }

  function refusal(c: ClassState): ShopLookupError {
    const perSecond = options.limits === false ? Infinity : options.limits[c.cls];
    // about one round of the clients waiting now, at the class's rate
    const roundMs = Number.isFinite(perSecond) ? ((c.waiting.size + 1) / perSecond) * 1000 : 1000;
    const error = new ShopLookupError(
      'too_many_requests',
      `TOO MANY REQUESTS: this client already has ${options.queued} requests waiting for the shop API ` +
        '(its share is served in turn with the other clients); try again after the Retry-After delay.',
      { status: 429 },
    ) as ShopLookupError & { retryAfterMs: number };
    error.retryAfterMs = Math.max(1000, Math.ceil(roundMs));
    return error;
  }

  const view = (acquire: RateLimiter['acquire']): RateLimiter => ({
    acquire,
    pause: (cls, ms) => limiter.pause(cls, ms),
    dispose: () => undefined, // the share is disposed as a whole
  });

  return {
    forClient(clientId) {
      return view((cls: RequestClass, _priority: Priority, signal?: AbortSignal) => {
        if (closing.signal.aborted) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
        const c = byName(cls);
        let turn = c.clients.get(clientId);
        if (!turn) {
          if (c.clients.size >= SWEEP_AT) sweep(c);
          turn = { id: clientId, queue: createWaiterQueue(() => pump(c)), servedAt: c.slots, since: arrivals++ };
          c.clients.set(clientId, turn);
        }
        if (turn.queue.length >= options.queued) return Promise.reject(refusal(c));
        if (turn.queue.length === 0) turn.since = arrivals++;
        c.waiting.add(turn);
        return turn.queue.wait('user', signal);
      });
    },
    own: view((cls, priority, signal) => {
      if (closing.signal.aborted) return Promise.reject(new ShopLookupError('closed', 'shop-lookup was closed.'));
      return byName(cls).own.wait(priority, signal);
    }),
    served: (cls) => byName(cls).log,
    waiting: () =>
      classes.reduce((sum, c) => sum + c.own.length + [...c.waiting].reduce((n, turn) => n + turn.queue.length, 0), 0),
    dispose() {
      if (closing.signal.aborted) return;
      closing.abort(new ShopLookupError('closed', 'shop-lookup was closed.'));
      for (const c of classes) {
        c.own.rejectAll(closing.signal.reason);
        for (const turn of c.clients.values()) turn.queue.rejectAll(closing.signal.reason);
        c.waiting.clear();
      }
    },
  };
}

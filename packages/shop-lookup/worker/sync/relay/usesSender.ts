// Sends the relay this till's uses of issued coupons (POST relay/v1/uses): every one waiting in the outbox, in
// batches, right after a verdict that accepted one and at every sync (a till back online sends what it accepted
// offline), then the releases (voided sales) the same way. A use leaves the outbox only once the relay acknowledged
// it, in the transaction that marks its journal entry shared (and conflicting, when the relay says so): a lost answer
// sends it again, which the relay records once. An online verdict's use is first sent alone as a claim (`claim`),
// within a short bound: the relay records it only as the voucher's first. Only to a relay whose discovery lists `uses`
// for this client; a till without one keeps them in its outbox.
import {
  type ApiError,
  badResponseError,
  MAX_USES_PER_POST,
  RELAY_PATHS,
  type ReleaseSent,
  sleep,
  type UseSent,
} from '@shop-lookup/shop-api';
import { deviceIdOf } from '../../store/deviceId';
import { ShopLookupError } from '../../../src/protocol';
import type { ClaimAnswer, OutgoingUse, ShopDatabase, TillUse } from '../../store/store';
import type { RelayFeedClient, ReleaseAck, UseAck } from './relayFeedClient';
import { markConflicts } from './useConflicts';

/**
 * At most this many bytes of JSON per request (the route takes MAX_USES_BODY_BYTES, 64 kB, and MAX_USES_PER_POST uses;
 * an order id alone may take 800).
 */
const MAX_BODY_BYTES = 60_000;

export interface UsesSenderDeps {
  db: ShopDatabase;
  client: Pick<RelayFeedClient, 'postUses'> & Partial<Pick<RelayFeedClient, 'claimUse' | 'postReleases'>>;
  /** Whether the relay takes uses from this client (its discovery lists `uses`). */
  takesUses(signal?: AbortSignal): Promise<boolean>;
  now(): number;
  signal?: AbortSignal;
}

export interface UsesSender {
  /** Whether the relay takes uses from this client (its discovery lists `uses`): else nothing is ever sent. */
  takesUses(signal?: AbortSignal): Promise<boolean>;
  /**
   * Sends every use in the outbox; `call` runs each request (the retry unit of the caller's work). A send under way
   * is joined, and runs once more for what arrived meanwhile. Resolves how many the relay acknowledged; rejects with
   * the request's error (the rest stays in the outbox for the next send).
   */
  send(call: <T>(step: () => Promise<T>) => Promise<T>, counter?: { requests: number }): Promise<number>;
  /**
   * Sends one use (its outbox row, written with its journal entry) as a claim and waits at most `timeoutMs`: granted,
   * it leaves the outbox and its entry is marked shared (and `claim: 'granted'`), as an acknowledged use; refused, it
   * stays for the checkout to drop; no answer in time or an error, it is sent again as any use. `{ claim: null }`:
   * the relay takes no uses.
   */
  claim(use: OutgoingUse, timeoutMs: number): Promise<ClaimAnswer>;
  /**
   * The relay started over (a new feed: a memory store restarted, Redis restarted empty): every use this database
   * holds that the shop API has not confirmed (its till uses), accepted within REFILL_MS, goes back into the outbox to
   * be sent again (the relay records each once). Only this database's own uses. Resolves how many.
   */
  refill(): Promise<number>;
}

/** Uses older than this are not sent again to a relay that started over (the relay's default retention). */
const REFILL_MS = 30 * 24 * 60 * 60 * 1000;

/** A row sent as a claim is left alone by the batches this long (its claim settles it sooner; a crash, later). */
const CLAIM_HOLD_MS = 30_000;

const encoder = new TextEncoder();

/** Rejects once `signal` aborts (a wait that must not outlast the claim's bound). */
const aborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/** A row as POST relay/v1/uses takes it. */
const asSentUse = ({ entry, code, couponCode, orderId, at, override }: OutgoingUse): UseSent => ({
  entry,
  code,
  couponCode,
  orderId,
  at,
  override,
});
const asSentRelease = ({ entry, code, release }: OutgoingUse): ReleaseSent => ({ entry, code, use: release! });

/**
 * One device's uses, oldest first, within the route's bounds (an outbox of several devices: clear() made a new one).
 */
async function nextBatch(
  db: ShopDatabase,
  now: number,
  releases = false,
): Promise<{ device: string; uses: OutgoingUse[] } | null> {
  // (the releases after the uses: a release's use reaches the relay before it; a claim's row waits for its claim)
  const waiting = await db.outbox
    .filter(
      (u) => (u.release !== undefined) === releases && !(u.claiming !== undefined && u.claiming > now - CLAIM_HOLD_MS),
    )
    .limit(MAX_USES_PER_POST)
    .toArray();
  if (waiting.length === 0) return null;
  const device = waiting[0]!.device;
  const uses: OutgoingUse[] = [];
  let bytes = 0;
  for (const use of waiting.sort((a, b) => a.at - b.at)) {
    if (use.device !== device) continue;
    bytes += encoder.encode(JSON.stringify(use.release === undefined ? asSentUse(use) : asSentRelease(use))).length + 1;
    if (bytes > MAX_BODY_BYTES && uses.length > 0) break;
    uses.push(use);
  }
  return { device, uses };
}

/**
 * Uses kept from schema version 6 (a `TillUse` without a device) go into the outbox once, under this database's
 * device, with what their journal entry says (an entry cleared since: no coupon code, no override).
 */
async function adoptEarlierUses(db: ShopDatabase): Promise<void> {
  await db.transaction('rw', [db.tillUses, db.journal, db.outbox, db.meta], async () => {
    const earlier = (await db.tillUses.toArray()).filter((u) => u.device === undefined);
    if (earlier.length === 0) return;
    const device = await deviceIdOf(db);
    const entries = await db.journal.bulkGet(earlier.map((u) => u.journalId));
    await db.outbox.bulkPut(
      earlier.map((u, i): OutgoingUse => {
        const e = entries[i]?.key === u.key ? entries[i] : undefined;
        return {
          entry: u.key,
          device,
          code: u.code,
          couponCode: e?.couponCode ?? null,
          orderId: u.orderId,
          at: u.at,
          override: e?.overrides.includes('repeat_use') ?? false,
        };
      }),
    );
    await db.tillUses.bulkPut(earlier.map((u): TillUse => ({ ...u, device })));
  });
}

/**
 * Takes the relay's word on a batch: acknowledged uses leave the outbox, their entries are marked shared (and
 * conflicting).
 */
async function acknowledge(
  db: ShopDatabase,
  sent: UseSent[],
  acks: UseAck[],
  at: number,
  claimed = false,
): Promise<number> {
  const ours = new Set(sent.map((u) => u.entry));
  const taken = acks.filter((a) => ours.has(a.entry));
  await db.transaction('rw', [db.outbox, db.journal], async () => {
    const entries = taken.map((a) => a.entry);
    await db.outbox.bulkDelete(entries);
    // (a claim granted: its entry says so in the same write)
    await db.journal
      .where('key')
      .anyOf(entries)
      .modify(claimed ? { shared: at, claim: 'granted' } : { shared: at });
    await markConflicts(
      db,
      // (the answer's conflict is the code's first use: the one that keeps the voucher)
      taken.flatMap((a) => (a.conflict ? [{ entry: a.entry, conflict: { ...a.conflict, first: true } }] : [])),
    );
  });
  return taken.length;
}

/**
 * Takes the relay's word on releases: each answered leaves the outbox, its entry is marked shared; those it refused
 * (another till's use) are returned.
 */
async function acknowledgeReleases(db: ShopDatabase, sent: ReleaseSent[], acks: ReleaseAck[], at: number) {
  const ours = new Set(sent.map((r) => r.entry));
  const taken = acks.filter((a) => ours.has(a.entry));
  await db.transaction('rw', [db.outbox, db.journal], async () => {
    const entries = taken.map((a) => a.entry);
    await db.outbox.bulkDelete(entries);
    await db.journal.where('key').anyOf(entries).modify({ shared: at });
  });
  return { taken: taken.length, refused: taken.filter((a) => a.refused) };
}

/**
 * @example const sender = createUsesSender({ db, client, takesUses, now }); await sender.send((step) => retry(step,
 * policy));
 */
export function createUsesSender(deps: UsesSenderDeps): UsesSender {
  const { db } = deps;
  let adopted: Promise<void> | null = null;
  let running: Promise<number> | null = null;
  let again = false;

  async function drain(
    call: <T>(step: () => Promise<T>) => Promise<T>,
    counter?: { requests: number },
  ): Promise<number> {
    if (!(await deps.takesUses(deps.signal))) return 0;
    await (adopted ??= adoptEarlierUses(db).catch((error: unknown) => {
      adopted = null;
      throw error;
    }));
    let acknowledged = 0;
    for (let batch = await nextBatch(db, deps.now()); batch; batch = await nextBatch(db, deps.now())) {
      const { device } = batch;
      const uses = batch.uses.map(asSentUse);
      const acks = await call(() => deps.client.postUses(device, uses, { signal: deps.signal, counter }));
      const taken = await acknowledge(db, uses, acks, deps.now());
      // (an answer that takes none of them would send the same batch for ever)
      if (taken === 0)
        throw badResponseError(
          { method: 'POST', path: RELAY_PATHS.uses },
          200,
          'the answer acknowledges none of the uses sent',
        );
      acknowledged += taken;
    }
    const refused: string[] = [];
    const postReleases = deps.client.postReleases?.bind(deps.client) ?? (async () => []);
    for (
      let batch = deps.client.postReleases ? await nextBatch(db, deps.now(), true) : null;
      batch;
      batch = await nextBatch(db, deps.now(), true)
    ) {
      const { device } = batch;
      const releases = batch.uses.map(asSentRelease);
      const acks = await call(() => postReleases(device, releases, { signal: deps.signal, counter }));
      const { taken, refused: no } = await acknowledgeReleases(db, releases, acks, deps.now());
      if (taken === 0)
        throw badResponseError(
          { method: 'POST', path: RELAY_PATHS.uses },
          200,
          'the answer acknowledges none of the releases sent',
        );
      refused.push(...no.map((a) => batch!.uses.find((u) => u.entry === a.entry)!.code));
      acknowledged += taken;
    }
    if (refused.length > 0)
      throw new ShopLookupError(
        'release_refused',
        `The shop's relay did not release ${refused.length === 1 ? `the voucher ${JSON.stringify(refused[0])}` : `${refused.length} vouchers (${refused.map((c) => JSON.stringify(c)).join(', ')})`}: its use was made under another till's name. Release it on the till that sold it, or ask whoever runs the relay to drop it.`,
      );
    return acknowledged;
  }

  /** Lets the batches send a claim's row (its claim had no answer in time, or failed). */
  const release = (entry: string) =>
    db.outbox
      .where('entry')
      .equals(entry)
      .modify((u) => {
        delete u.claiming;
      })
      .catch(() => undefined);

  return {
    refill: () =>
      db.transaction('rw', [db.tillUses, db.journal, db.outbox, db.meta], async () => {
        const since = deps.now() - REFILL_MS;
        const held = (await db.tillUses.toArray()).filter((u) => u.at >= since);
        const waiting = new Set((await db.outbox.bulkGet(held.map((u) => u.key))).flatMap((o) => (o ? [o.entry] : [])));
        const again = held.filter((u) => !waiting.has(u.key));
        if (again.length === 0) return 0;
        const device = await deviceIdOf(db);
        const entries = await db.journal
          .where('key')
          .anyOf(again.map((u) => u.key))
          .toArray();
        await db.outbox.bulkPut(
          again.map((u): OutgoingUse => {
            const e = entries.find((x) => x.key === u.key);
            return {
              entry: u.key,
              device: u.device ?? device,
              code: u.code,
              couponCode: e?.couponCode ?? null,
              orderId: u.orderId,
              at: u.at,
              override: e?.overrides.includes('repeat_use') ?? false,
            };
          }),
        );
        return again.length;
      }),
    async claim(use, timeoutMs) {
      const claimUse = deps.client.claimUse;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = deps.signal ? AbortSignal.any([deps.signal, timeout]) : timeout;
      try {
        if (!claimUse || !(await Promise.race([deps.takesUses(signal), aborted(signal)]))) {
          await release(use.entry);
          return { claim: null };
        }
        const sent = asSentUse(use);
        let ack: Awaited<ReturnType<typeof claimUse>>;
        for (;;) {
          try {
            ack = await claimUse(use.device, sent, { signal });
            break;
          } catch (error) {
            // the relay's bound for this client (a burst of the till's own requests): asked again within the bound
            const e = error as ApiError;
            if (e?.code !== 'rate_limited') throw error;
            await sleep(Math.min(e.retryAfterMs ?? 250, 1_000), signal);
          }
        }
        if (!ack.claimed) return { claim: 'refused', first: ack.first };
        // (its journal entry may still wait for storage: then only the outbox row is gone, and it is sent again)
        await acknowledge(db, [sent], [{ entry: use.entry, recorded: true, conflict: null }], deps.now(), true);
        return { claim: 'granted' };
      } catch (error) {
        await release(use.entry);
        return timeout.aborted ? { claim: 'timeout' } : { claim: 'failed', error };
      }
    },
    takesUses: (signal) => deps.takesUses(signal),
    send(call, counter) {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        let acknowledged = 0;
        do {
          again = false;
          acknowledged += await drain(call, counter);
        } while (again);
        return acknowledged;
      })().finally(() => (running = null));
      return running;
    },
  };
}

// Sends the relay this till's uses of issued coupons (POST relay/v1/uses): every one waiting in the outbox, in
// batches, right after a verdict that accepted one and at every sync (a till back online sends what it accepted
// offline). A use leaves the outbox only once the relay acknowledged it, in the transaction that marks its journal
// entry shared (and conflicting, when the relay says so): a lost answer sends it again, which the relay records once.
// Only to a relay whose discovery lists `uses` for this client; a till without one keeps them in its outbox.
import { badResponseError } from '@shop-lookup/shop-api';
import { deviceIdOf } from '../../store/deviceId';
import type { OutgoingUse, ShopDatabase, TillUse } from '../../store/store';
import type { RelayFeedClient, UseAck, UseSent } from './relayFeedClient';
import { markConflicts } from './useConflicts';

/** At most this many uses per request (the route takes 500). */
export const MAX_USES_PER_POST = 500;
/** At most this many bytes of JSON per request (the route takes 64 kB; an order id alone may take 800). */
const MAX_BODY_BYTES = 60_000;

export interface UsesSenderDeps {
  db: ShopDatabase;
  client: Pick<RelayFeedClient, 'postUses'>;
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
}

const encoder = new TextEncoder();

/**
 * One device's uses, oldest first, within the route's bounds (an outbox of several devices: clear() made a new one).
 */
async function nextBatch(db: ShopDatabase): Promise<{ device: string; uses: UseSent[] } | null> {
  const waiting = await db.outbox.limit(MAX_USES_PER_POST).toArray();
  if (waiting.length === 0) return null;
  const device = waiting[0]!.device;
  const uses: UseSent[] = [];
  let bytes = 0;
  for (const { device: d, ...use } of waiting.sort((a, b) => a.at - b.at)) {
    if (d !== device) continue;
    bytes += encoder.encode(JSON.stringify(use)).length + 1;
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
async function acknowledge(db: ShopDatabase, sent: UseSent[], acks: UseAck[], at: number): Promise<number> {
  const ours = new Set(sent.map((u) => u.entry));
  const taken = acks.filter((a) => ours.has(a.entry));
  await db.transaction('rw', [db.outbox, db.journal], async () => {
    const entries = taken.map((a) => a.entry);
    await db.outbox.bulkDelete(entries);
    await db.journal.where('key').anyOf(entries).modify({ shared: at });
    await markConflicts(
      db,
      // (the answer's conflict is the code's first use: the one that keeps the voucher)
      taken.flatMap((a) => (a.conflict ? [{ entry: a.entry, conflict: { ...a.conflict, first: true } }] : [])),
    );
  });
  return taken.length;
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
    for (let batch = await nextBatch(db); batch; batch = await nextBatch(db)) {
      const { device, uses } = batch;
      const acks = await call(() => deps.client.postUses(device, uses, { signal: deps.signal, counter }));
      const taken = await acknowledge(db, uses, acks, deps.now());
      // (an answer that takes none of them would send the same batch for ever)
      if (taken === 0)
        throw badResponseError(
          { method: 'POST', path: 'relay/v1/uses' },
          200,
          'the answer acknowledges none of the uses sent',
        );
      acknowledged += taken;
    }
    return acknowledged;
  }

  return {
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

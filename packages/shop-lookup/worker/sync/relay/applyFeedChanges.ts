// Writing feed answers: records checked by the engine's own schemas, then upserts, deletes, confirmations and the
// feed state in ONE transaction, so a reader sees the data before an answer or after it, never a mix. Into the
// live tables (`coupons`, `options`, `sharedUses`) or into `feedStage`, which a complete snapshot replaces the live
// data from. The shop's uses of issued coupons mark this till's journal entries they say conflict (useConflicts.ts).
import type { LookupError } from '../../../src/protocol';
import { FEED_STATE_KEY, type FeedStageRow, type FeedState } from '../../store/feedState';
import {
  type FeedEnvelope,
  parseRecord,
  readFeedRecord,
  readWire,
  rejectionError,
  usesRecordSchema,
} from '@shop-lookup/shop-api';
import { confirm, metaKey, productRange, type SharedUses, type ShopDatabase } from '../../store/store';
import { clearMarks, clearUnreadable, markUnreadable, unreadableMarks } from '../../store/unreadableMarks';
import { conflictsIn, markConflicts } from './useConflicts';

/** An answer's records, checked and sorted by where they go. */
export interface CheckedFeed {
  coupons: { key: string; record: unknown }[];
  options: { productNo: number; key: string; record: unknown }[];
  /** The shop's uses of issued coupons, by code (resource `uses`). */
  uses: SharedUses[];
  couponDeletes: string[];
  useDeletes: string[];
  optionDeletes: [number, number][];
  stageDeletes: [string, string][];
  /** Records rejected whose key was readable: a staged snapshot keeps their live copy (a coupon's, unconfirmed). */
  rejectedKeys: { resource: string; key: string; message: string }[];
  errors: LookupError[];
}

const productOf = (resource: string): number | null => {
  const m = /^options:(\d+)$/.exec(resource);
  return m ? Number(m[1]) : null;
};

/** A `uses` record of the feed (usesRecordSchema) under its own code, as this till keeps it; or why not. */
function readSharedUses(key: string, record: unknown): SharedUses | string {
  const read = readWire(usesRecordSchema, record, 'the record');
  if (!read.ok) return read.why;
  const { code, couponCode, uses } = read.value;
  if (code !== key) return `the record's code ${JSON.stringify(code)} is not its key`;
  return {
    code,
    couponCode,
    uses: uses.map(({ till, device, entry, orderId, at, receivedAt, override, conflict }) => ({
      till,
      device,
      entry,
      orderId,
      at,
      receivedAt,
      override,
      conflict,
    })),
  };
}

/** Checks an answer's records with the engine's schemas; a rejected record is reported and its old copy kept. */
export function checkFeed(answer: Pick<FeedEnvelope, 'upserts' | 'deletes'>): CheckedFeed {
  const out: CheckedFeed = {
    coupons: [],
    options: [],
    uses: [],
    couponDeletes: [],
    useDeletes: [],
    optionDeletes: [],
    stageDeletes: [],
    rejectedKeys: [],
    errors: [],
  };
  // (a plain loop, the coupon first, a record's path made only when it fails: this runs once per snapshot chunk of
  // 10,000, mostly before the JIT has warmed up)
  const { upserts } = answer;
  for (let i = 0; i < upserts.length; i++) {
    const u = readFeedRecord(upserts[i]);
    if (!u) {
      const message = `GET relay/v1/feed: feed.upserts[${i}] is not a record under its resource and key, and was not stored.`;
      out.errors.push({ code: 'invalid_record', message });
      continue;
    }
    const { resource, key } = u;
    if (resource === 'uses') {
      const uses = readSharedUses(key, u.record);
      if (typeof uses !== 'string') {
        out.uses.push(uses);
        continue;
      }
      const message = `GET relay/v1/feed: the uses of ${JSON.stringify(key)} (feed.upserts[${i}]) could not be read (${uses}) and were not stored. The last good copy, if any, is kept.`;
      out.errors.push({ code: 'invalid_record', message });
      out.rejectedKeys.push({ resource, key, message });
      continue;
    }
    const productNo = resource === 'coupons' ? null : productOf(resource);
    if (resource !== 'coupons' && productNo === null) continue; // a resource this engine does not know
    const path = () => `feed.upserts[${i}].record`;
    const r =
      productNo === null
        ? parseRecord('coupon', u.record, path)
        : parseRecord('productOption', u.record, path, productNo);
    if (!r.ok) {
      const error = rejectionError(`GET relay/v1/feed`, r.rejected);
      out.errors.push(error);
      out.rejectedKeys.push({ resource, key, message: error.message });
    } else if (productNo === null) out.coupons.push({ key, record: r.record });
    else out.options.push({ productNo, key, record: r.record });
  }
  for (const d of answer.deletes) {
    const productNo = productOf(d.resource);
    if (d.resource === 'coupons') out.couponDeletes.push(d.key);
    else if (d.resource === 'uses') out.useDeletes.push(d.key);
    else if (productNo !== null && Number.isSafeInteger(Number(d.key)))
      out.optionDeletes.push([productNo, Number(d.key)]);
    else continue;
    out.stageDeletes.push([d.resource, d.key]);
  }
  return out;
}

/** The answer's coupons whose record was rejected. */
const unreadableCoupons = (feed: CheckedFeed) =>
  feed.rejectedKeys.filter((r) => r.resource === 'coupons').map((r) => ({ code: r.key, message: r.message }));

/** The confirmations an answer carries: `coupons`, `options:<no>`, and `options` (the oldest of the products'). */
function confirmations(answer: Pick<FeedEnvelope, 'confirmedAt' | 'products'>): [string, number][] {
  const out: [string, number][] = [];
  const at = answer.confirmedAt ?? {};
  if (typeof at.coupons === 'number') out.push([metaKey.coupons, at.coupons]);
  const optionTimes = answer.products.map((p) => at[`options:${p}`]);
  for (const [i, p] of answer.products.entries()) {
    const at = optionTimes[i];
    if (typeof at === 'number') out.push([metaKey.options(p), at]);
  }
  if (optionTimes.length > 0 && optionTimes.every((t) => typeof t === 'number'))
    out.push(['options', Math.min(...(optionTimes as number[]))]);
  return out;
}

async function writeConfirmations(db: ShopDatabase, answer: Pick<FeedEnvelope, 'confirmedAt' | 'products'>) {
  const rows = confirmations(answer);
  await Promise.all(rows.map(([key, at]) => confirm(db, [key], at)));
}

/**
 * The shop's uses: the codes' records replaced (or dropped: the API confirmed them, or they expired), conflicts
 * marked.
 */
async function writeUses(db: ShopDatabase, uses: SharedUses[], deletes: string[]): Promise<void> {
  if (uses.length > 0) await db.sharedUses.bulkPut(uses);
  if (deletes.length > 0) await db.sharedUses.bulkDelete(deletes);
  await markConflicts(db, uses.flatMap(conflictsIn));
}

export interface Applied {
  written: number;
  deleted: number;
  errors: LookupError[];
}

/**
 * Applies a checked answer to the live tables with the new feed state, in one transaction. `expect` is the state
 * the answer was asked from: when another writer moved the state meanwhile, nothing is written (null is returned).
 * `confirm`: write the answer's confirmedAt (not for the chunks of a snapshot, which are not complete yet).
 * @example await applyToLive(db, checkFeed(answer), answer, next, state, true);
 */
export function applyToLive(
  db: ShopDatabase,
  feed: CheckedFeed,
  answer: FeedEnvelope,
  next: FeedState,
  expect: FeedState,
  withConfirm: boolean,
): Promise<Applied | null> {
  return db.transaction('rw', [db.coupons, db.options, db.meta, db.sharedUses, db.journal], async () => {
    const now = ((await db.meta.get(FEED_STATE_KEY)) as FeedState | undefined) ?? null;
    if ((now?.version ?? null) !== expect.version || (now?.handle ?? null) !== expect.handle) return null;
    // a coupon whose record could not be read keeps its copy, unconfirmed; a readable one (or its deletion) ends that
    await markUnreadable(db, unreadableCoupons(feed), Date.now());
    await clearUnreadable(db, [...feed.coupons.map((c) => c.key), ...feed.couponDeletes]);
    if (feed.coupons.length > 0) await db.coupons.bulkPut(feed.coupons.map((c) => c.record) as never[]);
    if (feed.options.length > 0) await db.options.bulkPut(feed.options.map((o) => o.record) as never[]);
    if (feed.couponDeletes.length > 0) await db.coupons.bulkDelete(feed.couponDeletes);
    if (feed.optionDeletes.length > 0) await db.options.bulkDelete(feed.optionDeletes);
    await writeUses(db, feed.uses, feed.useDeletes);
    if (withConfirm) await writeConfirmations(db, answer);
    await db.meta.put(next);
    return {
      written: feed.coupons.length + feed.options.length + feed.uses.length,
      deleted: feed.couponDeletes.length + feed.optionDeletes.length + feed.useDeletes.length,
      errors: feed.errors,
    };
  });
}

/** Applies a checked answer to the staged snapshot (readers keep seeing the live tables), with the feed state. */
export function applyToStage(db: ShopDatabase, feed: CheckedFeed, next: FeedState): Promise<Applied> {
  return db.transaction('rw', [db.feedStage, db.meta, db.coupons, db.options, db.sharedUses], async () => {
    const rows: FeedStageRow[] = [
      ...feed.coupons.map((c) => ({ resource: 'coupons', key: c.key, record: c.record })),
      ...feed.options.map((o) => ({ resource: `options:${o.productNo}`, key: o.key, record: o.record })),
      ...feed.uses.map((u) => ({ resource: 'uses', key: u.code, record: u })),
    ];
    // a rejected record never replaces a good copy: the live one goes into the new snapshot instead (a coupon's
    // unconfirmed, and kept in mind even when there is none, so the swap leaves its mark)
    for (const { resource, key } of feed.rejectedKeys) {
      if (resource === 'uses') {
        const live = await db.sharedUses.get(key);
        if (live) rows.push({ resource, key, record: live });
        continue;
      }
      const productNo = productOf(resource);
      const live = productNo === null ? await db.coupons.get(key) : await db.options.get([productNo, Number(key)]);
      if (productNo === null) rows.push({ resource, key, record: live ?? null, kept: true });
      else if (live) rows.push({ resource, key, record: live });
    }
    await markUnreadable(db, unreadableCoupons(feed), Date.now());
    if (rows.length > 0) await db.feedStage.bulkPut(rows);
    if (feed.stageDeletes.length > 0) await db.feedStage.bulkDelete(feed.stageDeletes);
    await db.meta.put(next);
    return { written: rows.length, deleted: feed.stageDeletes.length, errors: feed.errors };
  });
}

/**
 * Replaces the live data with the complete staged snapshot, in one transaction with its confirmations and the new
 * state; the stage is emptied. Only what the relay has listed is replaced: the coupons, and the options of each
 * tracked product, once the relay confirmed them (`confirmedAt`); the shop's uses always (never listed from the API).
 * A product the relay has not listed yet keeps its local options (a snapshot without them is no news that they are
 * gone), and so do products read through one by one: an observer sees the old list or the new one, never an empty
 * list between two full ones.
 * @example await swapInStage(db, lastAnswer, next);
 */
export function swapInStage(db: ShopDatabase, answer: FeedEnvelope, next: FeedState): Promise<{ written: number }> {
  const listed = (resource: string) => typeof answer.confirmedAt?.[resource] === 'number';
  return db.transaction('rw', [db.coupons, db.options, db.meta, db.feedStage, db.sharedUses, db.journal], async () => {
    const staged = await db.feedStage.toArray();
    if (listed('coupons')) {
      // the snapshot's unreadable coupons are its kept rows: every other mark ends with it
      const kept = new Set(staged.filter((r) => r.kept && r.resource === 'coupons').map((r) => r.key));
      await clearMarks(
        db,
        (await unreadableMarks(db)).filter((m) => !kept.has(m.key.slice(metaKey.coupon('').length))),
      );
      await db.coupons.clear();
    }
    for (const p of answer.products) if (listed(`options:${p}`)) await productRange(db, p).delete();
    const coupons = staged.filter((r) => r.resource === 'coupons' && r.record !== null).map((r) => r.record);
    const options = staged.filter((r) => r.resource.startsWith('options:')).map((r) => r.record);
    if (coupons.length > 0) await db.coupons.bulkPut(coupons as never[]);
    if (options.length > 0) await db.options.bulkPut(options as never[]);
    // a snapshot carries every use the relay holds: those it no longer has were confirmed by the API or expired
    await db.sharedUses.clear();
    await writeUses(
      db,
      staged.filter((r) => r.resource === 'uses').map((r) => r.record as SharedUses),
      [],
    );
    await db.feedStage.clear();
    // the direct listing's page hashes (and the codes its last listing did not list) no longer describe `coupons`
    await db.meta.bulkDelete([metaKey.couponListing, metaKey.couponSync, metaKey.unlisted]);
    await writeConfirmations(db, answer);
    await db.meta.put(next);
    return { written: staged.length };
  });
}

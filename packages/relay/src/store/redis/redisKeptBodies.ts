// Compressed snapshot chunks kept in Redis for every instance of a shop (RelayStore.readKeptBody and keepBody): one
// string per slot, holding the digest of the body it encodes, a newline, then the compressed bytes. A slot is
// replaced when a newer version's chunk is kept in it, and expires a day after it was last kept (a shop nobody asks).
// Every slot is listed, with when it was kept and its size, in one hash per shop: a keep that would take the shop
// past its byte budget drops the slots kept first, in the same MULTI/EXEC (under WATCH), so the kept chunks of a shop
// never hold more than the budget however many chunks its tills ask for.
import { RESP_TYPES, WatchError } from 'redis';
import type { RedisConnection } from './redisConnection';
import type { RedisKeys } from './redisKeys';

const KEPT_FOR_MS = 24 * 60 * 60 * 1000;

export interface RedisKeptBodiesOptions {
  /** Bytes kept per shop at most (the slots kept first are dropped). */
  maxBytes: number;
  now: () => number;
}

/** One slot as the shop's list of slots holds it: when it was kept, and its bytes. */
interface Listed {
  slot: string;
  at: number;
  bytes: number;
}

const listed = (entries: Record<string, string>): Listed[] =>
  Object.entries(entries).map(([slot, value]) => {
    const [at, bytes] = value.split(':').map(Number) as [number, number];
    return { slot, at: at || 0, bytes: bytes || 0 };
  });

/** @example const kept = redisKeptBodies(conn, keys, { maxBytes, now }); await kept.keepBody(slot, digest, bytes); */
export function redisKeptBodies(conn: RedisConnection, keys: RedisKeys, options: RedisKeptBodiesOptions) {
  const { client } = conn;
  // the bytes are binary: read back as a Buffer, not as a UTF-8 string
  const binary = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  return {
    async readKeptBody(slot: string, digest: string): Promise<Buffer | null> {
      const value = (await binary.get(keys.kept(slot))) as Buffer | null;
      const mark = Buffer.from(`${digest}\n`, 'utf8');
      if (!value || value.length < mark.length || !value.subarray(0, mark.length).equals(mark)) return null;
      return value.subarray(mark.length);
    },
    async keepBody(slot: string, digest: string, bytes: Buffer): Promise<void> {
      const value = Buffer.concat([Buffer.from(`${digest}\n`, 'utf8'), bytes]);
      if (value.length > options.maxBytes) return;
      await conn.transaction(async (tx) => {
        for (let attempt = 0; ; attempt++) {
          await tx.watch(keys.keptList);
          const at = options.now();
          const others = listed((await tx.hGetAll(keys.keptList)) as Record<string, string>).filter(
            (s) => s.slot !== slot,
          );
          // the slots whose key has expired, then the oldest, until this one fits
          const drop = others.filter((s) => s.at <= at - KEPT_FOR_MS);
          const live = others.filter((s) => s.at > at - KEPT_FOR_MS).sort((a, b) => a.at - b.at);
          let total = live.reduce((sum, s) => sum + s.bytes, 0) + value.length;
          for (const s of live) {
            if (total <= options.maxBytes) break;
            drop.push(s);
            total -= s.bytes;
          }
          const multi = tx.multi();
          multi.set(keys.kept(slot), value, { PX: KEPT_FOR_MS });
          multi.hSet(keys.keptList, slot, `${at}:${value.length}`);
          if (drop.length > 0) {
            multi.del(drop.map((s) => keys.kept(s.slot)));
            multi.hDel(
              keys.keptList,
              drop.map((s) => s.slot),
            );
          }
          multi.pExpire(keys.keptList, KEPT_FOR_MS);
          try {
            await multi.exec();
            return;
          } catch (error) {
            // another instance kept a chunk meanwhile: count again
            if (!(error instanceof WatchError) || attempt >= 10) throw error;
          }
        }
      });
    },
  };
}

// Compressed snapshot chunks kept in Redis for every instance of a shop (RelayStore.readKeptBody and keepBody): one
// string per slot, holding the digest of the body it encodes, a newline, then the compressed bytes. A slot is
// replaced when a newer version's chunk is kept in it, and expires a day after it was last kept (a shop nobody asks).
import { RESP_TYPES } from 'redis';
import type { RedisClient } from './redisConnection';
import type { RedisKeys } from './redisKeys';

const KEPT_FOR_MS = 24 * 60 * 60 * 1000;

/** @example const kept = redisKeptBodies(client, keys); await kept.keepBody(slot, digest, bytes); */
export function redisKeptBodies(client: RedisClient, keys: RedisKeys) {
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
      await client.set(keys.kept(slot), Buffer.concat([Buffer.from(`${digest}\n`, 'utf8'), bytes]), {
        PX: KEPT_FOR_MS,
      });
    },
  };
}

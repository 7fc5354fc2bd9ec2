// A snapshot chunk's compressed bodies, kept in the relay's store for every instance: a chunk is the same for every
// till of a version, so whichever instance a till asks first compresses it, and every instance sends the stored
// bytes after that. Kept in the chunk's slot (its place in the snapshot: coding, whether it carries coupons, limit,
// start) for the digest of the body they encode; a newer version's chunk replaces an older one's in its slot.
import { createHash } from 'node:crypto';
import type { KeptBodies } from '../door/compressAnswer';
import type { RelayStore } from '../store/relayStore';

export interface KeptChunks {
  /** The kept bodies of the chunk at `place` whose identity body is `body`. */
  of(place: string, body: Buffer): KeptBodies;
  /** Chunks this instance compressed (each once per version and coding; the others came from the store). */
  compressed(): number;
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');

/** @example const chunks = createKeptChunks(store); answer.reused = { kept: chunks.of(place, answer.body) }; */
export function createKeptChunks(store: RelayStore): KeptChunks {
  let compressed = 0;
  return {
    of(place, body) {
      let digest: string | null = null; // (a chunk's body is a few MB: hashed only when a client asks for a coding)
      const slot = (coding: string): string => sha256(`${coding}\u0000${place}`);
      const digestOf = (): string => (digest ??= sha256(body));
      return {
        async read(coding) {
          return store.readKeptBody ? store.readKeptBody(slot(coding), digestOf()) : null;
        },
        async write(coding, bytes) {
          compressed++;
          await store.keepBody?.(slot(coding), digestOf(), bytes);
        },
      };
    },
    compressed: () => compressed,
  };
}

// Compressed snapshot chunks kept in this process's memory (RelayStore.readKeptBody and keepBody): one body per slot,
// with the digest of what it encodes, in the order they were kept; a keep past the byte budget drops the slots kept
// first (as redisKeptBodies.ts does in Redis).

/** @example const kept = memoryKeptBodies(16 * 1024 * 1024); await kept.keepBody(slot, digest, bytes); */
export function memoryKeptBodies(maxKeptBytes: number) {
  const keptBodies = new Map<string, { digest: string; bytes: Buffer }>(); // in the order they were kept
  let keptBytes = 0;
  return {
    async readKeptBody(slot: string, digest: string): Promise<Buffer | null> {
      const kept = keptBodies.get(slot);
      return kept && kept.digest === digest ? kept.bytes : null;
    },

    async keepBody(slot: string, digest: string, bytes: Buffer): Promise<void> {
      const before = keptBodies.get(slot);
      if (before) keptBytes -= before.bytes.length;
      keptBodies.delete(slot);
      if (bytes.length > maxKeptBytes) return;
      keptBodies.set(slot, { digest, bytes });
      keptBytes += bytes.length;
      for (const [oldest, kept] of keptBodies) {
        if (keptBytes <= maxKeptBytes) break;
        keptBodies.delete(oldest);
        keptBytes -= kept.bytes.length;
      }
    },
  };
}

// Keeps the engine's clock offset beside the data: restored at start (the checkout waits for it), written whenever
// the clock tells a new estimate, and again after clear() emptied the database (storage: store/clockOffset.ts).
import type { ServerClock } from '@shop-lookup/shop-api';
import { readClockOffset, writeClockOffset } from '../store/clockOffset';
import type { ShopDatabase } from '../store/store';
import type { DatabaseClaim } from './databaseClaim';

export interface ClockKeeper {
  /** Writes the offset known now (after clear(): the row went with the data). */
  save(): void;
}

/**
 * Resolves once the stored offset was read and, if no answer told the time first, put to use. Writes only while
 * the database is this shop's (`claim`).
 * @example const keeper = await keepClockOffset(db, clock, claim);
 */
export async function keepClockOffset(
  db: ShopDatabase,
  clock: ServerClock,
  claim: DatabaseClaim,
): Promise<ClockKeeper> {
  // a row that cannot be written costs only the offset after a restart: never an error of its own
  const write = (offsetMs: number) =>
    void claim.ready
      .then((blocked) => (blocked ? undefined : writeClockOffset(db, offsetMs, clock.now())))
      .catch(() => undefined);
  // (until an answer or a seed, the clock's now is the till's own)
  const offset = await readClockOffset(db, clock.now()).catch(() => null);
  if (offset !== null) clock.seed(offset);
  clock.subscribe(write);
  return {
    save() {
      const known = clock.offsetMs();
      if (known !== null) write(known);
    },
  };
}

// Keeps the engine's clock offset beside the data: restored at start (the checkout waits for it), written whenever
// the clock tells a new estimate, and again after clear() emptied the database (storage: store/clockOffset.ts).
import type { ServerClock } from '../api/serverClock';
import { readClockOffset, writeClockOffset } from '../store/clockOffset';
import type { ShopDatabase } from '../store/store';

export interface ClockKeeper {
  /** Resolves once the stored offset was read and, if no answer told the time first, put to use. */
  readonly restored: Promise<void>;
  /** Writes the offset known now (after clear(): the row went with the data). */
  save(): void;
}

/**
 * `mayWrite`: whether this engine may write to the database now (it is this shop's).
 * @example const keeper = keepClockOffset(db, clock, Date.now, () => claim.ready.then((blocked) => !blocked));
 */
export function keepClockOffset(db: ShopDatabase, clock: ServerClock, localNow: () => number, mayWrite: () => Promise<boolean>): ClockKeeper {
  // a row that cannot be written costs only the offset after a restart: never an error of its own
  const write = (offsetMs: number) =>
    void mayWrite()
      .then((may) => (may ? writeClockOffset(db, offsetMs, clock.now()) : undefined))
      .catch(() => undefined);
  const restored = readClockOffset(db, localNow())
    .then((offset) => offset !== null && clock.seed(offset))
    .catch(() => undefined)
    .then(() => void clock.subscribe(write));
  return {
    restored,
    save() {
      const offset = clock.offsetMs();
      if (offset !== null) write(offset);
    },
  };
}

// Live changes from a relay: the leading engine keeps one long-poll (`since=<version>&wait=`) open while online,
// and applies what it answers at once (other tabs see it through IndexedDB). It rests while this engine is not
// the leader, is offline or syncs directly; it stops on close, and on errors runs a full sync (which reports them)
// and backs off.
import type { Connectivity } from '../../tabs/connectivity';
import type { Leadership } from '../../tabs/leadership';
import type { PollOutcome } from './relayFeedSource';
import { sleep } from '@shop-lookup/shop-api';

export interface RelayLiveDeps {
  poll(waitS: number, signal: AbortSignal): Promise<PollOutcome>;
  /** Whether the engine syncs from a relay (known after its first sync). */
  isRelay(): boolean;
  /** A full sync, when the feed needs one (no data yet, more waiting, start again). Resolves ok or not. */
  resync(): Promise<boolean>;
  leadership: Leadership;
  connectivity: Connectivity;
  /** Further things worth re-checking on (the engine's status: a sync found out the source). */
  onChange(listener: () => void): () => void;
  signal: AbortSignal;
  /** Seconds the relay may hold one poll. Default 25. */
  waitS?: number;
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

/**
 * @example const live = startRelayLive({ poll, isRelay, resync, leadership, connectivity, onChange, signal });
 * live.dispose();
 */
export function startRelayLive(deps: RelayLiveDeps): { dispose(): void } {
  const waitS = deps.waitS ?? 25;
  const min = deps.backoffMinMs ?? 1000;
  const max = deps.backoffMaxMs ?? 60_000;
  const stop = new AbortController();
  const signal = AbortSignal.any([deps.signal, stop.signal]);
  let wake: () => void = () => undefined;
  let round: AbortController | null = null;

  const canPoll = () => deps.isRelay() && deps.leadership.isLeader && !deps.connectivity.offline;
  const onChange = () => {
    wake();
    // no longer the leader, or offline: end the open poll now
    if (round && !canPoll()) round.abort(new Error('the long-poll is not wanted any more'));
  };
  const stops = [deps.leadership.subscribe(onChange), deps.connectivity.subscribe(onChange), deps.onChange(onChange)];

  async function loop() {
    let backoff = min;
    const failed = async () => {
      await sleep(backoff, signal);
      backoff = Math.min(max, backoff * 2);
    };
    while (!signal.aborted) {
      if (!canPoll()) {
        await new Promise<void>((resolve) => {
          const done = () => {
            signal.removeEventListener('abort', done);
            resolve();
          };
          wake = done;
          signal.addEventListener('abort', done, { once: true });
        });
        continue;
      }
      round = new AbortController();
      try {
        const outcome = await deps.poll(waitS, AbortSignal.any([signal, round.signal]));
        if (outcome === 'resync' && !(await deps.resync())) await failed();
        else backoff = min;
      } catch {
        // offline: the loop rests until online. Any other failure (the storage full, a bad answer): a full sync
        // now, whose report status() shows (a failed round alone would leave the till saying "up to date" while
        // it stores nothing); then try again later, each time later
        if (!signal.aborted && !round.signal.aborted && canPoll()) {
          await deps.resync().catch(() => false);
          await failed().catch(() => undefined);
        }
      } finally {
        round = null;
      }
    }
  }
  void loop();

  return {
    dispose() {
      stop.abort();
      for (const s of stops) s();
    },
  };
}

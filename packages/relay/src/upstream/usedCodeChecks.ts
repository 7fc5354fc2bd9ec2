// The codes of uses no till read through the relay (a till that sells a voucher reads it first: a code nobody read is
// most likely made up), checked with the shop API now and then at its pace, behind every till's own reads: a code the
// API says does not exist has its uses dropped and counted against the tills that sent them (usesRoute.ts).
import type { ApiClient } from '@shop-lookup/shop-api';
import type { ServerLog } from '../door/serverLog';
import type { UsesRoute } from '../feed/usesRoute';

export interface UsedCodeChecksDeps {
  uses: Pick<UsesRoute, 'unchecked' | 'checked'>;
  client: Pick<ApiClient, 'getIssuedCoupon'>;
  /** Whether nothing waits for the shop API now (a check never goes ahead of a till's read). */
  idle(): boolean;
  signal: AbortSignal;
  log: ServerLog;
  /** How often a round runs, ms. Default a minute. */
  everyMs?: number;
}

/** Codes checked by one round at most. */
const PER_ROUND = 10;

/**
 * Starts the rounds (a timer that does not keep the process alive); `round()` runs one now (tests, `relay.refresh`).
 * @example const checks = startUsedCodeChecks({ uses, client, idle: () => fair.waiting() === 0, signal, log });
 */
export function startUsedCodeChecks(deps: UsedCodeChecksDeps): { round(): Promise<number>; stop(): void } {
  let running: Promise<number> | null = null;

  async function once(): Promise<number> {
    let checked = 0;
    const codes = await deps.uses.unchecked(PER_ROUND);
    for (const code of codes) {
      if (deps.signal.aborted || !deps.idle()) break;
      let exists: boolean;
      try {
        const answer = await deps.client.getIssuedCoupon(code, { priority: 'background', signal: deps.signal });
        // (a record this relay cannot read still exists)
        exists = answer.record !== null || answer.rejected !== undefined;
      } catch {
        break; // the API away or busy: the next round
      }
      await deps.uses.checked(code, exists);
      checked++;
    }
    return checked;
  }

  const round = () =>
    (running ??= once()
      .catch((error: unknown) => {
        deps.log('warn', 'checking the codes of uses with the shop API failed; the next round tries again', error);
        return 0;
      })
      .finally(() => (running = null)));
  const timer = setInterval(() => void round(), deps.everyMs ?? 60_000);
  timer.unref();
  return { round, stop: () => clearInterval(timer) };
}

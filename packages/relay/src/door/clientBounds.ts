// Per-client bounds for the proxy and the relay: a few requests at once, a short queue with a bounded wait, and a
// token-bucket budget per second. One client that floods cannot starve the others or park requests forever: it
// gets 429 with Retry-After instead.
import { CLIENT_LIMITS } from '../defaults';
import type { ClientLimits } from './types';

/** Admitted: call leave() once the answer is sent. Refused: answer 429 with Retry-After (seconds). */
type Admission = { ok: true; leave: () => void } | { ok: false; retryAfterS: number; message: string };

export interface ClientBounds {
  /** Waits for this client's turn (or refuses); `signal` aborts the wait when the client goes away. */
  enter(clientId: string, signal?: AbortSignal): Promise<Admission>;
  /** Refuses every queued request (closing). */
  close(): void;
}

interface ClientState {
  active: number;
  queue: { admit: () => void; refuse: (a: Admission) => void }[];
  tokens: number;
  refilledAt: number;
}

/** Sweep idle clients once the table holds this many. */
const SWEEP_AT = 1_000;

/** @example const bounds = createClientBounds({ concurrent: 4 }); const a = await bounds.enter('10.0.0.7'); */
export function createClientBounds(limits: ClientLimits | false, now: () => number = Date.now): ClientBounds {
  if (limits === false) {
    return { enter: async () => ({ ok: true, leave: () => {} }), close: () => {} };
  }
  const l = { ...CLIENT_LIMITS, ...limits };
  const clients = new Map<string, ClientState>();

  function refill(c: ClientState): void {
    const t = now();
    c.tokens = Math.min(l.burst, c.tokens + ((t - c.refilledAt) / 1000) * l.perSecond);
    c.refilledAt = t;
  }

  function sweep(): void {
    for (const [id, c] of clients) {
      refill(c);
      if (c.active === 0 && c.queue.length === 0 && c.tokens >= l.burst) clients.delete(id);
    }
  }

  const refusal = (retryAfterS: number, why: string): Admission => ({
    ok: false,
    retryAfterS: Math.max(1, Math.ceil(retryAfterS)),
    message: `TOO MANY REQUESTS: ${why}; try again after the Retry-After delay.`,
  });

  function leaveFor(c: ClientState): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = c.queue.shift();
      if (next)
        next.admit(); // the slot passes straight on: active stays the same
      else c.active--;
    };
  }

  return {
    async enter(clientId, signal) {
      if (clients.size >= SWEEP_AT) sweep();
      let c = clients.get(clientId);
      if (!c) clients.set(clientId, (c = { active: 0, queue: [], tokens: l.burst, refilledAt: now() }));
      refill(c);
      if (c.tokens < 1) {
        return refusal((1 - c.tokens) / l.perSecond, `this client sent more than ${l.perSecond} requests per second`);
      }
      c.tokens -= 1;
      if (c.active < l.concurrent) {
        c.active++;
        return { ok: true, leave: leaveFor(c) };
      }
      if (c.queue.length >= l.queued) {
        return refusal(1, `this client already has ${l.concurrent} requests running and ${l.queued} waiting`);
      }
      const state = c;
      return new Promise<Admission>((resolve) => {
        const entry = {
          admit: () => {
            done();
            resolve({ ok: true, leave: leaveFor(state) });
          },
          refuse: (a: Admission) => {
            done();
            state.queue = state.queue.filter((e) => e !== entry);
            resolve(a);
          },
        };
        const timer = setTimeout(
          () => entry.refuse(refusal(1, `this client's requests waited ${l.maxWaitMs} ms behind its own earlier ones`)),
          l.maxWaitMs,
        );
        const onAbort = (): void => entry.refuse(refusal(1, 'the request was abandoned'));
        const done = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        state.queue.push(entry);
      });
    },
    close() {
      for (const c of clients.values()) {
        for (const entry of [...c.queue]) entry.refuse(refusal(1, 'the server is closing'));
      }
    },
  };
}

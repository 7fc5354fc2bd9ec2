// The till's credential on every request of the engine (the `token` option): `Authorization: Bearer <token>`, the
// token asked of the host at the first request and asked again once when an answer is 401, the request then sent
// again with the new one. In memory only: nothing here writes to IndexedDB, logs, or puts the token in an error.
import type { AskToken } from '../../src/protocol';

/** The token as asked: a non-empty string, else null (the host's function threw or gave none). */
const usable = (token: unknown): string | null => (typeof token === 'string' && token !== '' ? token : null);

function withBearer(init: RequestInit | undefined, token: string | null): RequestInit {
  const headers = new Headers(init?.headers);
  if (token !== null) headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

/**
 * `fetch` sending the till's token. Concurrent requests share one ask, and the 401s that answered one token share
 * one ask again; a 401 whose new token is no other (or none) is the answer.
 * @example const fetch = withTillToken(globalThis.fetch, async () => session.tillToken());
 */
export function withTillToken(fetch: typeof globalThis.fetch, ask: AskToken): typeof globalThis.fetch {
  let held: Promise<string | null> | undefined;
  const asked = (): Promise<string | null> => (held ??= ask().then(usable, () => null));

  /** The token to try after `refused` drew a 401: a new one asked of the host, or the one another request got. */
  async function askAgain(refused: string | null): Promise<string | null> {
    const holding = asked();
    const token = await holding;
    if (held !== holding) return asked(); // another 401 asked again meanwhile: take its answer
    if (token !== refused) return token; // already renewed before this 401 came back
    held = undefined;
    return asked();
  }

  return async (input, init) => {
    const token = await asked();
    const res = await fetch(input, withBearer(init, token));
    if (res.status !== 401 || init?.signal?.aborted) return res;
    const fresh = await askAgain(token);
    if (fresh === null || fresh === token) return res;
    await res.body?.cancel().catch(() => undefined);
    return fetch(input, withBearer(init, fresh));
  };
}

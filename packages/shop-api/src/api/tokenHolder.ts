// The one access-token holder of the engine's transport, the relay and the proxy: the token in memory, optionally a
// slot several server instances share, one /v2/auth fetch at a time, and forgetting only the token the API refused.
// It never sees the key/secret (they stay in `fetchToken`'s closure), and it stores nothing in IndexedDB. Beside it,
// the /v2/auth request and where its answer holds the token, for every caller.

/** Where several server instances keep one token (the relay's store). */
export interface SharedTokenSlot {
  read(): Promise<string | null>;
  write(token: string): Promise<void>;
  /** Forgets `token` unless another instance already replaced it. */
  drop(token: string): Promise<void>;
}

export interface TokenHolder {
  /**
   * The token held, else the shared one, else a new one from `fetchToken` (concurrent callers share that one fetch,
   * and it is written to the shared slot). A failed fetch rejects with what `fetchToken` threw and is not
   * remembered: the next call asks again.
   */
  get(): Promise<string>;
  /** The API refused `token`: forget it here and in the shared slot, unless something already replaced it. */
  invalidate(token: string): Promise<void>;
  /** The token held now (for scrubbing answers), if any. */
  current(): string | undefined;
}

/**
 * @param fetchToken asks /v2/auth for a new token (the caller's way: the transport's envelope, the proxy's answers).
 * @param shared read before fetching, written after, the refused token dropped from it.
 * @example const tokens = createTokenHolder(() => fetchToken(key, secret), storeTokenSlot(store)); await tokens.get();
 */
export function createTokenHolder(fetchToken: () => Promise<string>, shared?: SharedTokenSlot): TokenHolder {
  let token: string | undefined;
  let pending: Promise<string> | undefined;
  // a drop under way: nobody reads the slot before it is done, or they would read the refused token back
  let dropping: Promise<void> = Promise.resolve();

  async function sharedOrFetch(): Promise<string> {
    await dropping;
    const stored = await shared?.read();
    if (stored) return (token = stored);
    const fresh = await fetchToken();
    token = fresh;
    await shared?.write(fresh);
    return fresh;
  }

  return {
    get() {
      if (token !== undefined) return Promise.resolve(token);
      pending ??= sharedOrFetch().finally(() => {
        pending = undefined;
      });
      return pending;
    },
    invalidate(refused) {
      // only the refused token: one another request (or instance) already renewed stays
      if (token === refused) token = undefined;
      if (!shared) return Promise.resolve();
      const drop = shared.drop(refused);
      dropping = drop.catch(() => undefined); // a failed drop is the caller's to see, not every later get()'s
      return drop;
    },
    current: () => token,
  };
}

/** The /v2/auth request: POST, the key and secret as JSON; it counts against the 'other' class. */
export const AUTH_PATH = '/v2/auth';

/**
 * The token in a /v2/auth answer's body (`access_token`, or `data.access_token`), or undefined.
 * @example readAccessToken({ code: 200, data: { access_token: 't' } }) // 't'
 */
export function readAccessToken(body: Record<string, unknown> | undefined): string | undefined {
  const data = body?.data;
  const token =
    body?.access_token ??
    (typeof data === 'object' && data !== null ? (data as Record<string, unknown>).access_token : undefined);
  return typeof token === 'string' && token !== '' ? token : undefined;
}

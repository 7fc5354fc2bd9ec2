// The upstream token kept in the relay's store, so every instance (the sync's API client and the single-item
// forwarder alike) shares one token and one /v2/auth call renews it for all.
import type { SharedTokenSlot } from '../proxy/upstreamToken';
import type { TokenSource } from '../worker/api/tokenSource';
import type { RelayStore } from './relayStore';

/** @example const slot = storeTokenSlot(store); await slot.read(); */
export function storeTokenSlot(store: RelayStore): SharedTokenSlot {
  return { read: () => store.readToken(), write: (t) => store.writeToken(t), drop: (t) => store.dropToken(t) };
}

/**
 * The engine's TokenSource over the store: the stored token, or a new one (one /v2/auth call per process at a time).
 * @example createTransport({ ...options, tokens: (fetchToken) => storeTokenSource(store, { key, secret }, fetchToken) })
 */
export function storeTokenSource(
  store: RelayStore,
  auth: { key: string; secret: string },
  fetchToken: (key: string, secret: string) => Promise<string>,
): TokenSource {
  let fetching: Promise<string> | null = null;
  let dropping: Promise<void> = Promise.resolve();
  return {
    async get() {
      await dropping;
      const stored = await store.readToken();
      if (stored) return stored;
      fetching ??= fetchToken(auth.key, auth.secret)
        .then(async (token) => {
          await store.writeToken(token);
          return token;
        })
        .finally(() => {
          fetching = null;
        });
      return fetching;
    },
    invalidate(token) {
      // only the refused token: one another instance stored meanwhile stays
      if (token !== null) dropping = store.dropToken(token).catch(() => undefined);
      return true;
    },
  };
}

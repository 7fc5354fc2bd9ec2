// The relay store's token as the token holder's shared slot, so every instance (the sync's API client and the
// single-item forwarder alike) shares one token and one /v2/auth call renews it for all.
import type { SharedTokenSlot } from '@shop-lookup/shop-api';
import type { RelayStore } from './relayStore';

/**
 * `seen` is told every token read or written (the relay's redaction: no answer or log line ever carries one).
 * @example createTransport({ ...options, sharedToken: storeTokenSlot(store, (t) => redaction.add(t)) })
 */
export function storeTokenSlot(store: RelayStore, seen: (token: string) => void = () => undefined): SharedTokenSlot {
  return {
    read: async () => {
      const token = await store.readToken();
      if (token !== null) seen(token);
      return token;
    },
    write: (token) => {
      seen(token);
      return store.writeToken(token);
    },
    drop: (token) => store.dropToken(token),
  };
}

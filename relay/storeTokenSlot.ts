// The relay store's token as the token holder's shared slot, so every instance (the sync's API client and the
// single-item forwarder alike) shares one token and one /v2/auth call renews it for all.
import type { SharedTokenSlot } from '../worker/api/tokenHolder';
import type { RelayStore } from './relayStore';

/** @example createTransport({ ...options, sharedToken: storeTokenSlot(store) }) */
export function storeTokenSlot(store: RelayStore): SharedTokenSlot {
  return { read: () => store.readToken(), write: (t) => store.writeToken(t), drop: (t) => store.dropToken(t) };
}

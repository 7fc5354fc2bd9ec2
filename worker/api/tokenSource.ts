// The access token, kept in this worker's memory only: never in IndexedDB, never sent back to the page.
import type { ShopAuth } from '../../src/protocol';

export interface TokenSource {
  /** The token to send, or null when the host gave no credentials (a proxy adds the token). */
  get(): Promise<string | null>;
  /** The API refused `token`: forget it, so the next `get()` fetches a new one. Returns whether renewal is possible. */
  invalidate(token: string | null): boolean;
}

/**
 * @param fetchToken asks /v2/auth for a new token with the key/secret.
 * @example createTokenSource({ key, secret }, (k, s) => client.authenticate(k, s))
 */
export function createTokenSource(
  auth: ShopAuth | undefined,
  fetchToken: (key: string, secret: string) => Promise<string>,
): TokenSource {
  if (!auth) return { get: async () => null, invalidate: () => false };
  if ('accessToken' in auth) return { get: async () => auth.accessToken, invalidate: () => false };

  let current: Promise<string> | null = null;
  let currentValue: string | null = null;
  return {
    get() {
      // concurrent callers share one /v2/auth request
      if (!current) {
        currentValue = null;
        current = fetchToken(auth.key, auth.secret).then((t) => (currentValue = t));
        current.catch(() => {
          current = null;
        });
      }
      return current;
    },
    invalidate(token) {
      // drop only the refused token; one another request already renewed (or is renewing) stays
      if (token !== null && token === currentValue) {
        current = null;
        currentValue = null;
      }
      return true;
    },
  };
}

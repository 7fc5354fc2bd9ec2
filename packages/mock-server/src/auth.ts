// Access tokens: issued by /v2/auth for the configured key, valid for a lifetime, revocable all at once.
import { randomBytes } from 'node:crypto';

export interface TokenStore {
  /** A new random token for `key`. */
  issue(key: string): string;
  /** The credential key of a valid token, or undefined for a missing, unknown or expired one. */
  keyOf(token: string | undefined): string | undefined;
  /** Every token issued so far is now expired. */
  expireAll(): void;
}

export interface TokenStoreOptions {
  ttlMs: number;
  /** Read on every call so fake timers can expire tokens. */
  now?: () => number;
}

/**
 * Creates an empty token store.
 * @example const tokens = createTokenStore({ ttlMs: 3_600_000 }); tokens.keyOf(tokens.issue('demo-key'));
 */
export function createTokenStore({ ttlMs, now = () => Date.now() }: TokenStoreOptions): TokenStore {
  const tokens = new Map<string, { key: string; expiresAt: number }>();
  return {
    issue(key) {
      const token = randomBytes(16).toString('hex');
      tokens.set(token, { key, expiresAt: now() + ttlMs });
      return token;
    },
    keyOf(token) {
      if (!token) return undefined;
      const entry = tokens.get(token);
      if (!entry) return undefined;
      if (now() >= entry.expiresAt) {
        tokens.delete(token);
        return undefined;
      }
      return entry.key;
    },
    expireAll() {
      tokens.clear();
    },
  };
}

/** key/secret of an auth request: from the body (JSON or form) for POST, else (and as a fallback) the query. */
export function credentialsOf(
  query: URLSearchParams,
  body: Record<string, unknown> | undefined,
): { key: string | undefined; secret: string | undefined } {
  const pick = (name: string): string | undefined => {
    const fromBody = body?.[name];
    if (typeof fromBody === 'string' || typeof fromBody === 'number') return String(fromBody);
    return query.get(name) ?? undefined;
  };
  return { key: pick('key'), secret: pick('secret') };
}

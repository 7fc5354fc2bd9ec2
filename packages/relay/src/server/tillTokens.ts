// Till tokens of the relay command: a static list (a file, one `name token` a line) and signed, expiring tokens
// (HS256 JWTs with `shop`, `till`, `exp`, checked against a secret). Every comparison is constant-time; a check
// says which till a token names (for logs), never the token.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Why a token was refused; `till` is the name it claims when it can be read (a signed token's payload). */
export type TokenRefusal = 'no_token' | 'unknown_token' | 'malformed' | 'bad_signature' | 'expired' | 'wrong_shop';

/** `shop`: with `wrong_shop`, the shop the token was signed for. */
type TokenCheck = { ok: true; till: string } | { ok: false; reason: TokenRefusal; till: string | null; shop?: string };

export interface TillTokenEntry {
  name: string;
  token: string;
}

export const TILL_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Static tokens shorter than this are refused when the file is read: they could be guessed. */
const MIN_STATIC_TOKEN = 16;
const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url');
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Parses a token file: one `name token` a line; blank lines and lines starting with `#` are skipped.
 * @example parseTokenFile('front-1 3f9c0d…\n# back office\nback-1 77ab…') // { ok: true, entries: [...] }
 */
export function parseTokenFile(text: string): { ok: true; entries: TillTokenEntry[] } | { ok: false; message: string } {
  const entries: TillTokenEntry[] = [];
  const names = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [name, token, ...rest] = line.split(/\s+/);
    const where = `line ${i + 1}`;
    if (!name || !token || rest.length > 0 || !TILL_NAME.test(name) || token.length < MIN_STATIC_TOKEN) {
      return {
        ok: false,
        message: `${where}: expected \`name token\` (a name of letters, digits, dots, dashes or underscores, a space, a token of at least ${MIN_STATIC_TOKEN} characters)`,
      };
    }
    if (names.has(name)) return { ok: false, message: `${where}: the name ${name} is listed twice` };
    names.add(name);
    entries.push({ name, token });
  }
  return { ok: true, entries };
}

/**
 * A signed till token: a JWT (HS256) whose payload is `{ shop, till, exp }` (exp in seconds, as JWTs have it).
 * @example signTillToken({ secret, shop: 'my-shop', till: 'front-1', expiresAt: Date.now() + 30 * 86_400_000 })
 */
export function signTillToken(o: { secret: string; shop: string; till: string; expiresAt: number }): string {
  if (!TILL_NAME.test(o.till))
    throw new TypeError('the till name must be 1 to 64 letters, digits, dots, dashes or underscores');
  const payload = base64url(JSON.stringify({ shop: o.shop, till: o.till, exp: Math.floor(o.expiresAt / 1000) }));
  const signature = createHmac('sha256', o.secret).update(`${HEADER}.${payload}`).digest('base64url');
  return `${HEADER}.${payload}.${signature}`;
}

export interface TillTokens {
  /** The relay's shop id, as the tokens it accepts name it. */
  readonly shop: string;
  /** Which till `token` belongs to, or why it is refused. */
  check(token: string | undefined): TokenCheck;
  /** Replaces the static list (the file was read again). */
  replaceEntries(entries: TillTokenEntry[]): void;
}

export interface TillTokensOptions {
  entries?: TillTokenEntry[];
  /** Checks signed tokens; without it, signed tokens are unknown. */
  secret?: string | undefined;
  /** The relay's shop id: a signed token for another shop is refused. */
  shop: string;
  now?: () => number;
}

/** The payload of a signed token, or null when it is not one of ours in shape. */
function readPayload(token: string): {
  header: string;
  payload: string;
  signature: string;
  claims: { shop?: unknown; till?: unknown; exp?: unknown };
} | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [header, payload, signature] = parts as [string, string, string];
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    if (typeof claims !== 'object' || claims === null) return null;
    return { header, payload, signature, claims };
  } catch {
    return null;
  }
}

/**
 * @example const tokens = createTillTokens({ entries, secret: process.env.TILL_TOKEN_SECRET, shop });
 * tokens.check(bearer)
 */
export function createTillTokens(options: TillTokensOptions): TillTokens {
  const now = options.now ?? Date.now;
  let hashed = (options.entries ?? []).map((e) => ({ name: e.name, hash: sha256(e.token) }));

  function checkStatic(token: string): TokenCheck {
    // every entry is compared, in constant time, whatever matches: the time says nothing about the list
    const hash = sha256(token);
    let found: string | null = null;
    for (const entry of hashed) if (timingSafeEqual(entry.hash, hash) && found === null) found = entry.name;
    return found === null ? { ok: false, reason: 'unknown_token', till: null } : { ok: true, till: found };
  }

  function checkSigned(token: string): TokenCheck | null {
    const parsed = readPayload(token);
    if (!parsed) return null;
    const claimed =
      typeof parsed.claims.till === 'string' && TILL_NAME.test(parsed.claims.till) ? parsed.claims.till : null;
    // only our own header (HS256) is accepted: no `alg: none`, no other algorithm chosen by the token; anything
    // else is looked up in the static list
    if (!options.secret || parsed.header !== HEADER) return null;
    const expected = createHmac('sha256', options.secret).update(`${parsed.header}.${parsed.payload}`).digest();
    const given = Buffer.from(parsed.signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return { ok: false, reason: 'bad_signature', till: claimed };
    }
    const { shop, exp } = parsed.claims;
    if (claimed === null || typeof shop !== 'string' || typeof exp !== 'number')
      return { ok: false, reason: 'malformed', till: claimed };
    if (shop !== options.shop) return { ok: false, reason: 'wrong_shop', till: claimed, shop };
    if (exp * 1000 <= now()) return { ok: false, reason: 'expired', till: claimed };
    return { ok: true, till: claimed };
  }

  return {
    shop: options.shop,
    check(token) {
      if (!token) return { ok: false, reason: 'no_token', till: null };
      return checkSigned(token) ?? checkStatic(token);
    },
    replaceEntries(entries) {
      hashed = entries.map((e) => ({ name: e.name, hash: sha256(e.token) }));
    },
  };
}

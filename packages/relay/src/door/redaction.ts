// One redaction for the proxy, the relay and the relay command's log: the secrets a server holds (the key, the secret,
// every access token it has seen, the user and password of its target and Redis URLs) are taken out of whatever it
// writes (answers, status, logs), in every form an upstream or a gateway could echo them in: as is, JSON-escaped,
// \u-escaped, percent-encoded, inside base64 (a Basic authorization of key:secret), in any letter case. This is the
// last line: upstream text is never copied into our own messages in the first place.

const MASK = '[redacted]';
/** Shorter secrets are not redacted: they would hit ordinary text (and no real key or token is that short). */
const MIN_LENGTH = 6;
/** Tokens are kept for this many renewals: a gateway may echo an old one. */
const MAX_SECRETS = 32;

export interface Redaction {
  /** Adds a secret (a token just obtained, read from the store); empty or short ones are ignored. */
  add(secret: string | null | undefined): void;
  /** Whether any form of any secret occurs in `text`. */
  leaks(text: string): boolean;
  /** `text` with every form of every secret replaced by `[redacted]`. */
  text(text: string): string;
  /** A JSON value with every string and key redacted (the same value when nothing leaks). */
  json<T>(value: T): T;
}

/**
 * The secret's part of any base64 text that holds it, at each of the three byte offsets it may start at, in both
 * alphabets: the characters that also encode the bytes before or after it are left out.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [0, 1, 2].flatMap((offset) => {
    const first = Math.ceil((offset * 8) / 6);
    const end = Math.floor(((offset + bytes.length) * 8) / 6);
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const core = encoded.slice(first, end);
    return [core, core.replace(/\+/g, '-').replace(/\//g, '_')];
  });
}

/** Every form a secret can take in a body or a log line. */
function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const unicode = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  return [secret, json, unicode, encodeURIComponent(secret), ...base64Forms(secret)];
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * One pattern for every form of every secret given (the longest first), in any letter case: an escape's hex digits
 * come in either case, and an upstream may upper-case what it echoes. Null when none is long enough to redact.
 * @example secretsPattern(['k3y-v4lue']).test('BAD KEY K3Y-V4LUE') // true
 */
export function secretsPattern(secrets: readonly (string | null | undefined)[]): RegExp | null {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret === 'string' && secret.length >= MIN_LENGTH) for (const form of formsOf(secret)) forms.add(form);
  }
  if (forms.size === 0) return null;
  return new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'gi',
  );
}

function deep(value: unknown, text: (s: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((v) => deep(v, text));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [text(k), deep(v, text)]));
  }
  return value;
}

/**
 * @example const redaction = createRedaction([key, secret, ...urlSecrets(target)]); redaction.text(line)
 */
export function createRedaction(initial: readonly (string | null | undefined)[] = []): Redaction {
  // newest last; the configured ones (first) stay, only the oldest tokens give way
  const secrets: { secret: string; pattern: RegExp }[] = [];
  let configured = Infinity;
  const add = (secret: string | null | undefined): void => {
    if (typeof secret !== 'string' || secret.length < MIN_LENGTH) return;
    if (secrets.some((s) => s.secret === secret)) return;
    secrets.push({ secret, pattern: secretsPattern([secret])! });
    if (secrets.length > MAX_SECRETS + configured) secrets.splice(configured, 1);
  };
  for (const secret of initial) add(secret);
  configured = secrets.length;

  const leaks = (text: string): boolean =>
    secrets.some(({ pattern }) => {
      pattern.lastIndex = 0;
      return pattern.test(text);
    });
  const redactText = (text: string): string => {
    let out = text;
    for (const { pattern } of secrets) out = out.replace(pattern, MASK);
    return out;
  };
  return {
    add,
    leaks,
    text: redactText,
    json<T>(value: T): T {
      if (value === undefined || !leaks(JSON.stringify(value))) return value;
      return deep(value, redactText) as T;
    },
  };
}

/**
 * A URL's origin without its user and password, for messages: what we say about where we forward to.
 * @example safeOrigin('https://user:pw@gw.example/api') // 'https://gw.example'
 */
export function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(the configured target)';
  }
}

/**
 * The user name and password in a URL (decoded and as written), to be redacted wherever they might appear.
 * @example urlSecrets('redis://:s3cret-pass@127.0.0.1:6379') // ['s3cret-pass']
 */
export function urlSecrets(url: unknown): string[] {
  if (typeof url !== 'string') return [];
  try {
    const { username, password } = new URL(url);
    const raw = [username, password].filter((s) => s !== '');
    return [...new Set([...raw, ...raw.map((s) => decodeURIComponent(s))])];
  } catch {
    return [];
  }
}

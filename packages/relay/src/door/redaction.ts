// One redaction for the proxy and the relay: the secrets a server holds (the key, the secret, every access token it
// has seen, the user and password of its target and Redis URLs) are taken out of whatever it writes (answers,
// status, logs), in every form an upstream or a gateway could echo them in: as is, JSON-escaped, \u-escaped, or
// percent-encoded. This is the last line: upstream text is never copied into our own messages in the first place.

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

/** The forms a secret can take in a body or a log line, as one pattern (escapes match in either case). */
function patternOf(secret: string): RegExp {
  const json = JSON.stringify(secret).slice(1, -1);
  const unicode = [...secret].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  const forms = [...new Set([secret, json, unicode, encodeURIComponent(secret)])].sort((a, b) => b.length - a.length);
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // an escape's hex digits may come in either case (%2f, %2F, \u00e9, \u00E9); the secret's own letters may not
  const source = forms.map((f) => escape(f).replace(/(%)([0-9a-fA-F]{2})|(\\\\u)([0-9a-fA-F]{4})/g, (_m, p1?: string, h1?: string, p2?: string, h2?: string) =>
    (p1 ?? p2 ?? '') + [...(h1 ?? h2 ?? '')].map((d) => (/[a-f]/i.test(d) ? `[${d.toLowerCase()}${d.toUpperCase()}]` : d)).join(''))).join('|');
  return new RegExp(source, 'g');
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
    secrets.push({ secret, pattern: patternOf(secret) });
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

// Asks for compressed answers where the platform lets a caller say so. Node's fetch sends `Accept-Encoding: gzip,
// deflate` over plain HTTP (br only over HTTPS) and decodes whatever comes: a caller names `br, gzip` itself. A
// browser's fetch sends its own Accept-Encoding and forbids a page or worker to set it (a Request drops it): nothing
// is added there.

/** What the engine asks for: brotli first (about 13 % smaller than gzip on the relay's snapshot chunks). */
const ASKED_ENCODINGS = 'br, gzip';

/**
 * Whether a request made on this platform keeps an Accept-Encoding its caller set (Node: yes; a browser: no, it is a
 * forbidden header there).
 * @example acceptEncodingSettable() // true in Node, false in a browser or its workers
 */
export function acceptEncodingSettable(RequestClass: typeof Request | undefined = globalThis.Request): boolean {
  if (RequestClass === undefined) return false;
  try {
    return new RequestClass('http://localhost/', { headers: { 'accept-encoding': ASKED_ENCODINGS } }).headers.has(
      'accept-encoding',
    );
  } catch {
    return false;
  }
}

/**
 * `init` asking for br or gzip, where `settable` (acceptEncodingSettable) and the caller did not name a coding itself.
 * @example await fetch(url, askCompressed({ headers: { accept: 'application/json' } }, acceptEncodingSettable()))
 */
export function askCompressed(init: RequestInit | undefined, settable: boolean): RequestInit | undefined {
  if (!settable) return init;
  const headers = new Headers(init?.headers);
  if (headers.has('accept-encoding')) return init;
  headers.set('accept-encoding', ASKED_ENCODINGS);
  return { ...init, headers };
}

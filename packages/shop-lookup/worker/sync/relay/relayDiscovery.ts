// Whether `baseUrl` is a shop-lookup relay: asked once per engine start (`GET {baseUrl}/relay/v1`), then cached.
// A plain API or the credential proxy answers 404 or something that is not the relay's JSON: the engine lists the
// API page by page; a relay that refuses this client says so (its refusal mark), and is a relay. No answer at all
// (offline, refused, a gateway's 5xx) says nothing: that sync fails as any unreachable one does, and the next sync
// asks again. An engine with credentials never asks: it talks to the API.
import {
  type ApiError,
  type DiscoveryAnswer,
  discoveryAnswerSchema,
  networkError,
  readWire,
  redirectError,
  RELAY_PATHS,
  shownBase,
} from '@shop-lookup/shop-api';
import { isRedirect } from './relayFeedClient';

/** Where the engine's data comes from. */
export type SourceKind = 'direct' | 'relay';

/** `'auto'` finds out by asking; `'direct'` / `'relay'` force one (see ShopLookupOptions.source). */
export type SourceMode = 'auto' | SourceKind;

/** What a relay says about itself (docs/feed-protocol.md, Discovery). */
type RelayInfo = Pick<DiscoveryAnswer, 'relay' | 'protocol' | 'shop' | 'routes'>;

export interface SourceChoice {
  kind: SourceKind;
  /** The relay's self-description (null when forced to 'relay' before it answered, or direct). */
  info: RelayInfo | null;
}

export interface SourceChooser {
  /** The source to sync from now: asks the first time (and again after no answer came; then it rejects). */
  choose(signal?: AbortSignal): Promise<SourceChoice>;
  /** What the last choice was, null before the first. */
  readonly current: SourceKind | null;
}

/**
 * The mode an engine runs with. With credentials (`{ key, secret }` or `{ accessToken }`) it talks to the shop API
 * itself, so `'auto'` is `'direct'`: it never asks the API for a path the API does not have (which would count
 * against the shop's rate limit on every start). `'relay'` / `'direct'` stay as given.
 * @example sourceModeOf('auto', { key, secret }) // 'direct'
 */
export function sourceModeOf(source: SourceMode | undefined, auth: object | null | undefined): SourceMode {
  const mode = source ?? 'auto';
  return mode === 'auto' && auth ? 'direct' : mode;
}

/** The relay's discovery answer, or null when `body` is not one (of this protocol). */
function readRelayInfo(body: unknown): RelayInfo | null {
  const read = readWire(discoveryAnswerSchema, body, 'the discovery answer');
  if (!read.ok) return null;
  const { relay, protocol, shop, routes } = read.value;
  return { relay, protocol, shop, routes };
}

/**
 * Asks `{baseUrl}/relay/v1` once. Resolves 'relay' or 'direct'; 'unknown' with the error when no answer came.
 * @example await probeRelay(fetch, '/shop-api', 5000) // { kind: 'relay', info: { relay: 'shop-lookup', protocol: 1,
 * shop } }
 */
export async function probeRelay(
  fetchFn: typeof fetch,
  baseUrl: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<SourceChoice | { kind: 'unknown'; error: ApiError }> {
  const label = { method: 'GET', path: `/${RELAY_PATHS.discovery}` };
  const origin = shownBase(baseUrl.replace(/\/+$/, ''));
  const url = `${baseUrl.replace(/\/+$/, '')}/${RELAY_PATHS.discovery}`;
  const stop = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])]);
  try {
    const res = await fetchFn(url, {
      headers: { accept: 'application/json' },
      signal: stop,
      cache: 'no-store',
      redirect: 'manual',
    });
    // never followed (the till's token would go along): what answers here is neither a relay nor the API
    if (isRedirect(res)) return { kind: 'unknown', error: redirectError(label, res.status) };
    // a gateway that could not reach what is behind it: we learned nothing about what that is
    if (res.status === 502 || res.status === 503 || res.status === 504) {
      return {
        kind: 'unknown',
        error: networkError(label, origin, new Error(`the gateway answered HTTP ${res.status}`)),
      };
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { kind: 'direct', info: null };
    }
    // a relay that refused this client (a wrong till token) is still a relay: its feed then says what it refuses
    if (!res.ok)
      return {
        kind: (body as { refusal?: { by?: unknown } } | null)?.refusal?.by === 'relay' ? 'relay' : 'direct',
        info: null,
      };
    const info = readRelayInfo(body);
    return info ? { kind: 'relay', info } : { kind: 'direct', info: null };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    return { kind: 'unknown', error: networkError(label, origin, error) };
  }
}

/** @example const chooser = createSourceChooser('auto', (signal) => probeRelay(fetch, baseUrl, 5000, signal)); */
export function createSourceChooser(
  mode: SourceMode,
  probe: (signal?: AbortSignal) => ReturnType<typeof probeRelay>,
): SourceChooser {
  let known: SourceChoice | null = mode === 'auto' ? null : { kind: mode, info: null };
  let asking: Promise<SourceChoice> | null = null;
  let last: SourceKind | null = known?.kind ?? null;
  return {
    choose(signal) {
      if (known) return Promise.resolve(known);
      asking ??= probe(signal)
        .then((answer) => {
          // no answer: this sync fails as unreachable; the next one asks again
          if (answer.kind === 'unknown') throw answer.error;
          known = answer;
          last = answer.kind;
          return answer;
        })
        .finally(() => (asking = null));
      return asking;
    },
    get current() {
      return last;
    },
  };
}

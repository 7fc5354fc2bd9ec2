// HTTP side of the relay's feed (docs/feed-protocol.md): the feed, the tracked products, the uses of issued coupons.
// Answers are plain JSON, not the shop API's envelope, read with the feed protocol's schemas the relay answers with
// (@shop-lookup/shop-api, src/feed/), and are not held back by the client's API rate limits (the relay has its own
// budget and says so with 429 + Retry-After). Everything that goes wrong becomes an ApiError, as the API client's do.
import { ShopLookupError } from '../../../src/protocol';
import {
  type ApiError,
  apiErrorFromAnswer,
  badResponseError,
  errorAnswerSchema,
  type FeedEnvelope,
  feedEnvelopeSchema,
  networkError,
  productsAnswerSchema,
  type ProductsPost,
  readWire,
  redirectError,
  RELAY_PATHS,
  type ReleaseSent,
  retryAfterMs,
  serverRefusal,
  shownBase,
  timeoutError,
  type UseResult,
  usesAnswerSchema,
  type UseSent,
  type UsesPost,
} from '@shop-lookup/shop-api';

/** 304: nothing changed; `degraded` is the relay's state then (its `x-shop-relay-degraded` header). */
export type FeedReply = { status: 304; degraded: boolean } | { status: 200; etag: string | null; answer: FeedEnvelope };

interface FeedCallOptions {
  signal?: AbortSignal | undefined;
  counter?: { requests: number } | undefined;
  /** `If-None-Match`: the ETag of what the client holds. */
  etag?: string | null;
  /** Extra time on top of the request timeout (a long-poll's wait). */
  extraTimeoutMs?: number;
}

/** The relay's word on one use sent: recorded now (false: it had it already), and the earlier use it conflicts with. */
export type UseAck = Pick<UseResult, 'entry' | 'recorded' | 'conflict'>;

/** The relay's word on a claim (an online verdict's use, sent before the verdict). */
type ClaimAck = { claimed: true } | { claimed: false; first: NonNullable<UseResult['first']> };

/** The relay's word on one release: given back, or nothing to give back; `refused`: the use is another till's. */
export interface ReleaseAck {
  entry: string;
  released: boolean;
  refused: boolean;
}

export interface RelayFeedClient {
  feed(query: Record<string, string | number>, o?: FeedCallOptions): Promise<FeedReply>;
  /** Adds products to the shop-wide tracked set; answers the whole set. */
  postProducts(products: number[], o?: FeedCallOptions): Promise<number[]>;
  /** Tells the relay uses of issued coupons this device accepted; answers its word on each (idempotent by entry). */
  postUses(device: string, uses: UseSent[], o?: FeedCallOptions): Promise<UseAck[]>;
  /** Asks the relay to record one use only if it is the voucher's first (or the same sale's): its claim. */
  claimUse(device: string, use: UseSent, o?: FeedCallOptions): Promise<ClaimAck>;
  /** Gives back uses this device made (voided sales); answers the relay's word on each. */
  postReleases(device: string, releases: ReleaseSent[], o?: FeedCallOptions): Promise<ReleaseAck[]>;
}

export interface RelayFeedClientOptions {
  baseUrl: string;
  fetch: typeof fetch;
  timeoutMs: number;
  signal?: AbortSignal;
  onAnswer?: () => void;
  onUnreachable?: (error: ApiError) => void;
}

/** What is wrong with a relay's answer, for its bad_response. */
const notFitting = (why: string) => `the relay's answer does not fit the feed protocol (${why})`;

/** A 3xx answer (304 is none), or a browser's opaque redirect (status 0). */
export const isRedirect = (res: Response): boolean =>
  res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400 && res.status !== 304);

/** The route a relay path is (`relay/v1/feed` -> feed, `relay/v1/products` -> products). */
const routeOf = (path: string): string => path.split('/').pop() || 'discovery';

/**
 * @example const feed = createRelayFeedClient({ baseUrl: '/shop-api', fetch, timeoutMs: 15_000 }); await feed.feed({
 * since: 12, handle });
 */
export function createRelayFeedClient(options: RelayFeedClientOptions): RelayFeedClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = shownBase(base);

  async function call(
    method: 'GET' | 'POST',
    path: string,
    query: Record<string, string | number>,
    body: UsesPost | ProductsPost | undefined,
    o: FeedCallOptions,
  ) {
    const label = { method, path: `${path}` };
    const qs = Object.keys(query).length
      ? `?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`
      : '';
    const headers: Record<string, string> = { accept: 'application/json' };
    if (o.etag) headers['if-none-match'] = o.etag;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const timeoutMs = options.timeoutMs + (o.extraTimeoutMs ?? 0);
    const timeout = AbortSignal.timeout(timeoutMs);
    const stop = [o.signal, options.signal].filter((s): s is AbortSignal => s !== undefined);
    if (o.counter) o.counter.requests++;
    let res: Response;
    let text: string;
    try {
      // no-store: the browser's HTTP cache must not answer a feed request (our ETag is the only validator)
      // redirect 'manual': the till's token never follows a redirect to another address
      const init: RequestInit = {
        method,
        headers,
        signal: AbortSignal.any([timeout, ...stop]),
        cache: 'no-store',
        redirect: 'manual',
      };
      if (body !== undefined) init.body = JSON.stringify(body);
      res = await options.fetch(`${base}/${path}${qs}`, init);
      text = isRedirect(res) ? '' : await res.text();
    } catch (cause) {
      const stopped = stop.find((s) => s.aborted);
      if (stopped) throw stopped.reason;
      const error = timeout.aborted ? timeoutError(label, timeoutMs) : networkError(label, origin, cause);
      options.onUnreachable?.(error);
      throw error;
    }
    if (isRedirect(res)) {
      await res.body?.cancel().catch(() => undefined);
      throw redirectError(label, res.status);
    }
    if (res.status === 502 || res.status === 504) {
      const error = networkError(label, origin, new Error(`the gateway answered HTTP ${res.status}`));
      options.onUnreachable?.(error);
      throw error;
    }
    options.onAnswer?.();
    const degraded = res.headers.get('x-shop-relay-degraded') === 'true';
    if (res.status === 304) return { status: 304 as const, etag: res.headers.get('etag'), json: null, degraded };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw badResponseError(label, res.status, 'the relay did not answer JSON');
    }
    if (res.status >= 400) {
      const read = readWire(errorAnswerSchema, json, 'the error answer');
      const e = read.ok ? read.value : null;
      const message = e?.message ?? `HTTP ${res.status}`;
      if (res.status === 409)
        throw new ShopLookupError('must_refetch', `The relay's feed history changed: ${message}`, { status: 409 });
      if (res.status === 503 && e?.code === 'relay_not_ready') {
        throw new ShopLookupError(
          'relay_not_ready',
          `${message} (This till waits for it and takes the data as soon as the relay has it.)`,
          { status: 503 },
        );
      }
      // the relay keeps no more uses (of the shop, or of this till): its own code, never "cannot be reached"
      if (e?.code === 'uses_full' || e?.code === 'till_uses_full')
        throw new ShopLookupError(
          e.code,
          `The shop's relay did not record this till's uses of issued coupons: ${message} (They wait on this till and are sent again at the next sync.)`,
          { status: res.status },
        );
      if (res.status === 503)
        throw networkError(label, origin, new Error(`the relay has no data to serve (${message})`));
      const wait = retryAfterMs(res.headers.get('retry-after'));
      const refused = serverRefusal(label, res.status, json, message, wait);
      if (refused) throw refused;
      const error = apiErrorFromAnswer(label, res.status, null, message, wait);
      // an unmarked 401/403 on a relay route: still the relay's door (a relay before refusals were marked)
      if (res.status === 401 || res.status === 403)
        throw serverRefusal(
          label,
          res.status,
          { refusal: { code: 'forbidden', route: routeOf(path), by: 'relay' } },
          message,
        )!;
      throw error;
    }
    return { status: res.status, etag: res.headers.get('etag'), json, degraded };
  }

  /** What the relay answered a POST relay/v1/uses, read with its schema; a bad_response naming what is wrong. */
  const usesAnswer = (status: number, json: unknown) => {
    const read = readWire(usesAnswerSchema, json, 'the answer');
    if (!read.ok) throw badResponseError({ method: 'POST', path: RELAY_PATHS.uses }, status, notFitting(read.why));
    return read.value;
  };
  const postUses = (body: UsesPost, o: FeedCallOptions) => call('POST', RELAY_PATHS.uses, {}, body, o);

  return {
    async feed(query, o = {}) {
      const r = await call('GET', RELAY_PATHS.feed, query, undefined, o);
      if (r.status === 304) return { status: 304, degraded: r.degraded };
      const read = readWire(feedEnvelopeSchema, r.json, 'the answer');
      if (!read.ok) throw badResponseError({ method: 'GET', path: RELAY_PATHS.feed }, r.status, notFitting(read.why));
      return { status: 200, etag: r.etag, answer: read.value };
    },
    async postProducts(products, o = {}) {
      const r = await call('POST', RELAY_PATHS.products, {}, { products }, o);
      const read = readWire(productsAnswerSchema, r.json, 'the answer');
      if (!read.ok)
        throw badResponseError({ method: 'POST', path: RELAY_PATHS.products }, r.status, notFitting(read.why));
      return read.value.products;
    },
    async postUses(device, uses, o = {}) {
      const r = await postUses({ device, uses }, o);
      return usesAnswer(r.status, r.json).uses.map(({ entry, recorded, conflict }) => ({ entry, recorded, conflict }));
    },
    async claimUse(device, use, o = {}) {
      const r = await postUses({ device, uses: [use], claim: true }, o);
      const answer = usesAnswer(r.status, r.json).uses[0];
      if (answer?.entry === use.entry && answer.claimed === true) return { claimed: true };
      if (answer?.entry === use.entry && answer.claimed === false && answer.first)
        return { claimed: false, first: answer.first };
      // (a relay before claims records it as a plain use: its answer says nothing of a claim)
      throw badResponseError(
        { method: 'POST', path: RELAY_PATHS.uses },
        r.status,
        'the answer to a claim lacks claimed (and the first use of the voucher when refused)',
      );
    },
    async postReleases(device, releases, o = {}) {
      const r = await postUses({ device, uses: [], releases }, o);
      const answered = usesAnswer(r.status, r.json).releases;
      if (!answered)
        throw badResponseError({ method: 'POST', path: RELAY_PATHS.uses }, r.status, 'the answer lacks its releases');
      return answered.map((a) => ({ entry: a.entry, released: a.released, refused: a.refused === true }));
    },
  };
}

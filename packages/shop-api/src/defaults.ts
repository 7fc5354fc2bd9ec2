// The shop API client's defaults, in one place: the API's origin, its documented rate limits, a request's timeout,
// the page size, the byte bounds of one answer and the retry policies. The engine (shop-lookup) and the relay
// (createShopRelay, createShopApiProxy, the command) take theirs from here, so one number is written once.
import type { AnswerBounds } from './api/answerBounds';
import type { RetryPolicy } from './api/retryer';

/** The shop API's origin: a relay's and a proxy's `target` when none is given. */
export const DEFAULT_TARGET = 'https://api.imweb.me';

/** Requests per second the API documents (per shop): list calls 1, every other call 5. */
export const DEFAULT_RATE_LIMITS = { list: 1, other: 5 } as const;

/** One request's timeout, its whole answer included, ms (the engine's `requestTimeoutMs`, a relay's `timeoutMs`). */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** Rows per list call: the API's largest page. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * The most bytes one answer may have, decoded. A list page is at most 100 rows (the API's largest page) of records of
 * about 0.5–5 kB (a coupon, an option with its value list): a real page is well under 1 MB, so 8 MiB leaves 80 kB a
 * row. A single record: 1 MiB. The /v2/auth answer is a token in the envelope (about 200 bytes): 64 KiB.
 */
export const ANSWER_BOUNDS: AnswerBounds = { list: 8 * 1024 * 1024, item: 1024 * 1024, auth: 64 * 1024 };

/** Background sync: patient. */
export const SYNC_RETRY: RetryPolicy = { retries: 5, unansweredRetries: 2, baseDelayMs: 1000, maxDelayMs: 30_000 };

/** Somebody is waiting: one quick retry for throttling and hiccups, then answer with what is local. */
export const LOOKUP_RETRY: RetryPolicy = { retries: 1, baseDelayMs: 300, maxDelayMs: 2_000 };

// @shop-lookup/shop-api: the shop API client the till engine and the relay share (one place, imported downward
// only): transport, token holder, rate limiter, envelope, retry, Retry-After, path segments, the typed client, the
// API's error codes, and the record schemas and readers. A private workspace package: shop-lookup and
// @shop-lookup/relay bundle it into their own dist.
export { ShopLookupError } from './errors';
export type {
  Coupon,
  IssuedCoupon,
  LookupError,
  LookupErrorCode,
  OptionValue,
  ProductOption,
  RateLimits,
  RecordIssue,
  ServerErrorCode,
  ShopAuth,
} from './types';

export {
  ANSWER_BOUNDS,
  DEFAULT_PAGE_SIZE,
  DEFAULT_RATE_LIMITS,
  DEFAULT_TARGET,
  DEFAULT_TIMEOUT_MS,
  LOOKUP_RETRY,
  SYNC_RETRY,
} from './defaults';
export { answerBound, bytesText } from './api/answerBounds';
export type { AnswerBounds } from './api/answerBounds';
export { API_CODES, apiCodeAnswer } from './api/apiCodes';
export type { ApiCodeInfo } from './api/apiCodes';
export { acceptEncodingSettable, askCompressed } from './api/askCompressed';
export { createApiClient } from './api/apiClient';
export type { ApiClient, CallOptions, CheckedPage, ItemAnswer, RawPage } from './api/apiClient';
export {
  apiErrorFromAnswer,
  badResponseError,
  isTransient,
  networkError,
  redirectError,
  serverRefusal,
  shownBase,
  timeoutError,
  tooBigError,
} from './api/apiError';
export type { ApiError, ApiErrorExtra } from './api/apiError';
export { readAnswerBody, readApiCode, readEnvelope, readListPage } from './api/envelope';
export type { Envelope, ListPage } from './api/envelope';
export { createExchange, pauseIfThrottled } from './api/exchange';
export type { Exchange, Exchanged, ExchangeOptions, ExchangeRequest } from './api/exchange';
export { createTransport } from './api/httpTransport';
export type { Answer, RequestSpec, Transport, TransportOptions } from './api/httpTransport';
export { codeProblem, quoteCode, segment, typedCode } from './api/pathSegment';
export { createRateLimiter } from './api/rateLimiter';
export type { RateLimiterDeps } from './api/rateLimiter';
export type { Priority, RateLimiter, RequestClass } from './api/rateLimiterTypes';
export { RETRY_AFTER_MAX_MS, retryAfterMs } from './api/retryAfter';
export { retry, sleep } from './api/retryer';
export type { RetryDeps, RetryPolicy } from './api/retryer';
export { createServerClock } from './api/serverClock';
export type { ServerClock } from './api/serverClock';
export { AUTH_PATH, createTokenHolder, readAccessToken } from './api/tokenHolder';
export type { SharedTokenSlot, TokenHolder } from './api/tokenHolder';
export { askUnlisted, confirmationBound, emptyAnswers, listingEnd } from './api/unlistedRecords';
export type { ListingEnd, ListingEndFacts, UnlistedAnswer, UnlistedAnswers } from './api/unlistedRecords';
export { createWaiterQueue } from './api/waiterQueue';
export type { WaiterQueue } from './api/waiterQueue';

export { parseRecord, parseRecords, rejectionError } from './records/parseRecords';
export type { ParsedRecords, RejectedRecord } from './records/parseRecords';
export { sameRecord } from './records/sameRecord';
export { RECORD_READERS_VERSION, readRecord, schemas } from './records/schemas';
export type { RecordKind } from './records/schemas';

export type * from './feed/feedProtocol';
export { discoveryAnswerSchema, RELAY_PATHS, RELAY_PROTOCOL } from './feed/discoveryAnswer';
export { RELAY_ERROR_CODES, errorAnswerSchema, refusalMarkSchema } from './feed/errorAnswer';
export {
  feedAnswerSchema,
  feedDeleteSchema,
  feedEnvelopeSchema,
  feedRecordSchema,
  readFeedRecord,
  recordedUseSchema,
  relayStateSchema,
  usesRecordSchema,
} from './feed/feedAnswer';
export { opsDropAnswerSchema, opsDropSchema, opsUsesAnswerSchema } from './feed/opsUses';
export { MAX_PRODUCTS_PER_POST, productsAnswerSchema, productsPostSchema } from './feed/trackedProducts';
export {
  MAX_USES_BODY_BYTES,
  MAX_USES_PER_POST,
  releaseResultSchema,
  releaseSentSchema,
  useConflictSchema,
  useResultSchema,
  usesAnswerSchema,
  usesPostSchema,
  useSentSchema,
} from './feed/usesPost';
export { readWire } from './feed/readWire';

// Everything one mock instance holds, with its options resolved to their defaults in one place.
import type { ServerResponse } from 'node:http';
import { createTokenStore, type TokenStore } from './auth';
import { createMockData, isMockData } from './data';
import { createFaultQueue, type FaultQueue } from './faults';
import { createHoldList, type HoldList } from './holds';
import { createListPageCache, type ListPageCache } from './listPageCache';
import { createRateLimiter, type RateLimiter } from './rateLimit';
import type { MockData, MockRequestRecord, MockShopApiHandlerOptions } from './types';

interface ResolvedOptions {
  key: string;
  secret: string;
  requireAuth: boolean;
  httpStatus: 'mapped' | 'always200';
  listShape: 'paged' | 'bare';
  dataCountAs: 'string' | 'number';
  latencyMs: number;
  control: boolean;
  cors: boolean;
}

export interface MockState {
  options: ResolvedOptions;
  data: MockData;
  tokens: TokenStore;
  limiter: RateLimiter;
  faults: FaultQueue;
  /** Requests held until a test releases them. */
  holds: HoldList;
  requests: MockRequestRecord[];
  down: boolean;
  /** Responses held open by the 'hang' fault; setDown(true) and close() end them. */
  hanging: Set<ServerResponse>;
  /** Running count of /v2 requests, sent as `request_count`. */
  requestCount: number;
  /** List pages kept as text (option cacheListPages), or null. */
  listPages: ListPageCache | null;
}

function nonNegative(value: number | undefined, fallback: number, name: string): number {
  const n = value ?? fallback;
  if (!(n >= 0) || !Number.isFinite(n)) throw new RangeError(`mock shop API: ${name} must be a number >= 0`);
  return n;
}

/**
 * Resolves options and creates the state of one mock.
 * @example const state = createMockState({ rateLimits: false });
 */
export function createMockState(options: MockShopApiHandlerOptions = {}): MockState {
  const limits = options.rateLimits;
  if (limits) {
    nonNegative(limits.list, 1, 'rateLimits.list');
    nonNegative(limits.other, 5, 'rateLimits.other');
  }
  return {
    options: {
      key: options.key ?? 'demo-key',
      secret: options.secret ?? 'demo-secret',
      requireAuth: options.requireAuth ?? true,
      httpStatus: options.httpStatus ?? 'mapped',
      listShape: options.listShape ?? 'paged',
      dataCountAs: options.dataCountAs ?? 'string',
      latencyMs: nonNegative(options.latencyMs, 0, 'latencyMs'),
      control: options.control ?? true,
      cors: options.cors ?? true,
    },
    data: options.data && isMockData(options.data) ? options.data : createMockData(options.data),
    tokens: createTokenStore({ ttlMs: nonNegative(options.tokenTtlMs, 3_600_000, 'tokenTtlMs') }),
    limiter: createRateLimiter({ limits }),
    faults: createFaultQueue(),
    holds: createHoldList(),
    requests: [],
    down: false,
    hanging: new Set(),
    requestCount: 0,
    listPages: options.cacheListPages ? createListPageCache() : null,
  };
}

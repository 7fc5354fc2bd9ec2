// Injected faults: a queue matched against each /v2 request in injection order, and what each fault does.
import { errorAnswer, type Answer, type HttpStatusMode } from './envelope';
import type { FaultWhen, MockFault, WireRecord } from './types';

/** What a request is, as far as faults care: list faults only hit lists, record faults only hit data. */
export type RouteKind = 'auth' | 'list' | 'item' | 'other';

interface FaultTarget {
  /** Decoded pathname. */
  path: string;
  kind: RouteKind;
  /** Requested page (1 for non-list requests and bare lists). */
  page: number;
}

export interface FaultQueue {
  inject(fault: MockFault, when?: FaultWhen): void;
  clear(): void;
  size(): number;
  /** The fault this request gets (consuming one of its `times`), or undefined. */
  take(target: FaultTarget): MockFault | undefined;
}

const NAMED_FAULTS = new Set<string>([
  'http500',
  'code-19',
  'code-999',
  'throttle',
  'expire-token',
  'bad-credentials',
  'permission',
  'drop',
  'hang',
  'truncated-json',
  'html',
  'wrong-content-type',
  'malformed-record',
  'repeat-page',
  'skip-rows',
]);

/** Faults that answer instead of the API: no auth check, no rate-limit window consumed. */
const REPLACING = new Set<string>([
  'http500',
  'code-19',
  'code-999',
  'throttle',
  'expire-token',
  'bad-credentials',
  'permission',
  'drop',
  'hang',
  'html',
]);

/** Throws a TypeError for anything that is not a MockFault (the control endpoint turns it into a 400). */
export function assertFault(fault: unknown): asserts fault is MockFault {
  if (typeof fault === 'string' && NAMED_FAULTS.has(fault)) return;
  if (typeof fault === 'object' && fault !== null && 'delayMs' in fault) {
    const ms = (fault as { delayMs: unknown }).delayMs;
    if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) return;
  }
  throw new TypeError(`unknown fault ${JSON.stringify(fault)}`);
}

/** The name recorded on the request: the fault string, or 'delay' for `{ delayMs }`. */
export function faultName(fault: MockFault): string {
  return typeof fault === 'string' ? fault : 'delay';
}

export function isReplacingFault(fault: MockFault): boolean {
  return typeof fault === 'string' && REPLACING.has(fault);
}

function appliesTo(fault: MockFault, target: FaultTarget): boolean {
  if (fault === 'repeat-page') return target.kind === 'list' && target.page >= 2;
  if (fault === 'skip-rows') return target.kind === 'list';
  if (fault === 'malformed-record') return target.kind === 'list' || target.kind === 'item';
  return true;
}

/** Whether a `when.path` matches a decoded pathname (whole-segment prefix, or a RegExp). */
export function pathMatches(path: string | RegExp | undefined, actual: string): boolean {
  if (path === undefined) return true;
  if (path instanceof RegExp) {
    path.lastIndex = 0; // a /g or /y RegExp would otherwise match every other time
    return path.test(actual);
  }
  const prefix = path.endsWith('/') ? path.slice(0, -1) : path;
  return actual === prefix || actual.startsWith(`${prefix}/`);
}

interface PendingFault {
  fault: MockFault;
  path: string | RegExp | undefined;
  times: number;
  skip: number;
}

/**
 * Creates an empty fault queue.
 * @example const faults = createFaultQueue(); faults.inject('drop', { path: '/v2/auth' });
 */
export function createFaultQueue(): FaultQueue {
  let pending: PendingFault[] = [];
  return {
    inject(fault, when = {}) {
      assertFault(fault);
      const times = when.times ?? 1;
      const after = when.after ?? 0;
      if (!(times >= 1)) throw new TypeError('when.times must be >= 1');
      if (!(after >= 0 && Number.isFinite(after))) throw new TypeError('when.after must be a number >= 0');
      pending.push({ fault, path: when.path, times, skip: after });
    },
    clear() {
      pending = [];
    },
    size() {
      return pending.length;
    },
    take(target) {
      let chosen: PendingFault | undefined;
      for (const entry of pending) {
        if (!appliesTo(entry.fault, target) || !pathMatches(entry.path, target.path)) continue;
        // Every waiting fault counts the request towards its `after`, even when an earlier fault fires on it.
        if (entry.skip > 0) entry.skip--;
        else chosen ??= entry;
      }
      if (!chosen) return undefined;
      chosen.times--;
      if (chosen.times <= 0) pending = pending.filter((entry) => entry !== chosen);
      return chosen.fault;
    },
  };
}

const HTML_502 =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>' +
  '<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>\n';

/** The answer of a replacing fault; 'drop' and 'hang' are left to the handler, which owns the socket. */
export function replacingAnswer(
  fault: MockFault,
  mode: HttpStatusMode,
  requestCount: number,
): Answer | 'drop' | 'hang' {
  switch (fault) {
    case 'drop':
    case 'hang':
      return fault;
    case 'html':
      return { status: 502, code: null, headers: { 'content-type': 'text/html; charset=utf-8' }, body: HTML_502 };
    case 'http500':
      // A 500 whatever the status mode: 'code-19' is the same error inside the envelope's own status rules.
      return { ...errorAnswer(-19, 'mapped', requestCount, 'Internal Server Error'), status: 500 };
    case 'code-19':
      return errorAnswer(-19, mode, requestCount);
    case 'code-999':
      return errorAnswer(-999, mode, requestCount);
    case 'throttle':
      return errorAnswer(-7, mode, requestCount);
    case 'expire-token':
      return errorAnswer(-2, mode, requestCount, 'token expired');
    case 'bad-credentials':
      return errorAnswer(-1, mode, requestCount);
    case 'permission':
      return errorAnswer(-5, mode, requestCount);
    default:
      throw new TypeError(`${faultName(fault)} is not a replacing fault`);
  }
}

/** The same body cut in the middle, with a matching content-length, so the client sees a JSON parse error. */
export function truncateAnswer(answer: Answer): Answer {
  return { ...answer, body: answer.body.slice(0, Math.max(1, Math.floor(answer.body.length / 2))) };
}

/** A copy of a record that fails validation: a non-numeric amount (coupons) or option number (options). */
export function malformRecord(record: WireRecord): WireRecord {
  if ('coupon_code' in record || 'coupon_issue_code' in record) return { ...record, apply_sale_price: 'abc' };
  return { ...record, no: 'abc' };
}

/** The rows a list page sends when a list fault hits it. `pageRows` is what it would send normally. */
export function applyListFault(
  fault: MockFault | undefined,
  pageRows: WireRecord[],
  previousPageRows: () => WireRecord[],
): WireRecord[] {
  if (fault === 'repeat-page') return previousPageRows();
  // As if rows were deleted before this page mid-sync: its first rows slid onto the previous page.
  if (fault === 'skip-rows') return pageRows.slice(Math.max(1, Math.floor(pageRows.length / 4)));
  if (fault === 'malformed-record' && pageRows.length > 0) {
    const at = Math.floor(pageRows.length / 2);
    return pageRows.map((row, index) => (index === at ? malformRecord(row) : row));
  }
  return pageRows;
}

// One /v2 request, start to end: record, down check, faults, rate limit, method, auth, lookup, answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { credentialsOf } from './auth';
import { authAnswer, errorAnswer, successAnswer, successAnswerOfText, type Answer } from './envelope';
import { faultName, isReplacingFault, malformRecord, replacingAnswer, truncateAnswer } from './faults';
import { corsHeaders, parseBody, readBody, sendAnswer, sleep, splitUrl } from './http';
import { listData, parsePaging } from './paging';
import { ANONYMOUS_BUCKET } from './rateLimit';
import { lookup, parseRoute, type Route } from './routes';
import type { MockState } from './state';
import type { MockFault, MockRequestRecord } from './types';

function destroy(res: ServerResponse): void {
  res.socket?.destroy();
  res.destroy();
}

/** Auth: GET with query parameters, or POST with a JSON or form body. Counts against the "other" limit. */
async function authenticate(
  state: MockState,
  req: IncomingMessage,
  query: URLSearchParams,
  record: MockRequestRecord,
): Promise<Answer> {
  const { options, limiter, tokens } = state;
  const count = state.requestCount;
  const method = req.method ?? 'GET';
  const body = method === 'POST' ? parseBody(await readBody(req), req.headers['content-type']) : undefined;
  const { key, secret } = credentialsOf(query, body);
  // Wrong keys share the anonymous bucket, so guessing cannot use up the real shop's limit.
  if (!limiter.take(key === options.key ? key : ANONYMOUS_BUCKET, 'other')) {
    record.throttled = true;
    return errorAnswer(-7, options.httpStatus, count);
  }
  if (method !== 'GET' && method !== 'POST') return errorAnswer(-99, options.httpStatus, count, method);
  if (!key || !secret) return errorAnswer(-10, options.httpStatus, count, 'key and secret are required');
  if (key !== options.key || secret !== options.secret) return errorAnswer(-1, options.httpStatus, count);
  return authAnswer(tokens.issue(key));
}

/** A data call. Order matters: throttling comes before the method, path and token checks, as at a gateway. */
function answerData(
  state: MockState,
  req: IncomingMessage,
  route: Route,
  query: URLSearchParams,
  fault: MockFault | undefined,
  record: MockRequestRecord,
): Answer {
  const { options, limiter, tokens } = state;
  const count = state.requestCount;
  const header = req.headers['access-token'];
  const tokenKey = tokens.keyOf(Array.isArray(header) ? header[0] : header);
  if (!limiter.take(tokenKey ?? ANONYMOUS_BUCKET, route.kind === 'list' ? 'list' : 'other')) {
    record.throttled = true;
    return errorAnswer(-7, options.httpStatus, count);
  }
  if (req.method !== 'GET') return errorAnswer(-99, options.httpStatus, count, req.method);
  if (route.badEncoding) return errorAnswer(-10, options.httpStatus, count, 'malformed percent-encoding in path');
  if (route.endpoint === 'unknown') return errorAnswer(-98, options.httpStatus, count, route.path);
  if (options.requireAuth && !tokenKey) return errorAnswer(-2, options.httpStatus, count);
  const paging = parsePaging(query);
  if (route.kind === 'list' && 'error' in paging) return errorAnswer(-10, options.httpStatus, count, paging.error);
  const found = lookup(route, state.data);
  if ('error' in found) return errorAnswer(found.error, options.httpStatus, count, found.detail);
  if ('item' in found) {
    return successAnswer(fault === 'malformed-record' ? malformRecord(found.item) : found.item, count);
  }
  const validPaging = 'error' in paging ? { page: 1, limit: 25 } : paging;
  // (a list fault changes the rows of this one answer: never kept)
  if (state.listPages && fault === undefined)
    return successAnswerOfText(state.listPages.dataText(found.list, validPaging, options), count);
  return successAnswer(listData(found.list, validPaging, options, fault), count);
}

/** Sends after latency (and a `{ delayMs }` fault); a mock set down meanwhile drops the connection instead. */
async function respond(
  state: MockState,
  res: ServerResponse,
  record: MockRequestRecord,
  answer: Answer,
  delayMs: number,
  held?: Promise<void>,
): Promise<void> {
  await sleep(state.options.latencyMs + delayMs);
  await held;
  if (state.down) {
    record.fault ??= 'down';
    destroy(res);
    return;
  }
  record.status = answer.status;
  record.code = answer.code;
  sendAnswer(res, answer, state.options.cors ? corsHeaders('shop') : undefined);
}

/**
 * Handles one /v2 request (not OPTIONS). Every request is recorded in `state.requests` on arrival.
 * @example await handleShopRequest(state, req, res);
 */
export async function handleShopRequest(state: MockState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { rawPath, search } = splitUrl(req.url);
  const route = parseRoute(rawPath);
  const record: MockRequestRecord = {
    at: Date.now(),
    method: req.method ?? 'GET',
    path: route.path,
    rawPath,
    query: Object.fromEntries(search),
    status: 0,
    code: null,
    throttled: false,
  };
  state.requests.push(record);
  state.requestCount++;
  if (state.down) {
    record.fault = 'down';
    destroy(res);
    return;
  }

  // a held request is answered from the data as it is when the test releases it (or, `answered`, as it was at
  // arrival: then only the sending waits, in respond)
  const held = state.holds.gate(route.path, record);
  if (held && !held.answered) {
    await held.released;
    if (state.down) {
      record.fault = 'down';
      destroy(res);
      return;
    }
  }

  const paging = route.kind === 'list' && state.options.listShape === 'paged' ? parsePaging(search) : undefined;
  const page = paging && 'page' in paging ? paging.page : 1;
  const fault = state.faults.take({ path: route.path, kind: route.kind, page });
  if (fault !== undefined) record.fault = faultName(fault);

  // Replacing faults answer instead of the API: no token check, and the rate-limit window is left alone.
  if (fault !== undefined && isReplacingFault(fault)) {
    const answer = replacingAnswer(fault, state.options.httpStatus, state.requestCount);
    if (answer === 'drop') return destroy(res);
    if (answer === 'hang') {
      state.hanging.add(res);
      res.on('close', () => state.hanging.delete(res));
      return;
    }
    if (fault === 'throttle') record.throttled = true;
    return respond(state, res, record, answer, 0, held?.answered ? held.released : undefined);
  }

  let answer =
    route.endpoint === 'auth'
      ? await authenticate(state, req, search, record)
      : answerData(state, req, route, search, fault, record);
  if (fault === 'wrong-content-type') {
    answer = { ...answer, headers: { ...answer.headers, 'content-type': 'text/html; charset=utf-8' } };
  }
  if (fault === 'truncated-json') answer = truncateAnswer(answer);
  const delayMs = typeof fault === 'object' ? fault.delayMs : 0;
  return respond(state, res, record, answer, delayMs, held?.answered ? held.released : undefined);
}

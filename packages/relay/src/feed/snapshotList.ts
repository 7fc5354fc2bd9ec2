// The API's two list paths answered from the relay's snapshot, in the API's own envelope and paging (offset is a
// 1-based page number, limit at most 100, `pagenation` as the API spells it), so an engine or a plain client whose
// baseUrl is the relay lists the relay, not the API.
import { envelopeAnswer, jsonAnswer, type ProxyAnswer } from '../door/proxyAnswers';

const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;

/**
 * One page of `records` (already in order) for the forwarded query ('' or '?offset=…&limit=…').
 * @example listAnswer(mirror.list('coupons'), '?offset=2&limit=100', {})
 */
export function listAnswer(records: readonly unknown[], query: string, headers: Record<string, string>): ProxyAnswer {
  const params = new URLSearchParams(query);
  const page = Number(params.get('offset') ?? 1);
  const limit = Math.min(MAX_LIMIT, Number(params.get('limit') ?? DEFAULT_LIMIT));
  if (!(page >= 1) || !(limit >= 1)) {
    const what = page >= 1 ? 'limit must be an integer >= 1' : 'offset must be a page number >= 1';
    return envelopeAnswer(400, -10, `INVALID PARAMETER: ${what}`, headers);
  }
  const list = records.slice((page - 1) * limit, page * limit);
  const pagenation = {
    data_count: String(records.length),
    current_page: page,
    total_page: Math.ceil(records.length / limit),
    pagesize: limit,
  };
  return jsonAnswer(200, { msg: 'SUCCESS', code: 200, version: 'latest', data: { list, pagenation } }, headers);
}

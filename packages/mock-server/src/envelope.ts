// The wire envelope `{ msg, code, request_count, version, data }` and the error-code -> HTTP status table.

/** An answer ready to send; the handler adds CORS headers and applies latency. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The envelope code, or null when the body is not an envelope. */
  code: number | null;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Messages of the documented error codes; -7's text is what clients look for ("TOO MANY REQUEST"). */
const ERROR_MESSAGES: Readonly<Record<number, string>> = {
  [-1]: 'INVALID KEY OR SECRET',
  [-2]: 'INVALID ACCESS TOKEN',
  [-5]: 'PERMISSION DENIED',
  [-6]: 'PLAN OR VERSION PERMISSION DENIED',
  [-7]: 'TOO MANY REQUEST',
  [-10]: 'INVALID PARAMETER',
  [-11]: '요청하신 데이터가 존재하지 않습니다',
  [-19]: 'INTERNAL ERROR',
  [-98]: 'NO SUCH SERVICE',
  [-99]: 'NO SUCH METHOD',
  [-999]: 'SERVICE UNDER MAINTENANCE',
};

const STATUS_OF_CODE: Readonly<Record<number, number>> = {
  200: 200,
  [-1]: 401,
  [-2]: 401,
  [-5]: 401,
  [-6]: 401,
  [-7]: 429,
  [-10]: 400,
  [-11]: 404,
  [-19]: 500,
  [-98]: 501,
  [-99]: 501,
  [-999]: 500,
};

export type HttpStatusMode = 'mapped' | 'always200';

/** HTTP status for a body code: the documented mapping, or 200 for everything in 'always200' mode. */
function httpStatusOf(code: number, mode: HttpStatusMode): number {
  if (mode === 'always200') return 200;
  return STATUS_OF_CODE[code] ?? 500;
}

/** A success envelope carrying `data`. */
export function successAnswer(data: unknown, requestCount: number): Answer {
  return jsonAnswer(200, 200, { msg: 'SUCCESS', code: 200, request_count: requestCount, version: 'latest', data });
}

/**
 * The success envelope of `successAnswer`, around `data` already serialised (`dataText`): the same bytes.
 * @example successAnswerOfText('{"list":[]}', 3).body //
 * '{"msg":"SUCCESS","code":200,"request_count":3,"version":"latest","data":{"list":[]}}'
 */
export function successAnswerOfText(dataText: string, requestCount: number): Answer {
  const head = JSON.stringify({ msg: 'SUCCESS', code: 200, request_count: requestCount, version: 'latest' });
  return {
    status: 200,
    code: 200,
    headers: { 'content-type': JSON_TYPE },
    body: `${head.slice(0, -1)},"data":${dataText}}`,
  };
}

/** An error envelope; `detail` is appended to the standard message so tests can see which check failed. */
export function errorAnswer(code: number, mode: HttpStatusMode, requestCount: number, detail?: string): Answer {
  const base = ERROR_MESSAGES[code] ?? 'ERROR';
  const msg = detail ? `${base}: ${detail}` : base;
  const answer = jsonAnswer(httpStatusOf(code, mode), code, {
    msg,
    code,
    request_count: requestCount,
    version: 'latest',
    data: null,
  });
  // Clients honour Retry-After on throttles, whatever status the body travels with.
  if (code === -7) answer.headers['retry-after'] = '1';
  return answer;
}

/** The auth answer, exactly as documented: top-level access_token and http_code, no data. */
export function authAnswer(accessToken: string): Answer {
  return jsonAnswer(200, 200, { msg: 'SUCCESS', code: 200, http_code: 200, access_token: accessToken });
}

/** Any JSON body with the JSON content type. */
export function jsonAnswer(status: number, code: number | null, body: unknown): Answer {
  return { status, code, headers: { 'content-type': JSON_TYPE }, body: JSON.stringify(body) };
}

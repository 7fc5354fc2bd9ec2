// The API's error codes, one list (packages/shop-api/src/api/apiCodes.ts): each code's name, the till's advice, the
// server's answer and its listing words come from the same row, for the engine and the relay alike.
import { describe, expect, it } from 'vitest';
import { API_CODES, apiCodeAnswer } from '@shop-lookup/shop-api';
import { apiErrorFromAnswer } from '@shop-lookup/shop-api';
import { failureText } from '../src/door/upstreamErrors';

const label = { method: 'GET', path: '/v2/shop/coupons' };

describe('apiCodes', () => {
  it('gives every documented code one name, used by the engine and the relay alike', () => {
    for (const [code, info] of Object.entries(API_CODES)) {
      const error = apiErrorFromAnswer(label, 400, Number(code), 'upstream text');
      expect(error.code, code).toBe(info.code);
      expect(error.message, code).toContain(info.advice);
      expect(apiCodeAnswer(Number(code), 400), code).toBe(info.answer);
      expect(failureText(error), code).toBe(`${info.code}: ${info.listing} (API code ${code}, HTTP 400)`);
    }
  });

  it('answers a code it does not know with the numbers only, never the upstream text', () => {
    expect(apiCodeAnswer(-42, 418)).toBe(
      'SHOP API ERROR: the shop API answered code -42 (HTTP 418); its message is not passed on',
    );
    expect(failureText(apiErrorFromAnswer(label, 418, -42, 'secret-echo'))).toBe(
      'api_error: the shop API answered with an error; it is listed again later (API code -42, HTTP 418)',
    );
  });
});

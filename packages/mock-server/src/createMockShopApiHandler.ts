// The request handler and the methods that steer it; startMockShopApi wraps it in a server.
import { handleControlRequest, type MockControls } from './control';
import { errorAnswer } from './envelope';
import { handleShopRequest } from './handleShopRequest';
import { corsHeaders, sendAnswer, splitUrl } from './http';
import { createMockState, type MockState } from './state';
import type { MockData, MockRequestHandler, MockShopApiHandler, MockShopApiHandlerOptions, WireRecord } from './types';

function upsertBy(list: WireRecord[], field: string, record: WireRecord): void {
  const at = list.findIndex((row) => row[field] === record[field]);
  if (at >= 0) list[at] = record;
  else list.push(record);
}

function controlsOf(state: MockState): MockControls {
  return {
    upsertCoupon: (record) => upsertBy(state.data.coupons, 'coupon_code', record),
    removeCoupon(code) {
      const at = state.data.coupons.findIndex((row) => row.coupon_code === code);
      if (at < 0) return false;
      state.data.coupons.splice(at, 1);
      return true;
    },
    upsertIssuedCoupon: (record) => upsertBy(state.data.issuedCoupons, 'coupon_issue_code', record),
    setProductOptions: (productNo, options) => void state.data.products.set(productNo, options),
    expireTokens: () => state.tokens.expireAll(),
    setDown(down) {
      state.down = down;
      // A server that goes down drops the requests it was holding open too.
      if (down) for (const res of state.hanging) res.socket?.destroy();
    },
    inject: (fault, when) => state.faults.inject(fault, when),
    clearFaults: () => state.faults.clear(),
    hold: (when) => state.holds.hold(when),
    // In place: callers may hold the array.
    resetRequests: () => void state.requests.splice(0),
  };
}

/** The answer for a path the mock does not serve when there is no `next` to pass it to. */
function notServed(state: MockState, res: Parameters<MockRequestHandler>[1]): void {
  const cors = state.options.cors ? corsHeaders('shop') : undefined;
  sendAnswer(res, errorAnswer(-98, state.options.httpStatus, state.requestCount), cors);
}

/** Internal: the handler plus what startMockShopApi needs to shut it down. */
export interface MockShopApiHandlerWithState extends MockShopApiHandler {
  /** End every response held open by the 'hang' fault. */
  releaseHanging(): void;
}

/**
 * Creates the mock API as a request handler, for node:http or connect / Vite middleware. As middleware (with
 * `next`) it handles only paths starting with /v2/ or /__mock/ and passes every other request on.
 * @example const mock = createMockShopApiHandler({ rateLimits: false }); viteServer.middlewares.use(mock.handler);
 */
export function createMockShopApiHandler(options: MockShopApiHandlerOptions = {}): MockShopApiHandlerWithState {
  const state = createMockState(options);
  const controls = controlsOf(state);

  const handler: MockRequestHandler = (req, res, next) => {
    const { rawPath } = splitUrl(req.url);
    const isShop = rawPath.startsWith('/v2/');
    const isControl = state.options.control && rawPath.startsWith('/__mock/');
    if (!isShop && !isControl) {
      if (next) next();
      else notServed(state, res);
      return;
    }
    if (req.method === 'OPTIONS') {
      // Preflights are neither recorded nor limited; while down they fail like every other /v2 request.
      const cors = state.options.cors ? corsHeaders(isShop ? 'shop' : 'control') : undefined;
      if (isShop && state.down) res.socket?.destroy();
      else sendAnswer(res, { status: 204, code: null, headers: {}, body: '' }, cors);
      return;
    }
    const work = isShop ? handleShopRequest(state, req, res) : handleControlRequest(state, controls, req, res);
    work.catch((error: unknown) => {
      // Only a bug (or a body read cut off by the client) gets here: answer -19 if the socket still can.
      if (res.headersSent || res.destroyed) return void res.destroy();
      sendAnswer(res, errorAnswer(-19, state.options.httpStatus, state.requestCount, String(error)));
    });
  };

  return {
    get data(): MockData {
      return state.data;
    },
    set data(data: MockData) {
      state.data = data;
    },
    get requests() {
      return state.requests;
    },
    ...controls,
    handler,
    releaseHanging() {
      state.holds.releaseAll();
      for (const res of state.hanging) res.socket?.destroy();
    },
  };
}

// HTTP control endpoints under /__mock/, for browser tests and the demo page, which cannot call the JS methods.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { jsonAnswer } from './envelope';
import { assertFault } from './faults';
import { corsHeaders, readBody, sendAnswer, splitUrl } from './http';
import type { MockState } from './state';
import type { FaultWhen, MockShopApiHandler, WireRecord } from './types';

/** The methods the endpoints call, so HTTP and JS steer the mock through the same code. */
export type MockControls = Pick<
  MockShopApiHandler,
  | 'upsertCoupon'
  | 'removeCoupon'
  | 'upsertIssuedCoupon'
  | 'setProductOptions'
  | 'expireTokens'
  | 'setDown'
  | 'inject'
  | 'clearFaults'
  | 'resetRequests'
  | 'hold'
>;

class ControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const text = await readBody(req);
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new ControlError(400, 'body must be JSON');
  }
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ControlError(400, `${what} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

/** `when` as JSON: path (prefix string), pathPattern (RegExp source), times (number, or "Infinity"/null), after. */
function whenOf(value: unknown): FaultWhen {
  if (value === undefined) return {};
  const when = asObject(value, 'when');
  const result: FaultWhen = {};
  if (typeof when.path === 'string') result.path = when.path;
  if (typeof when.pathPattern === 'string') result.path = new RegExp(when.pathPattern);
  if (when.times === 'Infinity' || when.times === null) result.times = Infinity;
  else if (typeof when.times === 'number') result.times = when.times;
  if (typeof when.after === 'number') result.after = when.after;
  return result;
}

function state$(state: MockState): Record<string, unknown> {
  return {
    coupons: state.data.coupons.length,
    issuedCoupons: state.data.issuedCoupons.length,
    products: state.data.products.size,
    requests: state.requests.length,
    throttled: state.requests.filter((record) => record.throttled).length,
    down: state.down,
    faults: state.faults.size(),
  };
}

// Routes on "METHOD shape", where the shape replaces the id segment by a star: "DELETE coupons/<star>".
async function route(
  state: MockState,
  controls: MockControls,
  method: string,
  parts: string[],
  req: IncomingMessage,
): Promise<unknown> {
  const [area = '', id = '', sub] = parts;
  const shape = parts.length === 1 ? area : parts.length === 2 ? `${area}/*` : `${area}/*/${sub}`;
  switch (`${method} ${shape}`) {
    case 'GET state':
      return state$(state);
    case 'GET requests':
      return state.requests;
    case 'DELETE requests':
      controls.resetRequests();
      return { ok: true };
    case 'DELETE faults':
      controls.clearFaults();
      return { ok: true };
    case 'POST expire-tokens':
      controls.expireTokens();
      return { ok: true };
    case 'POST down': {
      const body = asObject(await jsonBody(req), 'body');
      if (typeof body.down !== 'boolean') throw new ControlError(400, 'down must be true or false');
      controls.setDown(body.down);
      return { ok: true, down: body.down };
    }
    case 'POST faults': {
      const body = asObject(await jsonBody(req), 'body');
      try {
        assertFault(body.fault);
        controls.inject(body.fault, whenOf(body.when));
      } catch (error) {
        throw new ControlError(400, error instanceof Error ? error.message : String(error));
      }
      return { ok: true, faults: state.faults.size() };
    }
    case 'POST coupons':
    case 'POST issued-coupons': {
      const record = asObject(await jsonBody(req), 'record');
      const field = area === 'coupons' ? 'coupon_code' : 'coupon_issue_code';
      if (typeof record[field] !== 'string') throw new ControlError(400, `${field} must be a string`);
      if (area === 'coupons') controls.upsertCoupon(record);
      else controls.upsertIssuedCoupon(record);
      return { ok: true };
    }
    case 'POST holds': {
      const body = asObject(await jsonBody(req), 'body');
      const when = { ...whenOf(body.when), answered: body.answered === true };
      return { ok: true, id: controls.hold(when).id };
    }
    case 'GET holds/*':
    case 'DELETE holds/*': {
      const hold = state.holds.find(Number(id));
      if (!hold) throw new ControlError(404, `no hold ${id}`);
      if (method === 'DELETE') hold.release();
      return { ok: true, caught: hold.caught, held: hold.held };
    }
    case 'DELETE coupons/*':
      return { ok: true, removed: controls.removeCoupon(id) };
    case 'POST products/*/options': {
      const options = await jsonBody(req);
      if (!Array.isArray(options) || !/^\d+$/.test(id)) throw new ControlError(400, 'takes a JSON array of options');
      controls.setProductOptions(Number(id), options as WireRecord[]);
      return { ok: true };
    }
    default:
      throw new ControlError(404, `no control endpoint ${method} /__mock/${parts.join('/')}`);
  }
}

/**
 * Serves the /__mock/ endpoints: GET state, GET|DELETE requests, POST|DELETE faults, POST down, POST coupons,
 * DELETE coupons/<code>, POST issued-coupons, POST products/<no>/options, POST expire-tokens, POST holds (body
 * `{ when, answered }`, answers `{ id }`), GET holds/<id> (`{ caught, held }`), DELETE holds/<id> (releases it).
 * @example await fetch(`${api.url}/__mock/down`, { method: 'POST', body: JSON.stringify({ down: true }) })
 */
export async function handleControlRequest(
  state: MockState,
  controls: MockControls,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const cors = state.options.cors ? corsHeaders('control') : undefined;
  const { rawPath } = splitUrl(req.url);
  try {
    const parts = rawPath
      .slice('/__mock/'.length)
      .split('/')
      .filter(Boolean)
      .map((part) => decodeURIComponent(part));
    const result = await route(state, controls, req.method ?? 'GET', parts, req);
    sendAnswer(res, jsonAnswer(200, null, result), cors);
  } catch (error) {
    const status = error instanceof ControlError ? error.status : error instanceof URIError ? 400 : 500;
    const message = error instanceof Error ? error.message : String(error);
    sendAnswer(res, jsonAnswer(status, null, { ok: false, error: message }), cors);
  }
}

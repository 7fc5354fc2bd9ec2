// One fetch Request through the mock's node:http-style handler, without a server: the request becomes a readable
// stream with method, url and headers; the response object collects what the handler writes, or the drop.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { MockRequestHandler } from '../types';

/** What the handler did: answered, or dropped the connection (down, 'drop', a 'hang' the client gave up on). */
export type Exchange = { status: number; headers: Record<string, string>; body: Buffer } | 'dropped';

/** The part of ServerResponse the mock's handlers use: writeHead, end, destroy, socket.destroy, 'close'. */
class CollectedResponse extends EventEmitter {
  headersSent = false;
  destroyed = false;
  statusCode = 200;
  readonly socket = { destroy: () => this.destroy() };
  private headers: Record<string, string> = {};

  constructor(private readonly settle: (exchange: Exchange) => void) {
    super();
  }

  writeHead(status: number, headers: Record<string, string> = {}): this {
    this.statusCode = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }

  end(body?: Buffer | string): this {
    if (this.destroyed) return this;
    this.headersSent = true;
    this.settle({ status: this.statusCode, headers: this.headers, body: Buffer.from(body ?? '') });
    this.emit('close');
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.settle('dropped');
    this.emit('close');
    return this;
  }
}

/**
 * Runs `request` through `handler` as if it arrived at `url` (path and query, as a server would see `req.url`).
 * An aborted request (the client's timeout) ends a held-open answer the way a closed socket does.
 * @example const answer = await exchangeWithHandler(mock.handler, request, '/v2/shop/coupons?page=1');
 */
export async function exchangeWithHandler(
  handler: MockRequestHandler,
  request: Request,
  url: string,
): Promise<Exchange> {
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : Buffer.alloc(0);
  const req = Object.assign(Readable.from(body.length ? [body] : []), {
    method: request.method,
    url,
    headers: Object.fromEntries(request.headers),
  });
  return new Promise<Exchange>((resolve) => {
    const res = new CollectedResponse(resolve);
    if (request.signal.aborted) return void res.destroy();
    request.signal.addEventListener('abort', () => res.destroy(), { once: true });
    handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
  });
}

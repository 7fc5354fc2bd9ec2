// A small round-robin load balancer on loopback, for the process-level relay tests: each request goes to the next
// backend; a backend that refuses the connection, or drops it before any answer, is skipped and a GET tried on the
// next one (as a proxy's "next upstream on error" does: nothing was answered, and a GET may be asked again). It
// appends the client's address to X-Forwarded-For (the relays trust one hop) and records every request: which till
// (x-test-till), which backend, when, and how it was answered.
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface BalancedRequest {
  till: string;
  /** The request path and query, as the till sent it. */
  url: string;
  backend: string | null;
  /** When it arrived, when it was last sent to a backend, and when its answer was sent (or it failed). */
  at: number;
  sentAt: number;
  doneAt: number | null;
  status: number | null;
  /** Errors of the backends tried, by code. */
  errors: string[];
}

export interface Balancer {
  url: string;
  /** The backends' origins; changed in place to add or remove one. */
  backends: string[];
  log: BalancedRequest[];
  close(): Promise<void>;
}

/** Whether the request may go to another backend after an error: nothing was answered yet, and it may be repeated. */
const retryable = (req: IncomingMessage, error: NodeJS.ErrnoException): boolean =>
  req.method === 'GET' || req.method === 'HEAD' || error.code === 'ECONNREFUSED';

/**
 * @example const lb = await startBalancer(relays.map((r) => r.url)); createShopLookup({ baseUrl:
 * `${lb.url}/shop-api`, ... });
 */
export async function startBalancer(backends: string[]): Promise<Balancer> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const log: BalancedRequest[] = [];
  let turn = 0;

  /** Sends the request to the backend after `start` + `tries` in the ring: a retry tries the next one in turn. */
  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    entry: BalancedRequest,
    start: number,
    tries: number,
  ): void {
    if (tries >= Math.max(1, backends.length) * 2) {
      entry.doneAt = Date.now();
      entry.status = 502;
      res
        .writeHead(502, { 'content-type': 'application/json' })
        .end('{"code":"bad_gateway","message":"no backend answered"}');
      return;
    }
    const backend = backends[(start + tries) % backends.length]!;
    entry.backend = backend;
    entry.sentAt = Date.now();
    const forwarded = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const upstream = request(
      `${backend}${req.url}`,
      { method: req.method, headers: { ...req.headers, 'x-forwarded-for': forwarded }, agent },
      (answer) => {
        entry.status = answer.statusCode ?? null;
        // hop-by-hop headers stay between the balancer and the backend
        const { connection: _c, 'keep-alive': _k, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(res);
        answer.on('end', () => (entry.doneAt = Date.now()));
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      entry.errors.push(`${backend.slice(-5)}:${error.code ?? error.message}`);
      if (!res.headersSent && retryable(req, error)) return forward(req, res, body, entry, start, tries + 1);
      entry.doneAt = Date.now();
      res.destroy();
    });
    // the till went away (an engine closing, a long-poll given up): so does its request to the backend
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: BalancedRequest = {
        till: String(req.headers['x-test-till'] ?? '?'),
        url: req.url ?? '/',
        backend: null,
        at: Date.now(),
        sentAt: 0,
        doneAt: null,
        status: null,
        errors: [],
      };
      log.push(entry);
      forward(req, res, Buffer.concat(chunks), entry, turn++, 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    backends,
    log,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

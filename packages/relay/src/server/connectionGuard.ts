// Bounds on the relay server's connections, so idle or slow clients cannot exhaust its file descriptors: header,
// request and keep-alive timeouts, and a cap. Node's header and request timeouts only run once a request has begun,
// so a connection that sends nothing (or a byte or two) would stay open for ever: a connection whose first request's
// headers have not arrived within the header timeout is answered 408 and closed here, as Node does a slow request. Past the cap, a new connection first makes room
// by closing the oldest connections that carry no request (never sent one, or idle between keep-alive requests);
// when every connection is busy, the new one's requests are answered 503 with Retry-After (the health routes still
// answer). A hard limit a little above the cap makes Node drop connections beyond it at once.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Open connections at most before the guard makes room or answers 503. */
  maxConnections: number;
  /**
   * Time a client has to send its request headers (Node's headersTimeout), and a new connection its first request's
   * headers (closed here otherwise: Node's timeouts never start for a connection that sends nothing).
   */
  headersTimeoutMs: number;
  /** Time a client has to send its whole request (Node's requestTimeout; a long-poll's wait is not counted). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
}

/** Connections above the cap that Node still accepts (and the guard answers 503 on), before it drops them. */
const HARD_HEADROOM = 64;
/** How often Node checks the header and request timeouts, ms (its default, 30 s, would stretch them). */
const TIMEOUT_CHECK_MS = 1_000;

export interface ConnectionGuard {
  /** Open connections now. */
  count(): number;
  /** Whether requests on this socket are past the cap (to be answered 503). */
  isOver(socket: Socket): boolean;
  /** Connections closed to make room, so far. */
  evicted(): number;
}

interface SocketState {
  /** Requests under way on it now. */
  active: number;
  /** Whether it ever carried a request (a fresh one is closed first: it is what an idle flood looks like). */
  served: boolean;
  over: boolean;
}

/** The options to create the server with (only settable then). @example createServer(serverOptions(limits), handler) */
export function serverOptions(limits: ConnectionLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
  };
}

/**
 * @example const server = createServer(serverOptions(limits), handler); const guard = guardConnections(server,
 * limits);
 */
export function guardConnections(server: Server, limits: ConnectionLimits): ConnectionGuard {
  const open = new Map<Socket, SocketState>(); // in arrival order: the oldest first
  let evicted = 0;
  const firstRequest = new Map<Socket, ReturnType<typeof setTimeout>>();
  server.maxConnections = limits.maxConnections + HARD_HEADROOM;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;

  function makeRoom(newcomer: Socket): void {
    for (const pass of ['fresh', 'idle'] as const) {
      for (const [socket, state] of open) {
        if (open.size <= limits.maxConnections) return;
        if (socket === newcomer || state.active > 0 || (pass === 'fresh' && state.served)) continue;
        open.delete(socket);
        socket.destroy();
        evicted++;
      }
    }
  }

  server.on('connection', (socket: Socket) => {
    open.set(socket, { active: 0, served: false, over: false });
    // its first request's headers within the header timeout, or it is closed (the 'request' event clears this)
    const first = setTimeout(() => {
      if (open.get(socket)?.served !== false || socket.destroyed) return;
      // as Node answers a request whose headers came too slowly (whichever of the two closes it first)
      if (socket.writable) socket.write('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
      socket.destroy();
    }, limits.headersTimeoutMs);
    first.unref();
    firstRequest.set(socket, first);
    socket.once('close', () => {
      clearTimeout(first);
      firstRequest.delete(socket);
      open.delete(socket);
    });
    if (open.size > limits.maxConnections) {
      makeRoom(socket);
      if (open.size > limits.maxConnections) open.get(socket)!.over = true;
    }
  });
  server.on('request', (req, res) => {
    const timer = firstRequest.get(req.socket);
    if (timer) {
      clearTimeout(timer);
      firstRequest.delete(req.socket);
    }
    const state = open.get(req.socket);
    if (!state) return;
    state.active++;
    state.served = true;
    res.once('close', () => state.active--);
  });

  return {
    count: () => open.size,
    isOver: (socket) => open.get(socket)?.over === true,
    evicted: () => evicted,
  };
}

// A shop API that misbehaves on the paths a test names, as a real HTTP server on 127.0.0.1 in front of the mock API
// (every other request is passed to the mock): redirects, answers of any length (streamed, never held), a gzip bomb,
// an answer that never ends. And a server that records whatever reaches it (where a redirect points).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** Handles a request itself (true), or leaves it to the mock API (false). */
export type Misbehaviour = (req: IncomingMessage, res: ServerResponse, body: string) => boolean | Promise<boolean>;

export interface TestServer {
  /** 'http://127.0.0.1:<port>' */
  url: string;
  close(): Promise<void>;
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

/**
 * A server on 127.0.0.1 for `handler`; close() drops its connections.
 * @example const relayServer = await serve(async (req, res) => relay(req, res));
 */
export async function serve(
  handler: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void,
): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * `misbehave` first; what it leaves goes to `mockUrl` (method, path, the API's headers and the body) and back.
 * @example const api = await startHostileUpstream(mock.url, (req, res) => req.url === '/v2/auth' && redirect(res,
 * 307, elsewhere));
 */
export function startHostileUpstream(mockUrl: string, misbehave: Misbehaviour): Promise<TestServer> {
  return serve(async (req, res) => {
    const body = await bodyOf(req);
    if (await misbehave(req, res, body)) return;
    const headers: Record<string, string> = {};
    for (const name of ['access-token', 'content-type', 'accept']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await fetch(`${mockUrl}${req.url}`, {
      method: req.method!,
      headers,
      ...(body === '' ? {} : { body }),
    });
    const text = await answer.text();
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(text);
  });
}

/** What reached the recorder. */
export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * A server that answers 200 to everything and keeps what it got.
 * @example const thief = await startRecorder(); thief.received
 */
export async function startRecorder(): Promise<TestServer & { received: Recorded[] }> {
  const received: Recorded[] = [];
  const server = await serve(async (req, res) => {
    received.push({ method: req.method!, url: req.url!, headers: req.headers, body: await bodyOf(req) });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      '{"code":200,"msg":"SUCCESS","access_token":"stolen","data":{"list":[],"pagenation":{"data_count":0,"current_page":1,"total_page":1,"pagesize":100}}}',
    );
  });
  return Object.assign(server, { received });
}

/** Answers a redirect to `location`. */
export function redirect(res: ServerResponse, status: number, location: string): true {
  res.writeHead(status, { location });
  res.end();
  return true;
}

/**
 * Answers `bytes` bytes of a JSON envelope that never closes, streamed a MiB at a time as the client reads (and
 * stopped when it hangs up): nothing that long is ever held.
 */
export function longAnswer(res: ServerResponse, bytes: number): true {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(bytes) });
  res.write('{"code":200,"msg":"SUCCESS","data":');
  let left = bytes - 36;
  const more = (): void => {
    while (left > 0 && !res.destroyed) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= part.length;
      if (left === 0) return void res.end(part);
      if (!res.write(part)) return void res.once('drain', more);
    }
  };
  more();
  return true;
}

let bomb: Buffer | undefined;

/**
 * A gzip bomb: about 1 MB on the wire that inflates to 1 GiB of spaces inside a JSON envelope (64 gzip members of
 * 16 MiB each, which a gunzip reads one after the other).
 */
export function gzipBomb(res: ServerResponse): true {
  if (!bomb) {
    const member = gzipSync(Buffer.alloc(16 * 1024 * 1024, 0x20), { level: 9 });
    bomb = Buffer.concat([
      gzipSync('{"code":200,"msg":"SUCCESS","data":'),
      ...Array.from({ length: 64 }, () => member),
    ]);
  }
  res.writeHead(200, {
    'content-type': 'application/json',
    'content-encoding': 'gzip',
    'content-length': String(bomb.length),
  });
  res.end(bomb);
  return true;
}

/** Answers the headers and a first few bytes, then a space now and then, and never ends. */
export function trickle(res: ServerResponse): true {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"code":200,');
  const timer = setInterval(() => res.write(' '), 20);
  res.on('close', () => clearInterval(timer));
  return true;
}

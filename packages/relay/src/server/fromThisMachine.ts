// Whether a request comes from this machine, for the operators' routes when OPS_TOKEN is not set: its connection is
// from a loopback address and it was not forwarded. A forwarded request (X-Forwarded-For, Forwarded, X-Real-IP) came
// through a proxy from somewhere else, whatever address the header names: a client that reaches the relay directly
// writes those headers itself, and a proxy on this machine connects from loopback for every client it serves.
import type { IncomingMessage } from 'node:http';

const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/** @example isLoopback('::ffff:127.0.0.1') // true */
function isLoopback(address: string): boolean {
  return address === '::1' || /^(?:::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
}

/**
 * True for a request made on this machine itself (never one a proxy forwarded, whatever TRUST_PROXY_HOPS says).
 * @example fromThisMachine(req) // false for a client writing X-Forwarded-For: 127.0.0.1
 */
export function fromThisMachine(req: IncomingMessage): boolean {
  if (FORWARDING_HEADERS.some((name) => req.headers[name] !== undefined)) return false;
  return isLoopback(req.socket.remoteAddress ?? '');
}

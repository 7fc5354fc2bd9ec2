// A shaped link in userspace (no root, no tc): a TCP proxy on loopback that holds a bandwidth and a round-trip time
// between its clients and a target, as a shop's Wi-Fi or DSL would. Each direction is one link shared by every
// connection: data leaves it in order at `mbps` (a FIFO serialiser, a token bucket with no burst) and arrives half
// a round trip later (a delay queue). A new connection's first bytes leave one round trip after it was opened (the
// TCP handshake). Not modelled: slow start, losses, ACK pacing; the floors the bench compares with have none either.
import { createServer, connect } from 'node:net';

/**
 * @param target `{ host, port }` the link leads to
 * @example const link = await startShapedLink({ target: { host: '127.0.0.1', port: 8080 }, mbps: 20, rttMs: 40 });
 *          fetch(`${link.origin}/...`); link.bytes.down; await link.close();
 */
export async function startShapedLink({ target, mbps, rttMs }) {
  const bytesPerMs = (mbps * 1e6) / 8 / 1000;
  const oneWayMs = rttMs / 2;
  // a sender is paused while this much of its data waits on the link (about four bandwidth-delay products)
  const highWater = Math.max(64 * 1024, 4 * bytesPerMs * rttMs);
  const bytes = { up: 0, down: 0 };
  const sockets = new Set();

  /** One direction of the link: a FIFO of what left the sender, delivered in order when its time comes. */
  function direction(count) {
    let freeAt = 0; // when the link has sent everything queued so far
    const queue = []; // { at, deliver }
    let timer = null;
    const pump = () => {
      timer = null;
      const now = performance.now();
      while (queue.length > 0 && queue[0].at <= now) queue.shift().deliver();
      if (queue.length > 0) timer = setTimeout(pump, Math.max(0, queue[0].at - performance.now()));
    };
    return {
      /** Queues `size` bytes (0: a close) leaving no earlier than `notBefore`; `deliver` runs when they arrive. */
      send(size, notBefore, deliver) {
        const start = Math.max(performance.now(), freeAt, notBefore);
        freeAt = start + size / bytesPerMs;
        count(size);
        queue.push({ at: freeAt + oneWayMs, deliver });
        if (timer === null) timer = setTimeout(pump, Math.max(0, queue[0].at - performance.now()));
      },
      stop: () => timer && clearTimeout(timer),
    };
  }
  const up = direction((n) => (bytes.up += n));
  const down = direction((n) => (bytes.down += n));

  /** Carries `from`'s data to `to` over `link`, holding `from` while too much of it waits there. */
  function carry(from, to, link, opensAt) {
    let waiting = 0;
    from.on('data', (chunk) => {
      waiting += chunk.length;
      if (waiting > highWater) from.pause();
      link.send(chunk.length, opensAt, () => {
        waiting -= chunk.length;
        if (!to.destroyed) to.write(chunk);
        if (waiting <= highWater / 2 && from.isPaused()) from.resume();
      });
    });
    from.on('end', () => link.send(0, opensAt, () => to.end()));
  }

  const server = createServer({ allowHalfOpen: true }, (client) => {
    const opensAt = performance.now() + rttMs; // the handshake: SYN, SYN-ACK, then the first data
    const upstream = connect({ port: target.port, host: target.host, allowHalfOpen: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on('close', () => sockets.delete(s));
    }
    const fail = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', fail);
    upstream.on('error', fail);
    carry(client, upstream, up, opensAt);
    carry(upstream, client, down, 0);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    mbps,
    rttMs,
    /** Bytes that crossed the link each way since the start (or the last reset): headers and bodies as sent. */
    bytes,
    reset() {
      bytes.up = 0;
      bytes.down = 0;
    },
    /** ms the link needs for `n` bytes in one direction (no delay). */
    transferMs: (n) => n / bytesPerMs,
    async close() {
      up.stop();
      down.stop();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

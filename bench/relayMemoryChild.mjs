// The relay's memory in a process of its own (started by relayBench.mjs with --expose-gc --import tsx, so that no
// compiler runs in it): RSS from a baseline taken after warm-up (a small relay started, listed and closed, GC run,
// RSS settled) to the relay holding the listed coupons (after GC, settled), and the heap it holds (the heap with
// it, minus the heap once it is closed and released). In the bench's own process RSS
// says nothing about the relay: what earlier scenarios allocated goes back to the system meanwhile (a run once
// printed −82 MB). argv[2]: { target, warmTarget } as JSON. Prints one line of JSON: { rss, heap, listMs, version }.
import { createServer } from 'node:http';
import * as relayEntry from '../packages/relay/src/index.ts';

const { target, warmTarget } = JSON.parse(process.argv[2]);

const gc = () => {
  globalThis.gc();
  globalThis.gc();
};

/** A relay listing `url` on a loopback server; resolves once its first listing is in. */
async function relayOn(url) {
  const relay = relayEntry.createShopRelay({
    key: 'demo-key',
    secret: 'demo-secret',
    target: url,
    basePath: '/shop-api',
    public: true,
    rateLimits: false,
    clientLimits: false,
  });
  const server = createServer((req, res) => relay(req, res));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  await relay.ready;
  await relay.refresh();
  return {
    relay,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await relay.close();
    },
  };
}

/** After GC, RSS shrinks for a while as freed pages go back to the system: wait until it stops falling. */
async function settled() {
  let last = Infinity;
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // closed sockets and timers let go
    gc();
    const now = process.memoryUsage();
    if (now.rss >= last) return now;
    last = now.rss;
  }
  return process.memoryUsage();
}

// warm-up: the code paths of a listing run once (and their code is compiled), so the baseline holds them
const warm = await relayOn(warmTarget);
await warm.close();
const before = await settled();

const t0 = performance.now();
let measured = await relayOn(target);
const listMs = performance.now() - t0;
const { version } = await measured.relay.status();
const held = await settled(); // measured as the baseline was
await measured.close();
measured = null; // nothing holds the relay any more
const released = await settled();
// RSS: what the process grew by; heap: what the relay held (the heap with it, minus the heap once it is released)
const growth = { rss: held.rss - before.rss, heap: held.heapUsed - released.heapUsed };
process.stdout.write(`${JSON.stringify({ ...growth, listMs, version })}\n`);
process.exit(0);

// One worker seen through the Chrome DevTools Protocol: a browser-level session attached to the worker target
// (playwright's own CDP sessions only reach pages), for its heap and CPU profiles.

/** Worker targets of the browser. */
export async function workerTargets(cdp) {
  const { targetInfos } = await cdp.send('Target.getTargets');
  return targetInfos.filter((t) => t.type === 'worker');
}

/**
 * A protocol session with the worker target `targetId`: `send(method, params)` → result.
 * @example const w = await attachWorker(cdp, id); await w.send('Profiler.enable'); await w.detach();
 */
export async function attachWorker(cdp, targetId) {
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: false });
  let nextId = 1;
  const pending = new Map();
  const onMessage = (e) => {
    if (e.sessionId !== sessionId) return;
    const m = JSON.parse(e.message);
    const settle = pending.get(m.id);
    if (settle) {
      pending.delete(m.id);
      settle(m);
    }
  };
  cdp.on('Target.receivedMessageFromTarget', onMessage);
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, (m) => (m.error ? reject(new Error(`${method}: ${m.error.message}`)) : resolve(m.result)));
        cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(reject);
      }),
    async detach() {
      cdp.off('Target.receivedMessageFromTarget', onMessage);
      await cdp.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
    },
  };
}

/**
 * Samples the worker's used JS heap every `everyMs` until stopped; `peak` is the largest sample. With `collect`,
 * each sample follows a full garbage collection: the live heap (what the worker holds), not the garbage V8 has
 * not collected yet (which depends on when its collector runs, and on how long the work ran).
 * @example const heap = await sampleHeap(worker); ...; const { peak } = await heap.stop();
 */
export async function sampleHeap(worker, { everyMs = 50, collect = false } = {}) {
  const usage = async () => {
    if (collect) await worker.send('HeapProfiler.collectGarbage').catch(() => null);
    return (await worker.send('Runtime.getHeapUsage').catch(() => null))?.usedSize ?? null;
  };
  const samples = [];
  const first = await usage();
  let running = true;
  const loop = (async () => {
    while (running) {
      const used = await usage();
      if (used !== null) samples.push(used);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    first,
    async stop() {
      running = false;
      await loop;
      // and once more at the end, when everything the work kept is still there
      const last = await usage();
      if (last !== null) samples.push(last);
      return { first, peak: Math.max(first ?? 0, ...samples), samples: samples.length };
    },
  };
}

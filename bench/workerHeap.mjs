// One worker seen through the Chrome DevTools Protocol: a browser-level session attached to the worker target
// (cdpPage.mjs's browser session), for its heap and CPU profiles; only while attached does the worker pay for it.

/** Worker targets of the browser. */
export async function workerTargets(cdp) {
  const { targetInfos } = await cdp.send('Target.getTargets');
  return targetInfos.filter((t) => t.type === 'worker');
}

/**
 * A protocol session with the worker target `targetId` of the page: `send(method, params)` → result. A dedicated
 * worker answers only a session its page's auto-attach opened (one attached from the browser gets no answer), so
 * the page auto-attaches its workers (no domain enabled in them) until `detach()`.
 * @example const w = await attachWorker(h, id); await w.send('Profiler.enable'); await w.detach();
 */
export async function attachWorker({ cdp, pageSession }, targetId) {
  let onAttached;
  const attached = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${targetId} was not attached in 10 s`)), 10_000);
    onAttached = (e) => e.targetInfo.targetId === targetId && (clearTimeout(timer), resolve(e.sessionId));
  });
  pageSession.on('Target.attachedToTarget', onAttached);
  const autoAttach = (on) =>
    pageSession.send('Target.setAutoAttach', { autoAttach: on, waitForDebuggerOnStart: false, flatten: true });
  await autoAttach(true);
  const sessionId = await attached.finally(() => pageSession.off('Target.attachedToTarget', onAttached));
  const worker = cdp.sessionOf(sessionId);
  return {
    send: (method, params = {}) => worker.send(method, params),
    async detach() {
      await pageSession.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
      await autoAttach(false).catch(() => undefined);
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

// The bench worker's probes: the MessagePort the page sends first is answered by the baseline probes, loaded with
// import() like the engine (a static import would put Dexie into the worker's entry chunk: see worker/worker.ts).
// Imported before worker/worker.ts, so this listener runs before the entry's and keeps the port message to itself.
self.addEventListener('message', (event: MessageEvent) => {
  const port = (event.data as { benchProbes?: MessagePort } | null)?.benchProbes;
  if (!port) return;
  event.stopImmediatePropagation();
  void Promise.all([import('comlink'), import('./probes')]).then(([{ expose }, { createProbes }]) =>
    expose(createProbes(), port),
  );
});

export {};

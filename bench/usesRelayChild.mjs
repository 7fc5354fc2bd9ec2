// The relay command for the uses bench (usesBench.mjs, run with --expose-gc --import tsx): the command itself
// (packages/relay/src/server/main.ts, configured by the environment), plus one thing: on SIGUSR2 it collects its
// garbage and prints `{"msg":"heap","heap":<bytes used>}`, so the bench reads the relay's live heap, not V8's
// sawtooth between collections.
process.on('SIGUSR2', () => {
  globalThis.gc();
  globalThis.gc();
  console.log(JSON.stringify({ msg: 'heap', heap: process.memoryUsage().heapUsed }));
});
await import('../packages/relay/src/server/main.ts');

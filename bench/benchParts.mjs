// The bench's parts, each run on its own: a part that throws, still runs past its bound, or leaves a rejection
// nothing awaited, adds a failed row that names it (with its error) and the bench goes on with the next part, so
// the table and the JSON are written whatever one part does. Each part's time is kept (results.parts) and logged.

/** The figure of a part's own row when it failed: `uses: the part ran to its end`. */
export const partFigure = (name) => `${name}: the part ran to its end`;

/** An error's message, with its cause's (a failed fetch says why in its cause only). */
function describe(error) {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause
    ? ` (${[error.cause.code, error.cause.message ?? error.cause].filter(Boolean).join(' ')})`
    : '';
  return `${error.message}${cause}`;
}

/**
 * @param boundS a part still running after this many seconds counts as failed (it is not stopped: its rows may still
 * come, after its failed row); Infinity: no bound
 * @example const parts = createParts({ row, log }); await parts.run('uses', () => benchUses(...)); parts.failed
 */
export function createParts({ row, log, boundS = Infinity }) {
  const failed = [];
  const seconds = {};
  let current = null;
  /** Part `name` failed: logged each time, one row per part. */
  const fail = (name, error) => {
    const message = describe(error);
    log(`${name} FAILED: ${error instanceof Error ? error.stack : message}`);
    if (failed.includes(name)) return;
    failed.push(name);
    row({ figure: partFigure(name), ours: null, unit: '', budget: 'runs', pass: false, note: message.slice(0, 300) });
  };
  return {
    /** The names of the parts that failed, in the order they ran. */
    failed,
    /** Each part's wall time, in seconds. */
    seconds,
    /** An error nothing awaited (an unhandled rejection): a failure of the part running, not the bench's end. */
    unhandled(error) {
      fail(current ?? 'the bench itself', error);
    },
    async run(name, fn) {
      const t0 = performance.now();
      current = name;
      let timer;
      try {
        const bound = Number.isFinite(boundS)
          ? new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`still running after ${boundS} s`)), boundS * 1000);
            })
          : null;
        await (bound ? Promise.race([fn(), bound]) : fn());
      } catch (error) {
        fail(name, error);
      } finally {
        current = null;
        clearTimeout(timer);
        seconds[name] = Math.round((performance.now() - t0) / 100) / 10;
        log(`${name}: ${seconds[name]} s${failed.at(-1) === name ? ' (failed)' : ''}`);
      }
    },
  };
}

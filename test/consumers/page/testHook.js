// What the consumer tests drive from Chromium: window.consumerTest.sync() and .settle(method, args, offline), for the
// lookup an app made (the apps' entries, and the quick-start app's test-hook/hook.js, install it).

/** The first answer of a lookup that is not waiting on a refresh (and, if asked, has the wanted `offline`). */
function settle(lookup, method, args, offline) {
  return new Promise((resolve, reject) => {
    let last;
    let done = false;
    let subscription;
    const finish = (fn) => {
      done = true;
      clearTimeout(timer);
      subscription?.unsubscribe();
      fn();
    };
    const timer = setTimeout(
      () => finish(() => reject(new Error(`${method}(${args}) did not settle; last answer: ${JSON.stringify(last)}`))),
      30_000,
    );
    subscription = lookup[method](...args).subscribe({
      next(result) {
        last = result;
        if (!done && !result.fetching && (offline === undefined || result.offline === offline))
          finish(() => resolve(result));
      },
      error: (error) => finish(() => reject(error)),
    });
    if (done) subscription.unsubscribe();
  });
}

/** Puts `window.consumerTest` in place for `lookup`. */
export function installTestHook(lookup) {
  window.consumerTest = {
    sync: () => lookup.sync(),
    settle: (method, args, offline) => settle(lookup, method, args, offline),
    // the engine's status as it is now (its first emission)
    status: () =>
      new Promise((resolve) => {
        const subscription = lookup.status().subscribe((status) => {
          resolve(status);
          queueMicrotask(() => subscription.unsubscribe());
        });
      }),
  };
}

// Entry of the consumer apps (Vite and webpack): the README's storefront example, pasted in as src/storefront.js by
// the test, or (?worker=factory) the README's `worker` factory option; plus a hook the test drives from Chromium.
const mode = new URLSearchParams(location.search).get('worker');
const app = mode === 'factory' ? import('./factory.js') : import('./storefront.js');

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
        if (!done && !result.fetching && (offline === undefined || result.offline === offline)) finish(() => resolve(result));
      },
      error: (error) => finish(() => reject(error)),
    });
    if (done) subscription.unsubscribe();
  });
}

app.then(({ lookup }) => {
  window.consumerTest = {
    sync: () => lookup.sync(),
    settle: (method, args, offline) => settle(lookup, method, args, offline),
  };
});

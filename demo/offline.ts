// The offline app shell, page side: registers the built demo's service worker (sw.js, made by vite-plugin-pwa:
// Workbox precaching every file of the build), says in the header once the shell is cached, and brings a new build
// to the till without reloading it under the cashier: a button offers it, and the next start takes it by itself.
import { h, replace } from './dom';

/** How often an open till asks whether a new build was deployed (a start asks too). */
const UPDATE_CHECK_MS = 60 * 60_000;
/** A start that found a new build waits this long for it to take over, then runs the build it has. */
const TAKE_OVER_MS = 10_000;

type ShellState = 'pending' | 'ready' | 'unavailable' | 'dev';

/** How many files Workbox keeps for offline use (its precache). */
async function precachedFiles(): Promise<number> {
  let files = 0;
  for (const name of await caches.keys()) {
    if (name.startsWith('workbox-precache')) files += (await (await caches.open(name)).keys()).length;
  }
  return files;
}

/** Resolves true once `worker` is the active one, false if it fails (or `ms`, when given, pass first). */
function activated(worker: ServiceWorker, ms?: number): Promise<boolean> {
  if (worker.state === 'activated') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      worker.removeEventListener('statechange', onChange);
      resolve(value);
    };
    const onChange = () => {
      if (worker.state === 'activated') done(true);
      else if (worker.state === 'redundant') done(false);
    };
    const timer = ms === undefined ? undefined : setTimeout(() => done(false), ms);
    worker.addEventListener('statechange', onChange);
  });
}

/** A new build (installed, waiting behind the one that runs) takes over; true once it did. */
function takeOver(waiting: ServiceWorker, ms = TAKE_OVER_MS): Promise<boolean> {
  const taken = activated(waiting, ms);
  waiting.postMessage({ type: 'SKIP_WAITING' }); // Workbox's own message for it
  return taken;
}

/** Calls `found` with each new build that finishes installing behind the running one from now on. */
function watchForUpdates(registration: ServiceWorkerRegistration, found: (waiting: ServiceWorker) => void): void {
  const follow = (worker: ServiceWorker | null) =>
    worker?.addEventListener('statechange', () => {
      // (the first install has no active worker: it activates by itself and is no update)
      if (worker.state === 'installed' && registration.active) found(worker);
    });
  follow(registration.installing); // one found by this start's register()
  registration.addEventListener('updatefound', () => follow(registration.installing));
  setInterval(() => void registration.update().catch(() => undefined), UPDATE_CHECK_MS);
}

/**
 * Starts the app shell. Resolves false when this start found a new build already downloaded: it takes over and the
 * page reloads into it, so start nothing; otherwise true (also where there is no service worker). `updateButton`:
 * shown while a new build waits, takes it when pressed (without one, the next start takes it).
 * @example if (await startOfflineShell(byTestId(page, 'offline-ready'), byTestId(page, 'app-update'))) startTill();
 */
export async function startOfflineShell(indicator: HTMLElement, updateButton?: HTMLButtonElement): Promise<boolean> {
  const say = (state: ShellState, text: string) => {
    indicator.dataset.state = state;
    replace(indicator, h('span', {}, text));
  };
  if (!('serviceWorker' in navigator)) {
    say('unavailable', 'No offline cache in this browser');
    return true;
  }
  if (__DEMO_BUILD__ === null) {
    // the dev server serves modules as they are edited: no shell is kept, and one left by a built demo on this
    // origin would serve its old files
    for (const old of await navigator.serviceWorker.getRegistrations()) await old.unregister();
    say('dev', 'Offline reload: built demo only (npm run demo)');
    return true;
  }
  say('pending', 'Preparing offline use…');
  let registration: ServiceWorkerRegistration;
  try {
    registration = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  } catch (error) {
    say('unavailable', `Offline cache unavailable (${(error as Error).message})`);
    return true;
  }

  const offer = (waiting: ServiceWorker) => {
    // an open till is never reloaded under the cashier: offered, and taken at the next start anyway
    if (updateButton) {
      updateButton.hidden = false;
      updateButton.onclick = () => {
        updateButton.disabled = true;
        void takeOver(waiting);
      };
    }
    // whichever tab takes it, every tab of the till reloads into it (the old files leave the cache)
    void activated(waiting).then((taken) => taken && location.reload());
  };

  // a new build downloaded while the till ran before: take it now, before the till starts
  const waiting = registration.active ? registration.waiting : null;
  if (waiting) {
    say('pending', 'Starting the new version…');
    if (await takeOver(waiting)) {
      location.reload();
      return false;
    }
    offer(waiting); // it did not take over in time: the till starts on the build it has
  }
  watchForUpdates(registration, offer);

  const installing = registration.installing;
  void Promise.race([
    navigator.serviceWorker.ready.then(() => true),
    installing ? activated(installing) : new Promise<boolean>(() => undefined),
  ]).then(async (ready) => {
    if (ready) say('ready', `Ready offline (${await precachedFiles()} files cached)`);
    else say('unavailable', 'Offline cache failed (reload once online)');
  });
  return true;
}

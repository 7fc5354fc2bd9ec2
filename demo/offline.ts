// The offline app shell, page side: registers sw.js, waits (briefly) until it controls the page so that the
// shop-lookup worker and its modules are fetched through it, and tells it what the page loaded before that.
import { h, replace } from './dom';

export interface OfflineShell {
  /** Caches what the page has loaded so far; resolves true when the shell is complete in the cache. */
  warm(): Promise<boolean>;
}

const SKIP = /^\/(shop-api|__mock|__demo)(\/|$)|^\/sw\.js$/;

function controlled(timeoutMs: number): Promise<boolean> {
  if (navigator.serviceWorker.controller) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      navigator.serviceWorker.removeEventListener('controllerchange', onChange);
      resolve(value);
    };
    const onChange = () => done(true);
    const timer = setTimeout(() => done(Boolean(navigator.serviceWorker.controller)), timeoutMs);
    navigator.serviceWorker.addEventListener('controllerchange', onChange);
  });
}

/** Everything same-origin this page has loaded (its modules, styles, the document itself). */
function loadedUrls(): string[] {
  const urls = new Set<string>([location.pathname + location.search]);
  for (const entry of performance.getEntriesByType('resource')) {
    const url = new URL(entry.name);
    if (url.origin === location.origin && !SKIP.test(url.pathname)) urls.add(url.pathname + url.search);
  }
  return [...urls];
}

/**
 * @example const shell = await startOfflineShell(indicator); ...; await shell.warm();
 */
export async function startOfflineShell(indicator: HTMLElement, waitMs = 4000): Promise<OfflineShell> {
  const say = (state: 'pending' | 'ready' | 'unavailable', text: string) => {
    indicator.dataset.state = state;
    replace(indicator, h('span', {}, text));
  };
  if (!('serviceWorker' in navigator)) {
    say('unavailable', 'No offline cache in this browser');
    return { warm: async () => false };
  }
  say('pending', 'Preparing offline use…');
  let ok = false;
  try {
    await navigator.serviceWorker.register('/sw.js', { scope: '/' });
    ok = await controlled(waitMs);
  } catch (error) {
    say('unavailable', `Offline cache unavailable (${(error as Error).message})`);
    return { warm: async () => false };
  }
  return {
    async warm() {
      const worker = navigator.serviceWorker.controller;
      if (!ok || !worker) {
        say('unavailable', 'Offline cache not active yet (reload once online)');
        return false;
      }
      const channel = new MessageChannel();
      const answer = new Promise<{ ok: boolean; total: number }>((resolve) => {
        channel.port1.onmessage = (e) => resolve(e.data as { ok: boolean; total: number });
      });
      worker.postMessage({ type: 'warm', urls: loadedUrls() }, [channel.port2]);
      const result = await answer;
      say('ready', `Ready offline (${result.total} files cached)`);
      return result.ok;
    },
  };
}

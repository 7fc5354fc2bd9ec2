// The one timer of the page: it re-words every "x min ago". Data itself is never polled: it arrives through
// the lookups' Observables.
import { ago, clockTime } from './format';

/** Shows `at` as "3 min ago" in `el` (with the exact time as tooltip) and keeps it current. */
export function stampAgo(el: HTMLElement, at: number | null, prefix = ''): void {
  if (at === null) {
    delete el.dataset.at;
    el.textContent = `${prefix}never`;
    el.title = '';
    return;
  }
  el.dataset.at = String(at);
  el.dataset.prefix = prefix;
  el.textContent = `${prefix}${ago(at)}`;
  el.title = clockTime(at);
}

/** Starts the page's clock; returns a stop function. */
export function startClock(root: ParentNode = document, everyMs = 15_000): () => void {
  const timer = setInterval(() => {
    const now = Date.now();
    for (const el of root.querySelectorAll<HTMLElement>('[data-at]')) {
      el.textContent = `${el.dataset.prefix ?? ''}${ago(Number(el.dataset.at), now)}`;
    }
  }, everyMs);
  return () => clearInterval(timer);
}

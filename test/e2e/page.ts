// What a test does on a page, written once for every engine: each helper is a function run in the page through
// EnginePage.evaluate (waits poll in the page itself: one round trip per wait). Clicks, typing and choices are
// DOM events, as a person's input reaches the page's handlers (label clicks toggle their checkbox, typing fires
// input and change); the same on every engine, none of them driver-specific.
import type { EnginePage } from './engines';

/** Waits on this machine (2 slow cores, a mock with the API's real rate limits) are generous but bounded. */
export const WAIT_MS = 30_000;

type State = 'attached' | 'visible' | 'hidden' | 'detached';
type TextMatch = string | { source: string; flags: string };

/** The selector of the element(s) with this data-testid. */
export const tid = (testid: string) => `[data-testid="${testid}"]`;

const matchOf = (text: string | RegExp): TextMatch =>
  typeof text === 'string' ? text : { source: text.source, flags: text.flags };

/** Waits until `selector` is in that state; on timeout, says what was awaited and what the status bar showed. */
export async function waitFor(
  page: EnginePage,
  selector: string,
  what: string,
  options: { state?: State; timeout?: number } = {},
): Promise<void> {
  const { state = 'attached', timeout = WAIT_MS } = options;
  const ok = await page.evaluate(
    async ({ selector, state, timeout }) => {
      const shown = (el: Element) => {
        const style = getComputedStyle(el);
        return el.getClientRects().length > 0 && style.visibility !== 'hidden' && style.display !== 'none';
      };
      const met = () => {
        const all = [...document.querySelectorAll(selector)];
        if (state === 'attached') return all.length > 0;
        if (state === 'detached') return all.length === 0;
        if (state === 'visible') return all.some(shown);
        return !all.some(shown);
      };
      const end = Date.now() + timeout;
      while (!met()) {
        if (Date.now() > end) return false;
        await new Promise((r) => setTimeout(r, 50));
      }
      return true;
    },
    { selector, state, timeout },
  );
  if (!ok) {
    const status = await textOf(page, 'status').catch(() => '(page gone)');
    throw new Error(
      `${what}: ${selector} not ${state} within ${timeout} ms; the status bar shows ${JSON.stringify(status)}`,
    );
  }
}

/**
 * Waits until an element with this data-testid shows `text` (a substring, or a RegExp); says what it showed instead.
 */
export async function waitForText(
  page: EnginePage,
  testid: string,
  text: string | RegExp,
  timeout = WAIT_MS,
): Promise<void> {
  const result = await page.evaluate(
    async ({ selector, match, timeout }) => {
      const test = (s: string) =>
        typeof match === 'string'
          ? s.replace(/\s+/g, ' ').includes(match)
          : new RegExp(match.source, match.flags).test(s);
      const texts = () => [...document.querySelectorAll<HTMLElement>(selector)].map((el) => el.innerText.trim());
      const end = Date.now() + timeout;
      while (!texts().some(test)) {
        if (Date.now() > end) return { ok: false, shown: texts() };
        await new Promise((r) => setTimeout(r, 50));
      }
      return { ok: true, shown: [] as string[] };
    },
    { selector: tid(testid), match: matchOf(text), timeout },
  );
  if (!result.ok)
    throw new Error(
      `[data-testid="${testid}"] never showed ${String(text)}; it shows: ${JSON.stringify(result.shown)}`,
    );
}

/** Polls `check` (run in the page) until it returns true. */
export async function waitForPage<A>(
  page: EnginePage,
  what: string,
  check: (arg: A) => boolean | Promise<boolean>,
  arg: A,
  timeout = WAIT_MS,
): Promise<void> {
  const end = Date.now() + timeout;
  while (!(await page.evaluate(check, arg))) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The trimmed text of the first element with this data-testid. */
export async function textOf(page: EnginePage, testid: string): Promise<string> {
  const text = await page.evaluate(
    (selector) => document.querySelector<HTMLElement>(selector)?.innerText ?? null,
    tid(testid),
  );
  if (text === null) throw new Error(`no element [data-testid="${testid}"]`);
  return text.trim();
}

/** The innerText of every element matching `selector`. */
export function textsOf(page: EnginePage, selector: string): Promise<string[]> {
  return page.evaluate(
    (selector) => [...document.querySelectorAll<HTMLElement>(selector)].map((el) => el.innerText),
    selector,
  );
}

/** An attribute of the first element matching `selector` (null when absent). */
export function attrOf(page: EnginePage, selector: string, name: string): Promise<string | null> {
  return page.evaluate(({ selector, name }) => document.querySelector(selector)?.getAttribute(name) ?? null, {
    selector,
    name,
  });
}

/** How many elements match `selector`. */
export function countOf(page: EnginePage, selector: string): Promise<number> {
  return page.evaluate((selector) => document.querySelectorAll(selector).length, selector);
}

/** True when no element matching `selector` is shown. */
export function isHidden(page: EnginePage, selector: string): Promise<boolean> {
  return page.evaluate(
    (selector) => ![...document.querySelectorAll(selector)].some((el) => el.getClientRects().length > 0),
    selector,
  );
}

/** Clicks the first shown element matching `selector` (waits until there is one). */
export async function click(page: EnginePage, selector: string): Promise<void> {
  await waitFor(page, selector, `click ${selector}`, { state: 'visible' });
  await page.evaluate((selector) => {
    const el = [...document.querySelectorAll<HTMLElement>(selector)].find((e) => e.getClientRects().length > 0)!;
    el.scrollIntoView({ block: 'center' });
    el.click();
  }, selector);
}

/** Types `value` into the input matching `selector`: its value replaced, then input and change events. */
export async function fill(page: EnginePage, selector: string, value: string): Promise<void> {
  await waitFor(page, selector, `fill ${selector}`, { state: 'visible' });
  await page.evaluate(
    ({ selector, value }) => {
      const el = document.querySelector<HTMLInputElement>(selector)!;
      el.focus();
      // the prototype's setter: what typing does, whatever the page did to the element's own property
      Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), 'value')!.set!.call(el, value);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    },
    { selector, value },
  );
}

/** Chooses the option with this value in the select matching `selector`. */
export async function selectOption(page: EnginePage, selector: string, value: string): Promise<void> {
  await waitFor(page, selector, `select in ${selector}`, { state: 'visible' });
  await page.evaluate(
    ({ selector, value }) => {
      const el = document.querySelector<HTMLSelectElement>(selector)!;
      if (![...el.options].some((o) => o.value === value)) throw new Error(`${selector} has no option ${value}`);
      el.value = value;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    },
    { selector, value },
  );
}

// The one small interface the end-to-end tests drive every browser engine through: contexts (a device: its own
// storage), pages (tabs of that device), and four things done to a page (go, reload, run a function in it, take a
// screenshot). Everything else a test does (waits, clicks, typing) is a function run in the page (../page.ts), the
// same on every engine.

export type EngineName = 'chromium' | 'firefox' | 'webkit';
export const ENGINE_NAMES: readonly EngineName[] = ['chromium', 'firefox', 'webkit'];

export interface EngineOptions {
  /**
   * Storage tests: each site may keep only this many bytes (Chromium: the origin's quota overridden over CDP;
   * Firefox: the quota manager's limit in a fresh profile; WebKit: a profile on disk with a low origin quota).
   */
  storageLimitBytes?: number;
}

export interface EnginePage {
  goto(url: string): Promise<void>;
  /** Reloads and waits for the load event. */
  reload(): Promise<void>;
  /** Runs `fn(arg)` in the page (its source is sent, so it must not close over anything); resolves with its result. */
  evaluate<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R>;
  /** A PNG of the page (Chromium, Firefox: the full page; WebKit's WebDriver: the window's viewport). */
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
}

export interface EngineContext {
  newPage(): Promise<EnginePage>;
  close(): Promise<void>;
}

export interface Engine {
  name: EngineName;
  /** Product and version, for reports. */
  version: string;
  /** A new device: storage, service workers and caches of its own. */
  newContext(): Promise<EngineContext>;
  close(): Promise<void>;
}

/** The page's size on every engine (WebKit: the window's). */
export const VIEWPORT = { width: 1400, height: 1000 };
/**
 * Vite's HMR socket, which the e2e server does not open (harness.ts): its client's failed attempts are not the
 * page's.
 */
const HMR_SOCKET = /^Error: .*ws:\/\/127\.0\.0\.1:\d+\/\?token=/;

/** Page errors go to the test log with the engine's name (an uncaught error is a defect of the page). */
export const logPageError = (engine: EngineName, message: string) => {
  if (!HMR_SOCKET.test(message)) console.error(`[${engine} page error] ${message}`);
};

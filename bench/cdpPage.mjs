// Headless Chromium driven over a plain DevTools pipe, no automation library between: the bench page is measured
// as a user's browser runs it. playwright-core attaches to every worker of a page and enables the DevTools Network
// domain there (to route and report worker requests): each of a listing's 1,000 requests then went through the
// browser's instrumentation and out to the driver as events, about 30 % of an initial sync's time, which bare
// bulkPut (no requests) did not pay. Here only what the bench asks for is enabled: Runtime on the page (to
// evaluate and to see its errors), and on a worker only while its heap or CPU profile is read (workerHeap.mjs).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM_ARGS } from '../scripts/launch-chromium.mjs';

const TIMING_SWITCHES = [
  '--disable-field-trial-config',
  '--disable-background-timer-throttling',
  '--disable-backgrounding-occluded-windows',
  '--disable-renderer-backgrounding',
  '--disable-ipc-flooding-protection',
  '--disable-hang-monitor',
  '--disable-dev-shm-usage',
  '--disable-back-forward-cache',
  '--disable-extensions',
  '--mute-audio',
];

/**
 * One DevTools connection over --remote-debugging-pipe (fd 3 in, fd 4 out, messages ending in NUL). `session(id)`
 * talks to an attached target (flat sessions), the connection itself to the browser.
 */
function connect(toBrowser, fromBrowser) {
  let nextId = 1;
  const pending = new Map();
  const listeners = new Map();
  let buffered = '';
  let closed = null;
  fromBrowser.setEncoding('utf8');
  fromBrowser.on('data', (chunk) => {
    const parts = (buffered + chunk).split('\0');
    buffered = parts.pop();
    for (const text of parts) {
      const m = JSON.parse(text);
      if (m.id !== undefined) {
        const settle = pending.get(m.id);
        pending.delete(m.id);
        if (m.error) settle?.reject(new Error(`${settle.method}: ${m.error.message}`));
        else settle?.resolve(m.result);
      } else {
        for (const fn of listeners.get(`${m.sessionId ?? ''}:${m.method}`) ?? []) fn(m.params);
      }
    }
  });
  fromBrowser.on('close', () => {
    closed = new Error('the browser closed its DevTools pipe');
    for (const settle of pending.values()) settle.reject(closed);
    pending.clear();
  });
  const session = (sessionId) => ({
    send(method, params = {}) {
      if (closed) return Promise.reject(closed);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, method });
        toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
      });
    },
    on(event, fn) {
      const key = `${sessionId ?? ''}:${event}`;
      listeners.set(key, [...(listeners.get(key) ?? []), fn]);
    },
    off(event, fn) {
      const key = `${sessionId ?? ''}:${event}`;
      listeners.set(
        key,
        (listeners.get(key) ?? []).filter((f) => f !== fn),
      );
    },
  });
  return session;
}

/**
 * A page of a headless Chromium at `url`, once `ready` (an expression) is true there.
 * `call(expression)` evaluates in the page, awaits it and returns its value (JSON-able); `cdp` is the browser-level
 * session (Target.*, for workers), `pageSession` the page's own.
 * @example const c = await openChromiumPage(url, '"bench" in window'); await c.evaluate('window.bench.ping()');
 * await c.close();
 */
export async function openChromiumPage(url, ready, { onError = () => undefined } = {}) {
  const profile = await mkdtemp(join(tmpdir(), 'shop-lookup-bench-chromium-'));
  const executable = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  // and the switches playwright-core adds that bear on timing (no throttling of timers, renderers or IPC), so that
  // the driver is all that differs from the bench's earlier figures
  const args = [
    ...CHROMIUM_ARGS,
    ...TIMING_SWITCHES,
    '--remote-debugging-pipe',
    `--user-data-dir=${profile}`,
    'about:blank',
  ];
  const child = spawn(executable, args, {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const session = connect(child.stdio[3], child.stdio[4]);
  // the browser's session, and any target's once attached (flat sessions: `sessionOf(id)`)
  const cdp = { ...session(undefined), sessionOf: session };
  const close = async () => {
    await cdp.send('Browser.close').catch(() => undefined);
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    await rm(profile, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    const { product } = await cdp.send('Browser.getVersion');
    // a context of its own, as playwright-core's newContext() made it (off the record: IndexedDB in memory)
    const { browserContextId } = await cdp.send('Target.createBrowserContext', { disposeOnDetach: true });
    const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank', browserContextId });
    const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
    const page = session(sessionId);
    page.on('Runtime.exceptionThrown', (e) =>
      onError(`page error: ${e.exceptionDetails?.exception?.description ?? e.exceptionDetails?.text}`),
    );
    page.on(
      'Runtime.consoleAPICalled',
      (e) => e.type === 'error' && onError(`console: ${e.args.map((a) => a.value ?? a.description).join(' ')}`),
    );
    await page.send('Runtime.enable');
    await page.send('Page.navigate', { url });
    const evaluate = async (expression) => {
      const r = await page.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
      if (r.exceptionDetails) throw new Error(r.exceptionDetails.exception?.description ?? r.exceptionDetails.text);
      return r.result.value;
    };
    for (let i = 0; !(await evaluate(ready).catch(() => false)); i++) {
      if (i > 600) throw new Error(`the page at ${url} was not ready after 60 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { version: product.replace(/^[^/]*\//, ''), pid: child.pid, cdp, pageSession: page, evaluate, close };
  } catch (error) {
    await close();
    throw new Error(`${error.message}${stderr ? `\n${stderr}` : ''}`);
  }
}

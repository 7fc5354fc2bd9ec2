// A small W3C WebDriver client (the classic HTTP protocol): enough to drive WebKitGTK's WebKitWebDriver from the
// e2e tests and the bench (sessions, windows, navigation, scripts, screenshots). Errors name the command and what
// the driver answered.

/**
 * @example const s = await newSession('http://127.0.0.1:4444', { browserName: 'MiniBrowser' });
 * await s.navigate(url); await s.close();
 */
export async function newSession(serverUrl, capabilities) {
  // WebKitWebDriver, on 2 busy cores, now and then never answers a new session (seen in CI-like runs: "POST /session:
  // no answer within 90000 ms", then the test's retry got one at once): asked again after 30 s, up to three times
  for (let attempt = 1; ; attempt++) {
    try {
      const body = { capabilities: { alwaysMatch: capabilities } };
      const created = await command(serverUrl, 'POST', '/session', body, SESSION_TIMEOUT_MS);
      return webDriverSession(serverUrl, created.sessionId);
    } catch (error) {
      if (attempt === 3 || !String(error?.message).includes('no answer within')) throw error;
    }
  }
}

/** How long a new session may take before it is asked for again. */
const SESSION_TIMEOUT_MS = 30_000;

/**
 * A command the driver leaves unanswered fails after `timeoutMs` instead of hanging its caller (seen once in a CI-like
 * run: WebKitWebDriver never answered a script of a second window's page; the test then ran into its own timeout and
 * closing that session hung as well).
 */
async function command(serverUrl, method, path, body, timeoutMs = 90_000) {
  const res = await fetch(`${serverUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  }).catch((error) => {
    if (error?.name === 'TimeoutError')
      throw new Error(`WebDriver ${method} ${path}: no answer within ${timeoutMs} ms`);
    throw error;
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`WebDriver ${method} ${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok || json.value?.error) {
    const v = json.value ?? {};
    throw new Error(`WebDriver ${method} ${path}: ${v.error ?? res.status}${v.message ? `: ${v.message}` : ''}`);
  }
  return json.value;
}

/**
 * The script WebDriver runs for `execute`: calls `source` (a function's text) with `arg`, awaits it, reports errors.
 */
// The result travels as one JSON text made in the page: WebKitWebDriver now and then failed a plain object result
// with "Could not parse script result" (seen in a CI-like run); a string always crosses.
function asyncCall(source) {
  return `const done = arguments[arguments.length - 1];
Promise.resolve().then(() => (${source})(arguments[0])).then(
  (value) => done(JSON.stringify({ ok: true, value: value === undefined ? null : value })),
  (error) => done(JSON.stringify({ ok: false, error: String(error) + (error && error.stack ? ' | ' + error.stack : '') })),
);`;
}

function webDriverSession(serverUrl, id) {
  const send = (method, path, body, timeoutMs) => command(serverUrl, method, `/session/${id}${path}`, body, timeoutMs);
  // one command at a time: the current window is session state, switched before each page's command
  let queue = Promise.resolve();
  const serial = (fn) => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };
  let current = null;
  /** The session's script timeout (W3C default 30 s until set). */
  let scriptTimeoutMs = 30_000;
  return {
    id,
    /** Runs `fn` with `window` as the current window (commands of other windows wait their turn). */
    inWindow(window, fn) {
      return serial(async () => {
        if (window && window !== current) {
          await send('POST', '/window', { handle: window });
          current = window;
        }
        return fn();
      });
    },
    send,
    async currentWindow() {
      current = await send('GET', '/window');
      return current;
    },
    newWindow: () => serial(() => send('POST', '/window/new', { type: 'window' }).then((w) => w.handle)),
    setTimeouts(timeouts) {
      if (typeof timeouts.script === 'number') scriptTimeoutMs = timeouts.script;
      return send('POST', '/timeouts', timeouts);
    },
    setWindowRect: (rect) => send('POST', '/window/rect', rect),
    navigate: (url) => send('POST', '/url', { url }),
    refresh: () => send('POST', '/refresh', {}),
    /** Runs a function's source in the current window with one JSON argument; resolves with its (awaited) result. */
    async execute(source, arg) {
      // (longer than the session's script timeout: the driver's own timeout answers first when it can)
      const text = await send(
        'POST',
        '/execute/async',
        { script: asyncCall(source), args: [arg === undefined ? null : arg] },
        scriptTimeoutMs + 30_000,
      );
      const out = typeof text === 'string' ? JSON.parse(text) : text;
      if (out?.ok !== true) throw new Error(`in the page: ${out?.error ?? 'no answer'}`);
      return out.value;
    },
    /** A PNG of the current window's viewport. */
    screenshot: async () => Buffer.from(await send('GET', '/screenshot'), 'base64'),
    closeWindow: () => send('DELETE', '/window'),
    close: () => command(serverUrl, 'DELETE', `/session/${id}`, undefined, 20_000).catch(() => undefined),
  };
}

/** Resolves once the WebDriver server at `serverUrl` answers /status ready; rejects after `timeoutMs`. */
export async function waitForDriver(serverUrl, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const status = await command(serverUrl, 'GET', '/status');
      if (status?.ready !== false) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end) throw new Error(`the WebDriver server at ${serverUrl} did not start within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

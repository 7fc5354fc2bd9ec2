#!/usr/bin/env node
// `npm run demo`: the demo till as a shop runs it, built (`vite build`: the worker split into chunks, the app shell's
// service worker precaching every file of both pages) and served by `vite preview` with the demo's relay and mock
// API, so "reload offline" works from the first command. PORT (default 5173) and HOST (default localhost) choose
// where. `npm run demo:dev` is the dev server instead (files served as they are edited, no app shell), for working
// on the demo itself.
import { fileURLToPath } from 'node:url';
import { build, preview } from 'vite';

const config = {
  configFile: fileURLToPath(new URL('../demo/vite.config.ts', import.meta.url)),
  configLoader: 'runner',
  clearScreen: false,
};
const port = process.env.PORT ? Number(process.env.PORT) : 5173;
const host = process.env.HOST || 'localhost';

console.log('building the demo till (its app shell: reload offline works), then serving it…');
await build({ ...config, logLevel: 'warn' });
const server = await preview({ ...config, preview: { port, host, strictPort: true } });
server.printUrls();
console.log(
  '  two tills of one shop: /?till=1 and /?till=2 (the till lists the codes to try); a storefront: /storefront.html\n' +
    '  reload offline: open the till once, then DevTools → Network → Offline and reload. Ctrl-C stops it.',
);
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void server.close().then(() => process.exit(0)));

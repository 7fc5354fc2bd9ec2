// The README's Vite recipe for the credential proxy, as is: nothing here is about the worker.
import { defineConfig } from 'vite';
import { createShopApiProxy } from 'shop-lookup/proxy';

function shopApi() {
  const proxy = createShopApiProxy({
    key: process.env.SHOP_API_KEY,
    secret: process.env.SHOP_API_SECRET,
    target: process.env.SHOP_API_TARGET, // default https://api.imweb.me
    basePath: '/shop-api',
    public: true, // the dev server on your own machine; a deployed server passes authorize instead
  });
  return {
    name: 'shop-api-proxy',
    configureServer: (server) => void server.middlewares.use(proxy),
    configurePreviewServer: (server) => void server.middlewares.use(proxy),
  };
}

export default defineConfig({ plugins: [shopApi()] });

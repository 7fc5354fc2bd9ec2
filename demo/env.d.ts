// What the demo's vite config inlines into the page (see devServer.ts).
declare const __SHOP_DEMO__: import('./devServer').DemoPageConfig;

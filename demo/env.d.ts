// What the demo's vite config inlines into the page (see devServer.ts).
declare const __SHOP_DEMO__: import('./devServer').DemoPageConfig;
/** The build's time (UTC, to the minute); null when the dev server serves the page. */
declare const __DEMO_BUILD__: string | null;

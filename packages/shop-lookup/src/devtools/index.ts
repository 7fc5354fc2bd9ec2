// shop-lookup/devtools: a panel that shows what a lookup's engine holds and does, live, and acts on it (sync now,
// refresh one code, export the journal). This entry is tiny: the panel (devtoolsPanel.ts) loads when mounted.
import type { ShopLookup } from '../shopLookup';

export interface DevtoolsOptions {
  /**
   * Mount in a production build too. By default, where the bundler sets `process.env.NODE_ENV` to `'production'`,
   * `mountDevtools` mounts nothing and its panel is never loaded (as TanStack Query's devtools do).
   */
  production?: boolean | undefined;
}

// what bundlers replace in an app's build; declared here, as the browser package has no Node types
declare const process: { env: { NODE_ENV?: string } };

/** Whether the app was built for production (a bundler replaces `process.env.NODE_ENV`; without one it is not). */
function productionBuild(): boolean {
  try {
    return process.env.NODE_ENV === 'production';
  } catch {
    return false; // no bundler, no `process`: a page loaded as it is
  }
}

/**
 * Shows the devtools for `lookup`: without `element`, a floating toggle in the page's corner that opens the panel;
 * with one, the panel inside it. Framework-free, its styles in a shadow root of their own. Returns the unmount.
 * @example const unmount = mountDevtools(lookup); // later: unmount();
 */
export function mountDevtools(
  lookup: ShopLookup,
  element?: HTMLElement | null,
  options: DevtoolsOptions = {},
): () => void {
  if (productionBuild() && !options.production) return () => undefined;
  let unmount: (() => void) | null = null;
  let stopped = false;
  import('./devtoolsPanel').then(
    ({ mountPanel }) => {
      if (!stopped) unmount = mountPanel(lookup, element ?? null);
    },
    (error: unknown) => console.error('shop-lookup devtools could not load:', error),
  );
  return () => {
    stopped = true;
    unmount?.();
    unmount = null;
  };
}

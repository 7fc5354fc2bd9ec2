// @vitest-environment jsdom
// mountDevtools in a DOM (jsdom): nothing in a production build unless asked, the panel in its own shadow root
// (inline or behind the floating toggle), and nothing left once unmounted: no element, no subscription.
import { act, createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { BehaviorSubject } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LookupInspection, ShopLookup, SyncStatus } from '../../src';
import { mountDevtools } from '../../src/devtools';
import { ShopLookupDevtools } from '../../src/devtools/react';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const STATUS = {
  online: true,
  phase: 'idle',
  progress: null,
  lastSyncedAt: { coupons: 1, options: 1 },
  lastError: null,
  source: 'relay',
  relayVersion: 7,
} as SyncStatus;

const INSPECTION: LookupInspection = {
  baseUrl: '/shop-api',
  shopId: null,
  dbName: 'shop-lookup',
  coupons: 'all',
  records: { coupons: 240, issuedCoupons: 0, options: 11 },
  trackedProducts: [13805],
  resources: [{ key: 'coupons', syncedAt: 1, fetching: false, error: null }],
  unsentUses: 0,
  journal: { count: 0, latest: [] },
};

function fakeLookup() {
  const status = new BehaviorSubject<SyncStatus>(STATUS);
  const inspect = vi.fn(async () => INSPECTION);
  return { lookup: { status: () => status, inspect } as unknown as ShopLookup, status, inspect };
}

const shadow = () => document.querySelector('[data-shop-lookup-devtools]')?.shadowRoot ?? null;
const panelText = (testid: string) => shadow()?.querySelector(`[data-testid="${testid}"]`)?.textContent ?? null;

afterEach(() => {
  vi.unstubAllEnvs();
  document.body.replaceChildren();
});

describe('mountDevtools', () => {
  it('mounts nothing in a production build unless asked to', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const { lookup, status } = fakeLookup();
    mountDevtools(lookup)();
    await new Promise((r) => setTimeout(r, 0));
    expect(shadow()).toBeNull();
    expect(status.observed).toBe(false);

    const unmount = mountDevtools(lookup, null, { production: true });
    await vi.waitFor(() => expect(panelText('devtools-toggle')).toBe('shop-lookup · idle'), { timeout: 10_000 });
    unmount();
  });

  it('shows the panel inline, in its shadow root, and leaves nothing once unmounted', async () => {
    const { lookup, status, inspect } = fakeLookup();
    const box = document.body.appendChild(document.createElement('div'));
    const unmount = mountDevtools(lookup, box);
    await vi.waitFor(() => expect(panelText('devtools-coupons')).toBe('240'), { timeout: 10_000 });
    expect(box.querySelector('[data-shop-lookup-devtools="inline"]')).not.toBeNull();
    expect(document.querySelector('[data-testid="devtools-coupons"]')).toBeNull(); // only inside the shadow root
    expect(panelText('devtools-source')).toBe('relay, version 7');
    expect(inspect).toHaveBeenCalledWith({ records: true });
    unmount();
    expect(shadow()).toBeNull();
    expect(status.observed).toBe(false);
  });

  it('as a React component: the panel inside its own element while mounted, nothing after', async () => {
    const { lookup, status } = fakeLookup();
    const container = document.body.appendChild(document.createElement('div'));
    const root = createRoot(container);
    await act(async () => root.render(createElement(ShopLookupDevtools, { lookup, inline: true })));
    await vi.waitFor(() => expect(panelText('devtools-coupons')).toBe('240'), { timeout: 10_000 });
    expect(container.querySelector('[data-shop-lookup-devtools="inline"]')).not.toBeNull();
    await act(async () => root.unmount());
    expect(shadow()).toBeNull();
    expect(status.observed).toBe(false);
  });
});

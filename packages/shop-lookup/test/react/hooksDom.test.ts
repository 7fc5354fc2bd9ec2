// @vitest-environment jsdom
// The hooks in a DOM (jsdom, react-dom/client): subscribe on mount, one subscription per hook, unsubscribe on
// unmount and on a changed argument, one stable snapshot per emission.
import { act, createElement, StrictMode, useState, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useLookup, useSyncStatus, type LookupState } from '../../src/react';
import type { SyncStatus } from '../../src/types';
import { fakeLookups, found, type FakeLookups } from './fakeLookups';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

type Coupon = { coupon_code: string; name: string } | null;
let container: HTMLElement;
let root: Root;
let lookups: FakeLookups;
/** Every state a hook returned, in render order. */
let seen: LookupState<Coupon>[];

function CouponView({ code }: { code: string | null }) {
  const r = useLookup(() => (code ? lookups.coupon(code) : null), [code]);
  seen.push(r);
  return createElement('p', { id: 'coupon' }, r.pending ? 'pending' : (r.data?.name ?? 'not found'));
}

const render = (node: ReactNode) => act(() => root.render(node));
const text = () => container.textContent;

beforeEach(() => {
  container = document.body.appendChild(document.createElement('div'));
  root = createRoot(container);
  lookups = fakeLookups();
  seen = [];
});

afterEach(() => {
  act(() => root.unmount());
  container.remove();
});

describe('useLookup in a DOM', () => {
  it('subscribes once on mount, shows each emission, and unsubscribes on unmount', async () => {
    await render(createElement(CouponView, { code: 'A' }));
    expect(text()).toBe('pending');
    expect(lookups.open()).toEqual(['coupon:A']);

    act(() => lookups.emit('coupon:A', found({ coupon_code: 'A', name: '10% 할인' })));
    expect(text()).toBe('10% 할인');
    act(() => lookups.emit('coupon:A', { ...found({ coupon_code: 'A', name: '20% 할인' }), offline: true }));
    expect(text()).toBe('20% 할인');
    expect(seen.at(-1)).toMatchObject({ pending: false, offline: true, data: { name: '20% 할인' } });

    act(() => root.unmount());
    expect(lookups.open()).toEqual([]);
    root = createRoot(container); // for afterEach
  });

  it('unsubscribes from the old lookup and subscribes to the new one when the argument changes', async () => {
    await render(createElement(CouponView, { code: 'A' }));
    act(() => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'A coupon' })));
    await render(createElement(CouponView, { code: 'B' }));
    expect(lookups.open()).toEqual(['coupon:B']);
    // B has not answered yet: A's data is not shown as B's
    expect(text()).toBe('pending');
    act(() => lookups.emit('coupon:B', found(null)));
    expect(text()).toBe('not found');
    expect(lookups.created).toEqual(['coupon:A', 'coupon:B']);
  });

  it('keeps its one subscription across re-renders with the same argument', async () => {
    function Parent() {
      const [n, setN] = useState(0);
      return createElement(
        'div',
        null,
        createElement('button', { type: 'button', onClick: () => setN(n + 1) }, `renders ${n}`),
        createElement(CouponView, { code: 'A' }),
      );
    }
    await render(createElement(Parent));
    for (let i = 0; i < 3; i++) act(() => container.querySelector('button')!.click());
    expect(container.querySelector('button')!.textContent).toBe('renders 3');
    expect(lookups.created).toEqual(['coupon:A']);
    expect(lookups.open()).toEqual(['coupon:A']);
  });

  it('returns the same snapshot object between emissions and a new one per emission', async () => {
    function Parent({ n }: { n: number }) {
      return createElement('div', { 'data-n': n }, createElement(CouponView, { code: 'A' }));
    }
    await render(createElement(Parent, { n: 1 }));
    act(() => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'one' })));
    const afterFirst = seen.length;
    await render(createElement(Parent, { n: 2 }));
    await render(createElement(Parent, { n: 3 }));
    const between = seen.slice(afterFirst - 1);
    expect(between.length).toBeGreaterThan(1);
    expect(new Set(between).size).toBe(1);
    act(() => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'two' })));
    expect(seen.at(-1)).not.toBe(between[0]);
    expect(seen.at(-1)).toMatchObject({ data: { name: 'two' } });
  });

  it('has exactly one open subscription under StrictMode (mount, unmount, mount again)', async () => {
    await render(createElement(StrictMode, null, createElement(CouponView, { code: 'A' })));
    expect(lookups.open()).toEqual(['coupon:A']);
    act(() => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'strict' })));
    expect(text()).toBe('strict');
  });

  it('looks nothing up while the source returns null', async () => {
    await render(createElement(CouponView, { code: null }));
    expect(text()).toBe('pending');
    expect(lookups.created).toEqual([]);
    await render(createElement(CouponView, { code: 'A' }));
    expect(lookups.open()).toEqual(['coupon:A']);
  });

  it('keeps the last data and reports the error when the lookup fails for good', async () => {
    await render(createElement(CouponView, { code: 'A' }));
    act(() => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'kept' })));
    act(() => lookups.fail('coupon:A', { code: 'closed', message: 'the lookup was closed' }));
    expect(text()).toBe('kept');
    expect(seen.at(-1)).toMatchObject({
      pending: false,
      data: { name: 'kept' },
      error: { code: 'closed', message: 'the lookup was closed' },
    });
  });

  it('reports an error that came before any answer, still pending', async () => {
    await render(createElement(CouponView, { code: 'A' }));
    act(() => lookups.fail('coupon:A', new TypeError('worker failed to start')));
    expect(seen.at(-1)).toMatchObject({
      pending: true,
      data: undefined,
      error: { code: 'internal_error', message: 'TypeError: worker failed to start' },
    });
  });
});

describe('useSyncStatus in a DOM', () => {
  const status = (phase: SyncStatus['phase']): SyncStatus => ({
    online: phase !== 'offline',
    phase,
    progress: null,
    lastSyncedAt: { coupons: null, options: null },
    lastError: null,
  });

  function Badge({ lookup }: { lookup: FakeLookups | null }) {
    const s = useSyncStatus(lookup);
    return createElement('span', null, s ? s.phase : 'no status');
  }

  it('shows each status, subscribes once and unsubscribes on unmount', async () => {
    await render(createElement(Badge, { lookup: lookups }));
    expect(text()).toBe('no status');
    act(() => lookups.emit('status', status('syncing')));
    expect(text()).toBe('syncing');
    act(() => lookups.emit('status', status('offline')));
    expect(text()).toBe('offline');
    expect(lookups.open()).toEqual(['status']);
    await render(createElement(Badge, { lookup: null }));
    expect(lookups.open()).toEqual([]);
    expect(text()).toBe('no status');
  });
});

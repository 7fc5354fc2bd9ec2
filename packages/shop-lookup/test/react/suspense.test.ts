// @vitest-environment jsdom
// useSuspenseLookup in a DOM: the first answer suspends (a local answer still waiting on the network too), later
// answers update, a failure before the first answer reaches the error boundary, and the subscription ends once no
// component reads it.
import { act, Component, createElement, Suspense, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useSuspenseLookup } from '../../src/react';
import { fakeLookups, found, type FakeLookups } from './fakeLookups';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let container: HTMLElement;
let root: Root;
let lookups: FakeLookups;

function CouponName({ code }: { code: string }) {
  const coupon = useSuspenseLookup(() => lookups.coupon(code), [lookups, code]);
  return createElement('p', { id: 'coupon' }, coupon.data?.name ?? 'not found');
}

class Boundary extends Component<{ children: ReactNode }, { error: { message?: string } | null }> {
  override state = { error: null as { message?: string } | null };
  static getDerivedStateFromError(error: { message?: string }) {
    return { error };
  }
  override render() {
    return this.state.error ? createElement('p', { id: 'error' }, this.state.error.message) : this.props.children;
  }
}

const page = (code: string) =>
  createElement(Boundary, null, createElement(Suspense, { fallback: 'loading' }, createElement(CouponName, { code })));
const text = () => container.textContent;

beforeEach(() => {
  container = document.body.appendChild(document.createElement('div'));
  root = createRoot(container);
  lookups = fakeLookups();
});
afterEach(() => {
  act(() => root.unmount());
  container.remove();
  vi.useRealTimers();
});

describe('useSuspenseLookup', () => {
  it('suspends until an answer that may be shown, then updates with later answers, on one subscription', async () => {
    await act(async () => root.render(page('A')));
    expect(text()).toBe('loading');
    // nothing known locally and the network is being asked: still suspended
    await act(async () => lookups.emit('coupon:A', { ...found(null), syncedAt: null, fetching: true }));
    expect(text()).toBe('loading');
    await act(async () => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'Welcome' })));
    expect(text()).toBe('Welcome');
    await act(async () => lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'Welcome (15%)' })));
    expect(text()).toBe('Welcome (15%)');
    expect(lookups.open()).toEqual(['coupon:A']);
  });

  it('throws a failure before the first answer to the error boundary', async () => {
    // (React logs the error the boundary caught: expected here)
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await act(async () => root.render(page('B')));
    await act(async () => lookups.fail('coupon:B', { code: 'closed', message: 'shop-lookup was closed.' }));
    expect(text()).toBe('shop-lookup was closed.');
    logged.mockRestore();
  });

  it('releases the subscription once no mounted component reads it', async () => {
    vi.useFakeTimers();
    await act(async () => root.render(page('C')));
    await act(async () => lookups.emit('coupon:C', found({ coupon_code: 'C', name: 'Spring' })));
    expect(text()).toBe('Spring');
    await act(async () => root.render(createElement('p', null, 'elsewhere')));
    expect(lookups.open()).toEqual(['coupon:C']);
    await act(async () => vi.advanceTimersByTime(5_000));
    expect(lookups.open()).toEqual([]);
  });
});

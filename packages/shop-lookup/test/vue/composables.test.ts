// @vitest-environment jsdom
// The Vue composables (src/vue/) in a DOM and in a bare effect scope: one subscription per use, made once mounted,
// made again when a reactive value the source reads changes, ended with the component or the scope; nothing
// subscribed during server rendering.
import { createApp, createSSRApp, defineComponent, effectScope, h, nextTick, ref } from 'vue';
import { renderToString } from 'vue/server-renderer';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useLookup, useSyncStatus } from '../../src/vue';
import type { SyncStatus } from '../../src/types';
import { fakeLookups, found, type FakeLookups } from '../react/fakeLookups';

let lookups: FakeLookups;
beforeEach(() => {
  lookups = fakeLookups();
});

const STATUS = { online: true, phase: 'idle' } as SyncStatus;

describe('shop-lookup/vue', () => {
  let container: HTMLElement;
  beforeEach(() => {
    container = document.body.appendChild(document.createElement('div'));
  });
  afterEach(() => container.remove());

  it('follows a lookup in a component: pending, then each emission; a changed code swaps the subscription; unmount ends it', async () => {
    const code = ref('A');
    const Coupon = defineComponent({
      setup() {
        const coupon = useLookup(() => lookups.coupon(code.value));
        const status = useSyncStatus(lookups);
        return () =>
          h('p', [
            coupon.value.pending ? 'pending' : (coupon.value.data?.name ?? 'not found'),
            ` · ${status.value?.phase ?? '-'}`,
          ]);
      },
    });
    const app = createApp(Coupon);
    app.mount(container);
    expect(container.textContent).toBe('pending · -');
    expect(lookups.open().sort()).toEqual(['coupon:A', 'status']);

    lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'Welcome' }));
    lookups.emit('status', STATUS);
    await nextTick();
    expect(container.textContent).toBe('Welcome · idle');

    code.value = 'B';
    await nextTick();
    expect(lookups.open().sort()).toEqual(['coupon:B', 'status']);
    expect(container.textContent).toBe('pending · idle');

    app.unmount();
    expect(lookups.open()).toEqual([]);
  });

  it('keeps the last data and says why when the lookup fails for good', async () => {
    const scope = effectScope();
    const coupon = scope.run(() => useLookup(() => lookups.coupon('A')))!;
    lookups.emit('coupon:A', found({ coupon_code: 'A', name: 'Welcome' }));
    lookups.fail('coupon:A', { code: 'closed', message: 'shop-lookup was closed.' });
    expect(coupon.value).toMatchObject({ pending: false, data: { name: 'Welcome' }, error: { code: 'closed' } });
    scope.stop();
    expect(lookups.open()).toEqual([]);
  });

  it('looks nothing up for a null source, and nothing during server rendering', async () => {
    const scope = effectScope();
    const none = scope.run(() => useLookup(() => null))!;
    expect(none.value.pending).toBe(true);
    expect(lookups.created).toEqual([]);
    scope.stop();

    const Page = defineComponent({
      setup() {
        const coupon = useLookup(() => lookups.coupon('A'));
        const status = useSyncStatus(() => lookups);
        return () => h('p', `${coupon.value.pending ? 'pending' : 'found'} ${status.value === null}`);
      },
    });
    expect(await renderToString(createSSRApp(Page))).toBe('<p>pending true</p>');
    expect(lookups.created).toEqual([]);
  });
});

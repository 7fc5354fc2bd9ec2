// Server rendering (Node, react-dom/server): the hooks render their placeholder and create no lookup.
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { useLookup, useSyncStatus } from '../../src/react';
import { fakeLookups } from './fakeLookups';

describe('shop-lookup/react on the server', () => {
  it('useLookup renders the pending placeholder and never calls its source', () => {
    const lookups = fakeLookups();
    function Coupon({ code }: { code: string }) {
      const r = useLookup(() => lookups.coupon(code), [code]);
      return createElement('p', null, JSON.stringify(r));
    }
    const html = renderToString(createElement(Coupon, { code: 'WELCOME10' }));
    const shown = JSON.parse(html.replace(/^<p>|<\/p>$/g, '').replace(/&quot;/g, '"')) as unknown;
    expect(shown).toEqual({ syncedAt: null, fetching: false, offline: false, error: null, pending: true });
    expect(lookups.created).toEqual([]);
    expect(lookups.open()).toEqual([]);
  });

  it('useSyncStatus renders null and never calls status()', () => {
    const lookups = fakeLookups();
    function Badge() {
      const status = useSyncStatus(lookups);
      return createElement('span', null, status === null ? 'no status' : status.phase);
    }
    expect(renderToString(createElement(Badge))).toBe('<span>no status</span>');
    expect(lookups.created).toEqual([]);
  });
});

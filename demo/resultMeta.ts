// The small print under every lookup: how old the data is, whether it is being refreshed, offline, errors.
import type { LookupResult } from 'shop-lookup';
import { stampAgo } from './clock';
import { h } from './dom';

/** @example card.append(resultMeta(result, 'coupon-meta')) */
export function resultMeta(r: LookupResult<unknown>, testid?: string): HTMLElement {
  const age = h('span', { class: 'age', testid: testid ? `${testid}-age` : undefined });
  stampAgo(age, r.syncedAt, r.syncedAt === null ? 'never confirmed: ' : 'confirmed ');
  if (r.syncedAt === null) age.textContent = 'never confirmed by the API';
  const meta = h(
    'div',
    { class: 'meta', testid },
    age,
    r.fetching && h('span', { class: 'chip busy' }, 'refreshing…'),
    r.offline && h('span', { class: 'chip off' }, 'offline: local data'),
    r.error && h('span', { class: 'chip err', attrs: { title: r.error.message } }, r.error.message),
  );
  meta.dataset.syncedAt = r.syncedAt === null ? '' : String(r.syncedAt);
  meta.dataset.offline = String(r.offline);
  return meta;
}

// The till's header strip: online/offline, sync phase and progress, how old the local data is, the last error, and
// a relay's own trouble (it answers, but cannot list the shop: the data ages).
import type { ShopLookup, SyncStatus } from 'shop-lookup';
import type { Subscription } from 'rxjs';
import { stampAgo } from './clock';
import { h, replace } from './dom';

const PHASES: Record<SyncStatus['phase'], string> = {
  idle: 'Up to date',
  syncing: 'Syncing…',
  waiting: 'Waiting (rate limit or retry)…',
  offline: 'Offline: answering from local data',
  error: 'Last sync failed',
};

function progressText(p: NonNullable<SyncStatus['progress']>): string {
  const what = p.resource === 'coupons' ? 'Coupons' : p.resource === 'options' ? 'Product options' : p.resource;
  return p.total === null ? `${what}: ${p.done}` : `${what}: ${p.done} / ${p.total}`;
}

/** @example const sub = mountStatusBar(el, lookup); sub.unsubscribe(); */
export function mountStatusBar(root: HTMLElement, lookup: ShopLookup): Subscription {
  const badge = h('span', { class: 'badge', testid: 'net-badge' }, '…');
  const phase = h('span', { class: 'phase', testid: 'sync-phase' }, 'Starting…');
  const bar = h('progress', { testid: 'sync-progress-bar', attrs: { max: 1 } });
  const barText = h('span', { class: 'progress-text' });
  const progress = h('span', { class: 'progress', testid: 'sync-progress', attrs: { hidden: true } }, bar, barText);
  const coupons = h('span', { testid: 'synced-coupons' }, 'never');
  const options = h('span', { testid: 'synced-options' }, 'never');
  const error = h('div', { class: 'last-error', testid: 'last-error', attrs: { hidden: true, role: 'status' } });
  const follower = h(
    'span',
    {
      class: 'chip',
      testid: 'follower',
      attrs: {
        hidden: true,
        title: 'Another tab of this till runs the background syncs; this one reads the same local data.',
      },
    },
    'synced by another tab',
  );
  const via = h('span', {
    class: 'chip',
    testid: 'via-relay',
    attrs: { hidden: true, title: 'The till syncs from the shop relay: a snapshot once, then only changes, live.' },
  });
  const relayListed = h('span', {}, 'never');
  const relayState = h(
    'span',
    { class: 'chip off', testid: 'relay-state', attrs: { hidden: true, role: 'status' } },
    'Relay not updating · data as of ',
    relayListed,
  );
  const conflicts = h('span', { class: 'chip off', testid: 'use-conflicts', attrs: { hidden: true, role: 'status' } });
  const syncNow = h(
    'button',
    { class: 'ghost', testid: 'sync-now', on: { click: () => void lookup.sync() } },
    'Sync now',
  );
  replace(
    root,
    h(
      'div',
      { class: 'status-line' },
      badge,
      phase,
      progress,
      h('span', { class: 'synced', testid: 'last-synced' }, 'Coupons synced ', coupons, ' · options synced ', options),
      follower,
      via,
      relayState,
      conflicts,
      syncNow,
    ),
    error,
  );

  let last: SyncStatus | null = null;
  const render = () => {
    const s = last;
    const netUp = navigator.onLine;
    const online = netUp && (s?.online ?? true);
    badge.textContent = !netUp ? 'Offline (no network)' : s && !s.online ? 'Offline (API unreachable)' : 'Online';
    badge.dataset.state = online ? 'online' : 'offline';
    if (!s) return;
    // the engine learns about a lost network at its next request; the page knows at once
    phase.textContent = !netUp ? PHASES.offline : (PHASES[s.phase] ?? s.phase);
    phase.dataset.phase = s.phase;
    follower.hidden = s.leader !== false;
    via.hidden = s.source === undefined;
    via.textContent = s.source === 'relay' ? `via relay, version ${s.relayVersion ?? '…'}` : 'direct from the API';
    const relay = s.source === 'relay' ? s.relay : undefined;
    relayState.hidden = relay?.degraded !== true;
    if (relay?.degraded) {
      stampAgo(relayListed, relay.listedAt);
      relayState.title = `The relay answers from its last snapshot but cannot update it${relay.error ? ` (${relay.error})` : ''}: the data gets older until it lists the shop again.`;
    }
    // vouchers this till sold that another till sold too (both offline): the journal has the pairs to reconcile
    conflicts.hidden = s.useConflicts === undefined;
    if (s.useConflicts) {
      const { count, newest } = s.useConflicts;
      conflicts.textContent = `${count} voucher${count === 1 ? '' : 's'} also sold at another till`;
      conflicts.title = `Newest: ${newest.code}, also sold at ${newest.conflict.till} (order ${newest.conflict.orderId ?? 'without a reference'}). Reconcile them from the journal.`;
    }
    const p = s.phase === 'syncing' || s.phase === 'waiting' ? s.progress : null;
    progress.hidden = p === null;
    if (p) {
      if (p.total) {
        bar.max = p.total;
        bar.value = Math.min(p.done, p.total);
      } else {
        bar.removeAttribute('value'); // indeterminate
      }
      barText.textContent = progressText(p);
    }
    stampAgo(coupons, s.lastSyncedAt.coupons);
    stampAgo(options, s.lastSyncedAt.options);
    error.hidden = s.lastError === null;
    error.textContent = s.lastError ? `Last error: ${s.lastError.message}` : '';
    root.dataset.phase = s.phase;
    root.dataset.online = String(online);
  };
  addEventListener('online', render);
  addEventListener('offline', render);
  render();
  const sub = lookup.status().subscribe({
    next(s) {
      last = s;
      render();
    },
    error(e: unknown) {
      error.hidden = false;
      error.textContent = `shop-lookup could not start: ${(e as Error)?.message ?? String(e)}`;
    },
  });
  sub.add(() => {
    removeEventListener('online', render);
    removeEventListener('offline', render);
  });
  return sub;
}

// The offline journal: every verdict given from local data while offline, and every accepted issued coupon (a use,
// shared with the shop's other tills through the relay), for reconciling with the shop later.
import type { JournalEntry, ShopLookup } from 'shop-lookup';
import { h, replace } from './dom';
import { clockTime, duration, reasonText, won } from './format';

export interface Journal {
  refresh(): Promise<void>;
}

/** @example const journal = mountJournal(el, lookup); await journal.refresh(); */
export function mountJournal(root: HTMLElement, lookup: ShopLookup): Journal {
  const list = h('ol', { class: 'journal', testid: 'journal-list' });
  const note = h('p', { class: 'muted', testid: 'journal-note' });
  const refreshButton = h(
    'button',
    { class: 'ghost', testid: 'journal-refresh', attrs: { type: 'button' } },
    'Refresh',
  );
  const clearButton = h(
    'button',
    { class: 'ghost danger', testid: 'journal-clear', attrs: { type: 'button' } },
    'Clear',
  );
  const downloadButton = h(
    'button',
    { class: 'ghost', testid: 'journal-download', attrs: { type: 'button' } },
    'Download CSV',
  );
  replace(
    root,
    h('h2', {}, 'Offline journal'),
    h('p', { class: 'muted' }, 'Verdicts given without the API, and accepted vouchers, to reconcile once back online.'),
    h('div', { class: 'row' }, refreshButton, downloadButton, clearButton),
    note,
    list,
  );

  let sequence = 0;
  /** The last entry on screen: Clear deletes what the cashier saw, never an entry given since. */
  let shownThrough: number | null = null;
  const render = (entries: JournalEntry[]) => {
    shownThrough = entries.at(-1)?.id ?? null;
    note.textContent =
      entries.length === 0
        ? 'No offline verdicts.'
        : `${entries.length} offline verdict${entries.length === 1 ? '' : 's'}.`;
    note.dataset.count = String(entries.length);
    replace(
      list,
      [...entries].reverse().map((e) =>
        h(
          'li',
          {
            testid: 'journal-entry',
            attrs: { 'data-code': e.code, 'data-ok': String(e.ok), 'data-reason': e.reason ?? '' },
          },
          h('span', { class: 'when', attrs: { title: clockTime(e.at) } }, new Date(e.at).toLocaleTimeString('ko-KR')),
          h('code', {}, e.code),
          h('span', {}, won(e.amount)),
          e.ok
            ? h('span', { class: 'ok' }, `✓ −${won(e.discount ?? 0)}`)
            : h('span', { class: 'no' }, `✗ ${reasonText(e.reason ?? 'unknown')}`),
          h(
            'small',
            { class: 'muted' },
            e.syncedAt === null ? 'no confirmed data' : `data ${duration(e.at - e.syncedAt)} old`,
          ),
          e.conflict
            ? h(
                'small',
                { class: 'no', testid: 'journal-conflict' },
                `also sold at ${e.conflict.till} ${new Date(e.conflict.at).toLocaleTimeString('ko-KR')}`,
              )
            : e.ok && e.kind === 'issued'
              ? h(
                  'small',
                  { class: 'muted', testid: 'journal-shared' },
                  e.shared === null ? 'not shared yet' : 'shared with the other tills',
                )
              : '',
        ),
      ),
    );
  };
  const refresh = async () => {
    const mine = ++sequence;
    try {
      const entries = await lookup.offlineJournal();
      if (mine === sequence) render(entries);
    } catch (error) {
      if (mine !== sequence) return;
      note.textContent = `The journal could not be read: ${(error as Error)?.message ?? String(error)}`;
      note.dataset.count = '';
      shownThrough = null;
      replace(list);
    }
  };
  refreshButton.addEventListener('click', () => void refresh());
  // the journal as a spreadsheet the shop can open (exportJournal: one row per verdict, formula-safe cells)
  downloadButton.addEventListener('click', async () => {
    try {
      const csv = await lookup.exportJournal({ format: 'csv' });
      const link = h('a', {
        attrs: {
          href: URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' })),
          download: `journal-${new Date().toISOString().slice(0, 10)}.csv`,
        },
      });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (error) {
      note.textContent = `The journal could not be exported: ${(error as Error)?.message ?? String(error)}`;
    }
  });
  clearButton.addEventListener('click', async () => {
    try {
      if (shownThrough !== null) await lookup.clearOfflineJournal(shownThrough);
    } finally {
      await refresh();
    }
  });
  return { refresh };
}

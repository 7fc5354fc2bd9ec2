// The devtools panel (loaded by mountDevtools): plain DOM in a shadow root, fed by the public API alone: status()
// live, inspect() when the status moves (with the record counts) and every few seconds while open (without them),
// and the actions sync(), refresh(target) and exportJournal(). It never subscribes to a list lookup (a till's 100,000 coupons would be copied on each change).
import type { ShopLookup } from '../shopLookup';
import type { LookupInspection } from '../toolTypes';
import type { JournalEntry, LookupError, SyncStatus } from '../types';
import { PANEL_CSS } from './panelStyles';

/** While open, inspect() again this often (journal entries and counts do not show in status()). */
const INSPECT_EVERY_MS = 5_000;
/** The last errors kept. */
const ERRORS_KEPT = 20;

type Child = Node | string | null | false | undefined;

/** An element: `t` its data-testid (the hook of the tests), children as text or nodes. */
function h(tag: string, attrs: Record<string, string> = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name === 't' ? 'data-testid' : name, value);
  for (const c of children.flat()) if (c !== null && c !== false && c !== undefined) el.append(c);
  return el;
}

const time = (ms: number | null | undefined) => (ms ? new Date(ms).toLocaleTimeString() : 'never');
/** How old data confirmed at `ms` is, in the largest whole unit. */
function age(ms: number | null, now: number): string {
  if (!ms) return 'never synced';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 60 ? `${s} s` : s < 3600 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}
const errorText = (e: LookupError) => `${e.code}: ${e.message}`;

/** A row of label and value (a definition list's). */
const fact = (label: string, value: string, t?: string) => [h('dt', {}, label), h('dd', t ? { t } : {}, value)];

/**
 * Mounts the panel for `lookup`: inside `element`, or as a floating toggle on the page. Returns the unmount.
 * @example const unmount = mountPanel(lookup, null);
 */
export function mountPanel(lookup: ShopLookup, element: HTMLElement | null): () => void {
  const host = h('div', { 'data-shop-lookup-devtools': element ? 'inline' : 'floating' });
  const root = host.attachShadow({ mode: 'open' });
  const panel = h('section', { class: 'panel', t: 'devtools-panel', 'aria-label': 'shop-lookup devtools' });
  const toggle = h('button', { class: 'toggle', type: 'button', t: 'devtools-toggle', 'aria-expanded': 'false' }, '');
  const style = h('style', {}, PANEL_CSS);
  root.append(style, ...(element ? [] : [toggle]), panel);
  (element ?? document.body).append(host);

  let open = element !== null;
  let status: SyncStatus | null = null;
  let inspection: LookupInspection | null = null;
  let filter = '';
  let note = '';
  const errors: { at: number; where: string; error: LookupError }[] = [];
  const remember = (where: string, error: LookupError | null | undefined) => {
    if (!error) return;
    const last = errors[0];
    if (last && last.where === where && last.error.code === error.code && last.error.message === error.message) return;
    errors.unshift({ at: Date.now(), where, error });
    errors.length = Math.min(errors.length, ERRORS_KEPT);
  };

  // ---- reading: status() live, inspect() when it moves ----------------------------------------------------------
  let inspecting = false;
  let again = false;
  /** Whether the next inspect() counts the records: on opening and after the status moved, not on the poll. */
  let count = true;
  const inspect = (withRecords = true) => {
    if (!open) return;
    count ||= withRecords;
    if (inspecting) return void (again = true);
    inspecting = true;
    const records = count;
    count = false;
    lookup
      .inspect({ records })
      .then(
        (i) => {
          // (a poll without the counts keeps the last ones)
          inspection = { ...i, records: i.records ?? inspection?.records ?? null };
          for (const r of i.resources) remember(r.key, r.error);
        },
        (error: LookupError) => remember('inspect()', error),
      )
      .finally(() => {
        inspecting = false;
        render();
        if (!again) return;
        again = false;
        inspect(false);
      });
  };
  // ---- acting: sync now, refresh one code, export the journal ----------------------------------------------------
  const act = async (what: string, work: () => Promise<string>) => {
    note = `${what}…`;
    render();
    try {
      note = await work();
    } catch (error) {
      const e = error as LookupError;
      remember(what, e);
      note = `${what} failed: ${e.message ?? String(error)}`;
    }
    inspect();
    render();
  };
  const syncNow = () =>
    act('Sync', async () => {
      const r = await lookup.sync();
      for (const e of r.errors) remember('sync()', e);
      return r.ok
        ? `Synced: ${r.fetched} fetched, ${r.written} written.`
        : `Sync failed: ${r.errors[0]?.message ?? ''}`;
    });
  const refreshCode = (code: string, kind: 'coupon' | 'issuedCoupon') =>
    act(`Refresh ${code}`, async () => {
      const r = await lookup.refresh(kind === 'coupon' ? { coupon: code } : { issuedCoupon: code });
      remember(`refresh ${code}`, r.error);
      return r.ok ? `${code} refreshed.` : r.offline ? `${code}: offline, not asked.` : `${code}: ${r.error?.message}`;
    });
  const exportCsv = () =>
    act('Export', async () => {
      const csv = await lookup.exportJournal({ format: 'csv' });
      const a = h('a', { href: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })), download: 'journal.csv' });
      (a as HTMLAnchorElement).click();
      setTimeout(() => URL.revokeObjectURL((a as HTMLAnchorElement).href), 10_000);
      return `Journal exported (${csv.split('\r\n').length - 2} rows).`;
    });

  // ---- drawing ----------------------------------------------------------------------------------------------------
  const code = h('input', {
    t: 'devtools-code',
    placeholder: 'code',
    'aria-label': 'Code to refresh',
  }) as HTMLInputElement;
  const kind = h(
    'select',
    { t: 'devtools-kind', 'aria-label': 'Kind of code' },
    h('option', { value: 'coupon' }, 'coupon'),
    h('option', { value: 'issuedCoupon' }, 'issued coupon'),
  ) as HTMLSelectElement;
  const button = (label: string, t: string, onClick: () => void) => {
    const b = h('button', { type: 'button', t }, label);
    b.addEventListener('click', onClick);
    return b;
  };
  const actions = h(
    'div',
    { class: 'actions' },
    button('Sync now', 'devtools-sync', () => void syncNow()),
    code,
    kind,
    button('Refresh', 'devtools-refresh', () => {
      const c = code.value.trim();
      if (c) void refreshCode(c, kind.value as 'coupon' | 'issuedCoupon');
    }),
    button('Export journal (CSV)', 'devtools-export', () => void exportCsv()),
  );
  const search = h('input', {
    t: 'devtools-filter',
    placeholder: 'filter: code, order, reason, source',
    'aria-label': 'Filter the verdicts',
  }) as HTMLInputElement;
  search.addEventListener('input', () => {
    filter = search.value.trim().toLowerCase();
    render();
  });
  // the parts drawn again on each change; the filter field stays (it keeps its focus while typed in)
  const [facts, resourcesBox, conflictsBox, errorsBox, journalTitle, journalBox] = [1, 2, 3, 4, 5, 6].map(() =>
    h('div'),
  ) as HTMLElement[];
  const noteBox = h('p', { class: 'note', t: 'devtools-note', role: 'status' });
  panel.append(
    actions,
    facts!,
    h('h3', {}, 'Resources'),
    resourcesBox!,
    conflictsBox!,
    h('h3', {}, 'Last errors'),
    errorsBox!,
    journalTitle!,
    search,
    journalBox!,
    noteBox,
  );
  toggle.addEventListener('click', () => {
    open = !open;
    if (open) inspect();
    render();
  });

  function verdictRow(e: JournalEntry): HTMLElement {
    const verdict = e.ok ? `ok −${e.discount ?? 0}` : (e.reason ?? '');
    return h(
      'tr',
      { t: 'devtools-verdict', 'data-ok': String(e.ok) },
      h('td', {}, time(e.at)),
      h('td', {}, h('code', {}, e.code)),
      h('td', {}, e.orderId ?? ''),
      h('td', { class: e.ok ? 'ok' : 'no' }, verdict),
      h('td', {}, e.cause ? `${e.source} (${e.cause})` : e.source),
      h('td', {}, e.overrides.join(' ')),
      h('td', { class: e.conflict ? 'no' : '' }, e.conflict ? `also at ${e.conflict.till} ${time(e.conflict.at)}` : ''),
    );
  }

  function render(): void {
    const s = status;
    const phase = s ? (s.online ? s.phase : 'offline') : 'starting';
    toggle.textContent = `shop-lookup · ${phase}`;
    toggle.dataset.phase = phase;
    toggle.setAttribute('aria-expanded', String(open));
    panel.hidden = !open;
    host.dataset.phase = phase;
    if (!open) return;
    const i = inspection;
    const now = Date.now();
    const source = s?.source === 'relay' ? `relay, version ${s.relayVersion ?? '–'}` : (s?.source ?? 'not known yet');
    const latest = i?.journal.latest ?? [];
    const shown = latest.filter((e) =>
      [e.code, e.orderId, e.reason, e.source, e.cause, e.ok ? 'ok' : 'refused', e.conflict ? 'conflict' : '']
        .join(' ')
        .toLowerCase()
        .includes(filter),
    );
    const conflicts = latest.filter((e) => e.conflict);
    facts!.replaceChildren(
      h(
        'div',
        { class: 'grid' },
        h(
          'div',
          { class: 'card' },
          h('h3', {}, 'Source'),
          h(
            'dl',
            {},
            fact('state', phase, 'devtools-phase'),
            fact('source', source, 'devtools-source'),
            fact('base URL', i?.baseUrl ?? '…', 'devtools-base-url'),
            fact('shop id', i?.shopId ?? '–'),
            fact('database', i?.dbName ?? '…'),
            fact('this tab', s?.leader === false ? 'follows the leading tab' : 'leads the syncs'),
            s?.progress ? fact('syncing', `${s.progress.resource} ${s.progress.done}/${s.progress.total ?? '?'}`) : [],
            s?.relay?.degraded ? fact('relay', `degraded: ${s.relay.error ?? ''}`) : [],
          ),
        ),
        h(
          'div',
          { class: 'card' },
          h('h3', {}, 'Records'),
          h(
            'dl',
            {},
            fact('coupons', String(i?.records?.coupons ?? '…'), 'devtools-coupons'),
            fact('issued coupons', String(i?.records?.issuedCoupons ?? '…')),
            fact('options', String(i?.records?.options ?? '…')),
            fact('tracked products', i ? i.trackedProducts.join(', ') || 'none' : '…', 'devtools-products'),
            fact('uses not sent', String(i?.unsentUses ?? '…'), 'devtools-unsent'),
            fact('conflicts', String(s?.useConflicts?.count ?? 0), 'devtools-conflicts'),
          ),
        ),
      ),
    );
    resourcesBox!.replaceChildren(
      h(
        'table',
        { t: 'devtools-resources' },
        h('tr', {}, h('th', {}, 'resource'), h('th', {}, 'state'), h('th', {}, 'last sync'), h('th', {}, 'age')),
        (i?.resources ?? []).map((r) =>
          h(
            'tr',
            { t: 'devtools-resource', 'data-key': r.key, 'data-synced-at': String(r.syncedAt ?? '') },
            h('td', {}, r.key),
            h(
              'td',
              { class: r.error ? 'no' : '' },
              r.fetching ? 'fetching' : r.error ? r.error.code : s?.progress?.resource === r.key ? 'syncing' : 'idle',
            ),
            h('td', {}, time(r.syncedAt)),
            h('td', {}, age(r.syncedAt, now)),
          ),
        ),
      ),
    );
    conflictsBox!.replaceChildren(
      ...(conflicts.length > 0 ? [h('h3', {}, 'Conflicts')] : []),
      ...conflicts.map((e) =>
        h(
          'p',
          { class: 'no', t: 'devtools-conflict' },
          `${e.code} (order ${e.orderId ?? '?'}, ${time(e.at)}) also used at ${e.conflict!.till}, ${time(e.conflict!.at)}, order ${e.conflict!.orderId ?? '?'}`,
        ),
      ),
    );
    errorsBox!.replaceChildren(
      errors.length === 0
        ? h('p', { class: 'muted', t: 'devtools-no-errors' }, 'none')
        : h(
            'ul',
            { t: 'devtools-errors' },
            errors.map((e) =>
              h('li', { 'data-code': e.error.code }, `${time(e.at)} ${e.where}: `, h('code', {}, errorText(e.error))),
            ),
          ),
    );
    journalTitle!.replaceChildren(
      h('h3', {}, `Journal: ${i?.journal.count ?? '…'} verdicts (newest ${latest.length})`),
    );
    journalBox!.replaceChildren(
      h(
        'table',
        { t: 'devtools-journal' },
        h(
          'tr',
          {},
          ['time', 'code', 'order', 'verdict', 'source', 'overrides', 'conflict'].map((c) => h('th', {}, c)),
        ),
        shown.map(verdictRow),
      ),
    );
    noteBox.textContent = note;
  }

  // (followed once the panel is built: a status() that emits at once draws it)
  // the poll leaves the record counts out: they read every row (100,000 coupons on a large till)
  const timer = setInterval(() => inspect(false), INSPECT_EVERY_MS);
  const subscription = lookup.status().subscribe({
    next(s) {
      const moved =
        !status ||
        s.phase !== status.phase ||
        s.lastSyncedAt.coupons !== status.lastSyncedAt.coupons ||
        s.lastSyncedAt.options !== status.lastSyncedAt.options ||
        s.useConflicts?.count !== status.useConflicts?.count;
      status = s;
      remember('status', s.lastError);
      if (moved) inspect();
      render();
    },
    error: (error: LookupError) => remember('status()', error),
  });

  render();
  return () => {
    subscription.unsubscribe();
    clearInterval(timer);
    open = false;
    host.remove();
  };
}

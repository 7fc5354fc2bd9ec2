// The product picker: the tracked products, each product's options as a cashier picks them (a select for
// `default`, swatches for `color`, a text field for `input`; required ones marked), and an option finder
// by option number or option code (two different lookups: a code that looks like a number is still a code).
import type { LookupResult, ProductOption, ShopLookup } from 'shop-lookup';
import { Subscription } from 'rxjs';
import { isLight, swatchColor } from './colors';
import { h, replace } from './dom';
import { won } from './format';
import { resultMeta } from './resultMeta';

export interface Product {
  no: number;
  name: string;
  price: number;
}

type Choice = Map<number, string>; // option no → chosen value code (or typed text for input options)

function requiredMark(o: ProductOption): HTMLElement | null {
  return o.is_require
    ? h('span', { class: 'req', testid: `option-required-${o.no}`, attrs: { title: 'required' } }, '필수')
    : null;
}

function optionTitle(o: ProductOption): HTMLElement {
  return h(
    'legend',
    {},
    h('span', { class: 'opt-name' }, o.name ?? `option ${o.no}`),
    requiredMark(o),
    h('small', { class: 'muted' }, ` no ${o.no} · code ${o.code ?? '—'}`),
  );
}

function optionControl(o: ProductOption, choice: Choice, changed: () => void): HTMLElement {
  const chosen = choice.get(o.no) ?? '';
  if (o.type === 'color') {
    return h(
      'div',
      { class: 'swatches', attrs: { role: 'radiogroup' } },
      o.value_list.map((v) => {
        const color = swatchColor(v.name);
        const chip = h(
          'button',
          {
            class: `swatch${color ? '' : ' neutral'}${chosen === v.code ? ' selected' : ''}`,
            testid: `swatch-${o.no}-${v.code}`,
            attrs: {
              type: 'button',
              role: 'radio',
              'aria-checked': String(chosen === v.code),
              title: `${v.name ?? v.code} (${v.code})`,
            },
            on: {
              click: () => {
                choice.set(o.no, v.code);
                changed();
              },
            },
          },
          h('span', { class: 'dot' }),
          h('span', { class: 'swatch-name' }, v.name ?? v.code),
        );
        if (color) {
          chip.style.setProperty('--swatch', color);
          chip.dataset.color = color;
          if (isLight(color)) chip.classList.add('light');
        }
        return chip;
      }),
    );
  }
  if (o.type === 'input') {
    const input = h('input', {
      testid: `option-input-${o.no}`,
      attrs: { type: 'text', placeholder: o.name ?? 'text', value: chosen },
    });
    input.addEventListener('input', () => choice.set(o.no, input.value));
    return input;
  }
  // 'default' and any type this page does not know: a plain choice of the values
  const select = h(
    'select',
    { testid: `option-select-${o.no}` },
    h('option', { attrs: { value: '' } }, '— choose —'),
    o.value_list.map((v) => h('option', { attrs: { value: v.code, selected: chosen === v.code } }, v.name ?? v.code)),
  );
  select.addEventListener('change', () => {
    choice.set(o.no, select.value);
    changed();
  });
  return select;
}

function optionSummary(o: ProductOption | null, what: string): HTMLElement {
  if (!o) return h('p', { class: 'muted', testid: 'finder-none' }, `${what}: no such option (locally).`);
  return h(
    'div',
    { testid: 'finder-option' },
    h('div', { class: 'card-title', testid: 'finder-name' }, o.name ?? '—', requiredMark(o)),
    h(
      'dl',
      {},
      h('dt', {}, 'Option no'),
      h('dd', { testid: 'finder-no' }, String(o.no)),
      h('dt', {}, 'Option code'),
      h('dd', { testid: 'finder-code' }, o.code ?? '—'),
      h('dt', {}, 'Type'),
      h('dd', { testid: 'finder-type' }, o.type ?? '—'),
      h('dt', {}, 'Values'),
      h('dd', {}, o.value_list.length ? o.value_list.map((v) => v.name ?? v.code).join(', ') : '(free text)'),
    ),
  );
}

/** @example mountProducts(el, lookup, products, (label, price) => checkout.addLine(label, price)); */
export function mountProducts(
  root: HTMLElement,
  lookup: ShopLookup,
  initial: Product[],
  addToOrder: (label: string, price: number) => void,
): Subscription {
  const products = [...initial];
  const tabs = h('div', { class: 'tabs', testid: 'product-tabs', attrs: { role: 'tablist' } });
  const optionsBox = h('div', { class: 'options', testid: 'product-options' });
  const metaBox = h('div', { testid: 'product-options-meta' });
  const addError = h('p', { class: 'err', testid: 'add-error', attrs: { hidden: true } });
  const add = h('button', { class: 'primary', testid: 'add-to-order', attrs: { type: 'button' } }, 'Add to order');
  const trackInput = h('input', {
    testid: 'track-product',
    attrs: { type: 'number', placeholder: 'Product no.', min: 1 },
  });
  const trackForm = h(
    'form',
    { class: 'inline' },
    trackInput,
    h('button', { class: 'ghost', attrs: { type: 'submit' } }, 'Track'),
  );
  const kind = h(
    'select',
    { testid: 'finder-kind' },
    h('option', { attrs: { value: 'no' } }, 'option no'),
    h('option', { attrs: { value: 'code' } }, 'option code'),
  );
  const value = h('input', {
    testid: 'finder-value',
    attrs: { type: 'text', placeholder: 'e.g. 12 or SIZE', autocomplete: 'off' },
  });
  const finderForm = h(
    'form',
    { class: 'inline', testid: 'finder-form' },
    kind,
    value,
    h('button', { class: 'ghost', testid: 'finder-go', attrs: { type: 'submit' } }, 'Find'),
  );
  const finderResult = h('div', { class: 'card', testid: 'finder-result', attrs: { hidden: true } });
  replace(
    root,
    h('h2', {}, 'Products'),
    tabs,
    optionsBox,
    metaBox,
    h('div', { class: 'row' }, add),
    addError,
    h(
      'details',
      { class: 'tools' },
      h('summary', {}, 'Find an option · track another product'),
      h('p', { class: 'muted' }, 'Scan or type an option number or an option code of the selected product.'),
      finderForm,
      finderResult,
      trackForm,
    ),
  );

  const subscription = new Subscription();
  let current: Product | null = null;
  let options: ProductOption[] = [];
  let choice: Choice = new Map();
  let optionsSub: Subscription | null = null;
  let finderSub: Subscription | null = null;
  subscription.add(() => {
    optionsSub?.unsubscribe();
    finderSub?.unsubscribe();
  });

  function renderTabs(): void {
    replace(
      tabs,
      products.map((p) => {
        const tab = h(
          'button',
          {
            class: `tab${p === current ? ' active' : ''}`,
            testid: `product-tab-${p.no}`,
            attrs: { type: 'button', role: 'tab', 'aria-selected': String(p === current) },
            on: { click: () => select(p) },
          },
          h('span', {}, p.name),
          p.price > 0 && h('small', {}, won(p.price)),
        );
        return tab;
      }),
    );
  }

  function renderOptions(): void {
    if (!current) {
      replace(optionsBox, h('p', { class: 'muted' }, 'No products tracked. Track one by its number below.'));
      return;
    }
    if (options.length === 0) {
      replace(optionsBox, h('p', { class: 'muted', testid: 'no-options' }, 'No options known for this product (yet).'));
      return;
    }
    replace(
      optionsBox,
      options.map((o) =>
        h(
          'fieldset',
          {
            class: `option type-${o.type ?? 'unknown'}`,
            testid: `option-${o.no}`,
            attrs: { 'data-type': o.type ?? '' },
          },
          optionTitle(o),
          optionControl(o, choice, renderOptions),
        ),
      ),
    );
  }

  function select(p: Product): void {
    current = p;
    choice = new Map();
    options = [];
    addError.hidden = true;
    renderTabs();
    replace(optionsBox, h('p', { class: 'muted' }, 'Loading options…'));
    replace(metaBox);
    optionsSub?.unsubscribe();
    optionsSub = lookup.productOptions(p.no).subscribe((r: LookupResult<ProductOption[]>) => {
      options = r.data;
      renderOptions();
      optionsBox.dataset.productNo = String(p.no);
      replace(metaBox, resultMeta(r, 'options-meta'));
    });
    finderResult.hidden = true;
    finderSub?.unsubscribe();
  }

  add.addEventListener('click', () => {
    if (!current) return;
    const missing = options.filter((o) => o.is_require && !(choice.get(o.no) ?? '').trim());
    if (missing.length > 0) {
      addError.hidden = false;
      addError.textContent = `Choose ${missing.map((o) => o.name ?? `option ${o.no}`).join(', ')} first.`;
      return;
    }
    addError.hidden = true;
    const picked = options
      .map((o) => {
        const c = choice.get(o.no);
        if (!c) return null;
        return o.type === 'input' ? `“${c}”` : (o.value_list.find((v) => v.code === c)?.name ?? c);
      })
      .filter(Boolean);
    addToOrder(picked.length ? `${current.name} (${picked.join(' / ')})` : current.name, current.price);
  });

  finderForm.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!current) return;
    const raw = value.value.trim();
    if (raw === '') return;
    const productNo = current.no;
    finderSub?.unsubscribe();
    finderResult.hidden = false;
    if (kind.value === 'no') {
      if (!/^\d+$/.test(raw))
        return replace(
          finderResult,
          h('p', { class: 'err', testid: 'finder-none' }, 'An option number is a whole number.'),
        );
      finderSub = lookup
        .productOptionByNo(productNo, Number(raw))
        .subscribe((r) =>
          replace(finderResult, optionSummary(r.data, `Option no ${raw}`), resultMeta(r, 'finder-meta')),
        );
    } else {
      finderSub = lookup
        .productOptionByCode(productNo, raw)
        .subscribe((r) =>
          replace(finderResult, optionSummary(r.data, `Option code "${raw}"`), resultMeta(r, 'finder-meta')),
        );
    }
    finderResult.dataset.query = `${kind.value}:${raw}`;
  });

  trackForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const no = Number(trackInput.value);
    if (!Number.isSafeInteger(no) || no <= 0) return;
    trackInput.value = '';
    let p = products.find((x) => x.no === no);
    if (!p) {
      p = { no, name: `상품 #${no}`, price: 0 };
      products.push(p);
      void lookup.trackProducts([no]);
    }
    select(p);
  });

  renderTabs();
  if (products[0]) select(products[0]);
  else renderOptions();
  return subscription;
}

// A tiny element builder: enough DOM for a till page without a framework.
type Child = Node | string | number | null | undefined | false;

export interface Props {
  class?: string;
  /** Becomes `data-testid`, the stable hook of the end-to-end tests. */
  testid?: string;
  attrs?: Record<string, string | number | boolean | undefined>;
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };
}

/** @example h('button', { class: 'primary', on: { click: apply } }, 'Apply') */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.testid) el.dataset.testid = props.testid;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [type, fn] of Object.entries(props.on ?? {})) el.addEventListener(type, fn as EventListener);
  append(el, children);
  return el;
}

/** Appends children, skipping null/false; strings become text (never HTML). */
export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** The element with this `data-testid` inside `root`; throws if the page layout lost it. */
export function byTestId<T extends HTMLElement = HTMLElement>(root: ParentNode, testid: string): T {
  const el = root.querySelector<T>(`[data-testid="${testid}"]`);
  if (!el) throw new Error(`demo: no element [data-testid="${testid}"]`);
  return el;
}

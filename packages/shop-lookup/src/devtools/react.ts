// shop-lookup/devtools/react: the devtools as a React component (React 18 or later; `react` is an optional peer).
import { createElement, useEffect, useRef } from 'react';
import type { ShopLookup } from '../shopLookup';
import { mountDevtools } from './index';

export interface ShopLookupDevtoolsProps {
  /** The lookup to show; null or undefined shows nothing (during server rendering, before it is created). */
  lookup: ShopLookup | null | undefined;
  /** true: the panel inside this component's own element; default a floating toggle in the page's corner. */
  inline?: boolean | undefined;
  /** Mount in a production build too (see mountDevtools). */
  production?: boolean | undefined;
}

/**
 * @example <ShopLookupDevtools lookup={lookup} />
 */
export function ShopLookupDevtools({ lookup, inline, production }: ShopLookupDevtoolsProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!lookup) return undefined;
    return mountDevtools(lookup, inline ? box.current : null, { production });
  }, [lookup, inline, production]);
  return inline ? createElement('div', { ref: box }) : null;
}

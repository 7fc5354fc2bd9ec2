// The lookups as Vue refs: one subscription per use, following the reactive values the source reads.
import { shallowReadonly, shallowRef, type ShallowRef } from 'vue';
import type { Observable } from 'rxjs';
import { toLookupError } from '../errors';
import type { LookupError, LookupResult } from '../types';
import { followObservable } from './followObservable';

/**
 * What `useLookup` holds: the lookup's `LookupResult` once it answered (`pending: false`), before that (and during
 * server rendering) a placeholder with `data: undefined` and `pending: true` (with `error` set if the lookup failed
 * before its first answer).
 * @example const coupon = useLookup(() => lookup.coupon(code.value)); // coupon.value.data
 */
export type LookupState<T> =
  | (LookupResult<T> & { pending: false })
  | { data: undefined; syncedAt: null; fetching: false; offline: false; error: LookupError | null; pending: true };

const PENDING: LookupState<never> = Object.freeze({
  data: undefined,
  syncedAt: null,
  fetching: false,
  offline: false,
  error: null,
  pending: true,
});

/**
 * A ref that follows the lookup `source()` returns, while the calling component (or effect scope) lives: `source`
 * is a getter, so the lookup is made again, and the old one released, whenever a reactive value it reads changes
 * (`code.value` below). Return null or undefined to look nothing up. In a component it subscribes once mounted:
 * server rendering shows the placeholder and looks nothing up. If the lookup fails for good (closed), the last data
 * stays and `error` says what happened.
 * @example const coupon = useLookup(() => (code.value ? lookup.coupon(code.value) : null));
 */
export function useLookup<T>(
  source: () => Observable<LookupResult<T>> | null | undefined,
): Readonly<ShallowRef<LookupState<T>>> {
  const state = shallowRef<LookupState<T>>(PENDING);
  followObservable(
    source,
    () => {
      state.value = PENDING;
    },
    (e) => {
      state.value =
        'value' in e
          ? { ...e.value, pending: false }
          : { ...state.value, fetching: false, error: toLookupError(e.error) };
    },
  );
  return shallowReadonly(state);
}

// One Observable followed into a ref while an effect scope lives (a component's setup, an effectScope()): in a
// component it subscribes once mounted (never during server rendering), elsewhere at once; it ends with the scope.
import { getCurrentInstance, onMounted, onScopeDispose, watch, type WatchSource } from 'vue';
import type { Observable } from 'rxjs';

/**
 * Subscribes to what `source` gives, again whenever the reactive values it reads change (the previous subscription
 * ended first); `start()` is called before each new subscription, `event` with every emission or the error.
 * @example followObservable(() => lookup.coupon(code.value), () => (state.value = PENDING), (e) => ...);
 */
export function followObservable<T>(
  source: WatchSource<Observable<T> | null | undefined>,
  start: () => void,
  event: (e: { value: T } | { error: unknown }) => void,
): void {
  let stop: (() => void) | null = null;
  let ended = false;
  const follow = () => {
    if (ended) return;
    stop = watch(
      source,
      (observable, _previous, onCleanup) => {
        start();
        if (!observable) return;
        const subscription = observable.subscribe({
          next: (value) => event({ value }),
          error: (error: unknown) => event({ error }),
        });
        onCleanup(() => subscription.unsubscribe());
      },
      { immediate: true },
    );
  };
  if (getCurrentInstance()) onMounted(follow);
  else follow();
  onScopeDispose(() => {
    ended = true;
    stop?.();
  });
}

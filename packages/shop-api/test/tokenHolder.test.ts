// The one token holder (packages/shop-api/src/api/tokenHolder.ts) on its own: one fetch at a time, the shared slot
// read before fetching and written after, only the refused token forgotten, failures passed through untouched.
import { describe, expect, it } from 'vitest';
import { createTokenHolder, type SharedTokenSlot } from '../src/api/tokenHolder';

/** A promise resolved from outside, to hold a fetch or a drop until the test releases it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A slot in memory, like the relay store's: drop forgets the token only when it is still the one stored. */
function memorySlot(initial: string | null = null) {
  const slot = { value: initial, reads: 0, held: null as ReturnType<typeof deferred<void>> | null };
  const api: SharedTokenSlot = {
    read: async () => (slot.reads++, slot.value),
    write: async (t) => void (slot.value = t),
    drop: async (t) => {
      await slot.held?.promise;
      if (slot.value === t) slot.value = null;
    },
  };
  return Object.assign(slot, { api });
}

describe('tokenHolder', () => {
  it('shares one fetch among concurrent callers and keeps its token in memory', async () => {
    const fetched = deferred<string>();
    let fetches = 0;
    const holder = createTokenHolder(() => (fetches++, fetched.promise));
    const both = Promise.all([holder.get(), holder.get()]);
    fetched.resolve('t1');
    expect(await both).toEqual(['t1', 't1']);
    expect(await holder.get()).toBe('t1');
    expect(fetches).toBe(1);
    expect(holder.current()).toBe('t1');
  });

  it('passes a failed fetch through as it was thrown, and asks again on the next call', async () => {
    const failure = { tokenFailure: { kind: 'timeout' } };
    let calls = 0;
    const holder = createTokenHolder(async () => {
      if (++calls === 1) throw failure;
      return 't2';
    });
    await expect(holder.get()).rejects.toBe(failure);
    expect(await holder.get()).toBe('t2');
  });

  it('forgets only the refused token: one already renewed stays', async () => {
    const tokens = ['t1', 't2', 't3'];
    const holder = createTokenHolder(async () => tokens.shift()!);
    expect(await holder.get()).toBe('t1');
    await holder.invalidate('t1');
    expect(await holder.get()).toBe('t2');
    await holder.invalidate('t1'); // a late refusal of the old token
    expect(await holder.get()).toBe('t2');
  });

  it('takes the shared token before fetching, and writes a fetched one to the slot', async () => {
    const slot = memorySlot('shared-1');
    let fetches = 0;
    const holder = createTokenHolder(async () => `fetched-${++fetches}`, slot.api);
    expect(await holder.get()).toBe('shared-1');
    expect(fetches).toBe(0);
    await holder.invalidate('shared-1');
    expect(slot.value).toBeNull();
    expect(await holder.get()).toBe('fetched-1');
    expect(slot.value).toBe('fetched-1');
  });

  it('keeps a token another instance stored meanwhile when it drops the refused one', async () => {
    const slot = memorySlot('t1');
    const holder = createTokenHolder(async () => 'never', slot.api);
    expect(await holder.get()).toBe('t1');
    slot.value = 't2'; // another instance renewed
    await holder.invalidate('t1');
    expect(await holder.get()).toBe('t2');
  });

  it('does not read the slot while a drop is under way, so it never reads the refused token back', async () => {
    const slot = memorySlot('t1');
    let fetches = 0;
    const holder = createTokenHolder(async () => `fetched-${++fetches}`, slot.api);
    expect(await holder.get()).toBe('t1');
    slot.held = deferred<void>();
    const readsBefore = slot.reads;
    const dropping = holder.invalidate('t1');
    const next = holder.get();
    await Promise.resolve();
    expect(slot.reads).toBe(readsBefore); // still waiting for the drop
    slot.held.resolve();
    await dropping;
    expect(await next).toBe('fetched-1');
  });

  it('reports a failed drop to the caller, and later gets read the slot as usual', async () => {
    const slot = memorySlot('t1');
    const api: SharedTokenSlot = { ...slot.api, drop: async () => Promise.reject(new Error('store down')) };
    const holder = createTokenHolder(async () => 'fetched', api);
    expect(await holder.get()).toBe('t1');
    await expect(holder.invalidate('t1')).rejects.toThrow('store down');
    expect(await holder.get()).toBe('t1'); // the slot still holds it: what the store says is what counts
  });
});

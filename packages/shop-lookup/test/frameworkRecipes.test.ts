// The docs' Svelte 5 and Angular recipes (docs/embedding.md), against a real engine in Node (`worker: false`, the
// mock API): Svelte's store contract through svelte/store itself, the recipe component compiled by Svelte's compiler,
// and the Angular recipe run with @angular/core's toSignal in an injection context of its own.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createEnvironmentInjector, Injector, runInInjectionContext, type Signal } from '@angular/core';
import { Observable } from 'rxjs';
import { compile } from 'svelte/compiler';
import { derived, get, type Readable } from 'svelte/store';
import ts from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MOCK_CODES, type MockShopApi } from '@shop-lookup/mock-server';
import type { LookupResult, ShopLookup } from '../src';
import { lookupFor, startMock, waitFor } from './utils';

const root = new URL('../../..', import.meta.url);

/** The code block of docs/embedding.md titled `title`, as a user would paste it. */
async function docsBlock(title: string): Promise<string> {
  const text = await readFile(new URL('docs/embedding.md', root), 'utf8');
  const block = new RegExp(`\`\`\`\\w+ title="${title.replace('.', '\\.')}"\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (!block) throw new Error(`docs/embedding.md has no block titled ${title}`);
  return block[1]!;
}

type Coupon = LookupResult<{ name?: string | null } | null>;

describe("the docs' Svelte 5 and Angular recipes", () => {
  let mock: MockShopApi;
  let lookup: ShopLookup;
  /** Subscriptions open on `lookup.coupon(...)` Observables. */
  let open = 0;
  const counted = (source: Observable<Coupon>) =>
    new Observable<Coupon>((subscriber) => {
      open++;
      const subscription = source.subscribe(subscriber);
      return () => {
        open--;
        subscription.unsubscribe();
      };
    });

  beforeEach(async () => {
    mock = await startMock();
    lookup = lookupFor(mock);
    expect((await lookup.sync()).ok).toBe(true);
    open = 0;
  });
  afterEach(async () => {
    await lookup.close();
    await mock.close();
  });

  it('Svelte: Coupon.svelte compiles without a warning, and a lookup is a store: followed, then released', async () => {
    const source = await docsBlock('Coupon.svelte');
    const compiled = compile(source, { filename: 'Coupon.svelte', generate: 'client' });
    expect(compiled.warnings.map((w) => w.message)).toEqual([]);
    expect(compiled.js.code).toMatch(/store_get/); // `$coupon`: Svelte subscribes to the lookup as a store

    // the store contract, as svelte/store reads it: subscribe, and the unsubscriber it returns
    // (svelte/store's types want a function as the unsubscriber; at run time it takes RxJS's Subscription too)
    const coupon = counted(lookup.coupon(MOCK_CODES.welcomeCoupon)) as unknown as Readable<Coupon | undefined>;
    const name = derived(coupon, ($c) => $c?.data?.name ?? null);
    const seen: (string | null)[] = [];
    const stop = name.subscribe((n) => seen.push(n));
    expect(open).toBe(1);
    await waitFor(() => expect(seen.at(-1)).toBe(mock.data.coupons.find((c) => c.coupon_code === 'WELCOME10')!.name));
    stop();
    expect(open).toBe(0);
    expect(get(name)).toBeNull(); // get(): subscribes and unsubscribes at once, before the first answer
    expect(open).toBe(0);
  });

  it('Angular: couponSignal.ts follows the lookup with toSignal and unsubscribes when its context is destroyed', async () => {
    // the recipe as a module of its own (TypeScript to JavaScript, as an Angular build would), importing the real
    // @angular/core from this repo's node_modules
    const dir = join(new URL('node_modules/.cache/shop-lookup-recipes/', root).pathname);
    await mkdir(dir, { recursive: true });
    const js = ts.transpileModule(await docsBlock('couponSignal.ts'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const file = join(dir, `couponSignal-${process.pid}.mjs`);
    await writeFile(file, js);
    const { couponSignal } = (await import(pathToFileURL(file).href)) as {
      couponSignal(lookup: ShopLookup, code: string): Signal<Coupon | undefined>;
    };

    const countedLookup = { coupon: (code: string) => counted(lookup.coupon(code)) } as ShopLookup;
    const injector = createEnvironmentInjector([], Injector.NULL as never);
    const coupon = runInInjectionContext(injector, () => couponSignal(countedLookup, MOCK_CODES.welcomeCoupon));
    expect(open).toBe(1);
    await waitFor(() => expect(coupon()?.data).toMatchObject({ coupon_code: 'WELCOME10' }));
    injector.destroy();
    expect(open).toBe(0);
  });
});

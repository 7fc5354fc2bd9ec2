// @vitest-environment jsdom
// Concurrent rendering with React's real scheduler (no act): a transition render yields after a slow component,
// the lookup emits in that gap, and every commit still shows one value in all components (no tearing).
import { createElement, startTransition } from 'react';
import { createRoot } from 'react-dom/client';
import { Subject } from 'rxjs';
import { expect, it } from 'vitest';
import { useLookup } from '../../src/react';
import type { LookupResult } from '../../src/types';
import { found } from './fakeLookups';

it('never commits two values at once when the lookup emits while a transition render is paused (no tearing)', async () => {
  const subject = new Subject<LookupResult<{ name: string }>>();
  const log: string[] = [];
  let emitAfterSlice: string | null = null;

  function Reader({ id }: { id: number; tick: number }) {
    const r = useLookup(() => subject, []);
    const shown = r.pending ? '-' : r.data.name;
    log.push(`r${id}:${shown}`);
    if (id === 1 && emitAfterSlice) {
      const next = emitAfterSlice;
      emitAfterSlice = null;
      // keep the CPU past React's 5 ms slice so that it yields after this component; the microtask then runs
      // in the gap, before React resumes (the log below proves the order; no assertion depends on the time)
      for (const until = performance.now() + 8; performance.now() < until; );
      queueMicrotask(() => {
        log.push('emit');
        subject.next(found({ name: next }));
      });
    }
    return createElement('span', null, shown);
  }
  function Tree({ tick }: { tick: number }) {
    return createElement(
      'div',
      null,
      [1, 2, 3].map((id) => createElement(Reader, { key: id, id, tick })),
    );
  }
  // what each commit left in the DOM: React commits synchronously, the observer reads it right after
  const commits: string[] = [];
  let committed: () => void = () => {};
  const observer = new MutationObserver(() => {
    commits.push(container.textContent ?? '');
    log.push(`commit:${container.textContent}`);
    committed();
  });
  const commitOf = (text: string) =>
    new Promise<void>((resolve) => {
      committed = () => void (container.textContent === text && resolve());
    });

  const container = document.body.appendChild(document.createElement('div'));
  observer.observe(container, { childList: true, subtree: true, characterData: true });
  const root = createRoot(container);
  try {
    const mounted = commitOf('---');
    root.render(createElement(Tree, { tick: 0 }));
    await mounted;
    // the subscriptions are made in passive effects, after the commit
    await expect.poll(() => subject.observed).toBe(true);
    const first = commitOf('aaa');
    subject.next(found({ name: 'a' }));
    await first;

    log.length = 0;
    emitAfterSlice = 'b';
    const second = commitOf('bbb');
    startTransition(() => root.render(createElement(Tree, { tick: 1 })));
    await second;

    // the emission came after reader 1 rendered 'a' in the transition and before anything was committed
    const at = log.indexOf('emit');
    expect(log.slice(0, at)).toEqual(['r1:a']);
    expect(commits.filter((t) => !/^(-{3}|a{3}|b{3})$/.test(t))).toEqual([]);
    expect(container.textContent).toBe('bbb');
  } finally {
    root.unmount();
    observer.disconnect();
    container.remove();
  }
});

// The hub's memory budget in records (relay/hub/recordBudget.ts), with stand-in mirrors: the least recently used let
// their records go beyond the budget, a shop larger than the whole budget is not held, and a shop closed and opened
// again is counted by its new mirror (the old one reporting late takes nothing off).
import { describe, expect, it } from 'vitest';
import type { FeedMirror, MirrorHolding } from '../src/feed/feedMirror';
import { createRecordBudget } from '../src/hub/recordBudget';

/** A mirror that holds `size` records once asked to, and reports to the budget as the real one does. */
function standIn(holding: MirrorHolding, size: number) {
  let held = 0;
  const mirror = {
    hold: async () => {
      held = size;
      holding.held!(size, mirror);
    },
    release: () => {
      if (held === 0) return;
      held = 0;
      holding.held!(0, mirror);
    },
    held: () => held,
  } as unknown as FeedMirror & { held(): number };
  return mirror;
}

describe('createRecordBudget', () => {
  it('holds the records of the shops asked for while they fit, the least recently used letting theirs go', async () => {
    const budget = createRecordBudget(250);
    const shops = ['a', 'b', 'c'].map((id) => {
      const holding = budget.forShop(id);
      return { id, holding, mirror: standIn(holding, 100) };
    });
    for (const { holding, mirror } of shops.slice(0, 2)) holding.asked!(mirror);
    expect(budget.held()).toEqual(['a', 'b']);
    shops[0]!.holding.used!(shops[0]!.mirror); // a used since: b is the least recently used
    shops[2]!.holding.asked!(shops[2]!.mirror);
    expect(budget.held()).toEqual(['a', 'c']);
    expect(shops[1]!.mirror.held()).toBe(0);
    expect(budget.total()).toBe(200);
  });

  it('does not hold a shop larger than the whole budget, nor load it again when asked again', () => {
    const budget = createRecordBudget(50);
    const holding = budget.forShop('big');
    let loads = 0;
    const mirror = standIn(holding, 80);
    const hold = mirror.hold;
    mirror.hold = () => {
      loads++;
      return hold();
    };
    holding.asked!(mirror);
    holding.asked!(mirror);
    expect(loads).toBe(1);
    expect(budget.total()).toBe(0);
    expect(mirror.held()).toBe(0);
  });

  it('counts a shop opened again by its new mirror, whatever its old one reports after', () => {
    const budget = createRecordBudget(1_000);
    const holding = budget.forShop('a');
    const old = standIn(holding, 100);
    const fresh = standIn(holding, 120);
    holding.asked!(old);
    holding.asked!(fresh); // opened again before the old one was closed
    old.release(); // the old one closing
    expect(budget.total()).toBe(120);
    expect(budget.held()).toEqual(['a']);
  });
});

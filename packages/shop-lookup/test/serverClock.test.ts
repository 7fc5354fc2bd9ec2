// The till's clock against the API's Date headers (packages/shop-api/src/api/serverClock.ts), the offset kept beside
// the data (worker/store/clockOffset.ts), and the age of data stamped by it (worker/store/dataAge.ts).
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { createServerClock } from '@shop-lookup/shop-api';
import { readClockOffset, writeClockOffset } from '../worker/store/clockOffset';
import { openStore } from '../worker/store/store';
import { dataAge, olderThan } from '../worker/store/dataAge';

const T = Date.UTC(2026, 5, 1, 3, 0, 0);
const header = (ms: number) => new Date(ms).toUTCString();

describe('createServerClock', () => {
  it('starts from a seeded offset (kept from before a restart) until an answer tells the time, and tells it', () => {
    const local = T - 2 * 86_400_000;
    const clock = createServerClock(() => local);
    const told: number[] = [];
    clock.subscribe((offset) => told.push(offset));
    clock.seed(-2 * 86_400_000);
    expect([clock.now(), told]).toEqual([T, [-2 * 86_400_000]]);
    clock.sample(header(T + 60_000)); // an answer: its offset replaces the seed
    expect(clock.offsetMs()).toBe(-2 * 86_400_000 - 60_500);
    clock.seed(0); // a seed after an answer is ignored
    expect(clock.offsetMs()).toBe(-2 * 86_400_000 - 60_500);
  });

  it("is the till's clock until an answer tells the time, then the server's", () => {
    let local = T - 2 * 86_400_000; // two days behind
    const clock = createServerClock(() => local);
    expect([clock.now(), clock.offsetMs()]).toEqual([local, null]);
    clock.sample(header(T));
    expect(clock.offsetMs()).toBe(-2 * 86_400_000 - 500);
    local += 1000;
    expect(clock.now()).toBe(T + 1500);
  });

  it("ignores offsets within the header's resolution, answers without a readable Date, and one odd clock", () => {
    const clock = createServerClock(() => T);
    clock.sample(header(T - 2000));
    expect(clock.now()).toBe(T); // 1.5 s: the way there and whole seconds, not a wrong clock
    clock.sample(null);
    clock.sample('yesterday');
    for (const at of [T - 3_600_000, T - 3_600_000, T - 3_600_000]) clock.sample(header(at));
    clock.sample(header(T + 86_400_000)); // a gateway whose clock is a day off
    expect(clock.now()).toBe(T - 3_600_000 + 500); // the median: the three that agree
  });

  it('tells its listeners the first estimate and each move of a second or more, not the jitter of whole-second headers', () => {
    let local = T;
    const clock = createServerClock(() => local);
    const told: number[] = [];
    clock.subscribe((offset) => told.push(offset));
    // answers 40 ms apart from a server whose clock agrees: each offset moves with where in its second it answered
    for (let i = 0; i < 60; i++, local += 40) clock.sample(header(local - (local % 1000)));
    expect(told).toHaveLength(1);
    expect(Math.abs(clock.offsetMs()! - told[0]!)).toBeLessThan(1000);
    // the till's clock jumps 10 s ahead: heard once the median moves
    local += 10_000;
    for (let i = 0; i < 5; i++, local += 40) clock.sample(header(local - 10_000 - ((local - 10_000) % 1000)));
    expect(told).toHaveLength(2);
    expect(told[1]! - told[0]!).toBeGreaterThan(9_000);
  });
});

describe('dataAge', () => {
  it('counts data stamped more than a minute in the future as old, a few seconds ahead as new', () => {
    expect(dataAge(T - 5000, T)).toBe(5000);
    expect(dataAge(T + 5000, T)).toBe(0);
    expect(dataAge(T + 47 * 3_600_000, T)).toBe(Number.POSITIVE_INFINITY);
    expect(dataAge(null, T)).toBeNull();
    expect([
      olderThan(T + 47 * 3_600_000, T, 86_400_000),
      olderThan(T - 1000, T, 86_400_000),
      olderThan(null, T, 1),
    ]).toEqual([true, false, true]);
  });
});

describe('clockOffset (kept beside the data)', () => {
  it("reads back the offset written, unless applying it now would put the API's time before its measurement", async () => {
    const db = openStore('clock-offset', { indexedDB: new IDBFactory(), IDBKeyRange });
    try {
      expect(await readClockOffset(db, T)).toBeNull();
      await writeClockOffset(db, -2 * 86_400_000, T); // two days behind, measured at T
      expect(await readClockOffset(db, T - 2 * 86_400_000 + 3_600_000)).toBe(-2 * 86_400_000); // an hour later, still behind
      await writeClockOffset(db, 2 * 86_400_000, T); // two days ahead, measured at T
      expect(await readClockOffset(db, T + 2 * 86_400_000 + 3_600_000)).toBe(2 * 86_400_000);
      // the till's clock was put right since: the API's time would be two days before the measurement
      expect(await readClockOffset(db, T + 3_600_000)).toBeNull();
    } finally {
      db.close();
    }
  });
});

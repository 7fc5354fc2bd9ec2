// Feed answers made once and sent to every till that asks the same: the tills of a shop read the same snapshot
// chunks (same positions, same limit) and, woken by one change, ask the same changes since the same version. Each
// answer body is made (the change log read, the records serialised) once per version of this instance's copy, and
// shared by the requests under way for it; the cache empties whenever the copy changes, and is bounded in bytes.
import type { ProxyAnswer } from '../door/proxyAnswers';
import type { FeedMirror } from './feedMirror';

/** At most this many bytes of answers are kept per instance (beyond, answers are made anew each time). */
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_ENTRIES = 1_024;

/** An answer, and whether it may be sent again to the next request with the same key (not a passing failure). */
interface Made {
  answer: ProxyAnswer;
  keep: boolean;
}

export interface FeedAnswerCache {
  /** The answer for `key`, made by `make` unless made (or being made) already for the copy as it is now. */
  get(key: string, make: () => Promise<Made>): Promise<ProxyAnswer>;
}

const caches = new WeakMap<FeedMirror, FeedAnswerCache>();

/**
 * The cache of this mirror's answers (one per mirror).
 * @example const body = await feedAnswerCache(mirror).get(key, make);
 */
export function feedAnswerCache(mirror: FeedMirror): FeedAnswerCache {
  let cache = caches.get(mirror);
  if (cache) return cache;
  const entries = new Map<string, Promise<Made>>();
  let bytes = 0;
  mirror.onChange(() => {
    entries.clear();
    bytes = 0;
  });
  cache = {
    async get(key, make) {
      const known = entries.get(key);
      if (known) return (await known).answer;
      if (entries.size >= MAX_ENTRIES) return (await make()).answer;
      const made = make();
      entries.set(key, made);
      made.then(
        ({ answer, keep }) => {
          if (entries.get(key) !== made) return;
          if (!keep || bytes + answer.body.length > MAX_BYTES) entries.delete(key);
          else bytes += answer.body.length;
        },
        () => entries.get(key) === made && entries.delete(key),
      );
      return (await made).answer;
    },
  };
  caches.set(mirror, cache);
  return cache;
}

// IndexedDB failures in words: a full disk, a connection the browser closed, another tab's newer schema, the
// database deleted under the engine. Dexie
// wraps the platform's DOMExceptions; the original name may sit on `inner`.
import { toLookupError } from '../../src/protocol';
import type { LookupError, LookupErrorCode } from '../../src/protocol';

const ADVICE: Record<string, LookupError> = {
  QuotaExceededError: {
    code: 'quota_exceeded',
    message:
      "This device's storage for the site is full, so new data could not be saved. Lookups keep answering from what is stored; free some space (or clear other site data) and the next sync saves the rest.",
  },
  DatabaseClosedError: {
    code: 'storage_closed',
    message: 'The browser closed the local database connection; it is reopened, and lookups keep answering meanwhile.',
  },
  InvalidStateError: {
    code: 'storage_closed',
    message:
      'The local database connection was no longer usable; it is reopened, and lookups keep answering meanwhile.',
  },
  VersionError: {
    code: 'storage_upgraded',
    message: 'Another tab opened a newer version of the local database. Reload this tab to use the newer shop-lookup.',
  },
  // (not a DOMException: what a versionchange without a new version means, see engine/databaseClaim.ts)
  DatabaseDeletedError: {
    code: 'storage_evicted',
    message:
      "The browser deleted this site's local database (to free space, or the site's data was cleared). Lookups have nothing stored until the next sync builds it again; persistent storage (`persist`) makes this rarer.",
  },
  MissingAPIError: {
    code: 'storage_unavailable',
    message: 'IndexedDB is not available here (private mode, or an old browser): nothing can be kept for offline use.',
  },
};

type Wrapped = { name?: string; inner?: unknown; failures?: unknown };

/**
 * The names of an error and of what it wraps: Dexie's `inner`, and a BulkError's `failures` (WebKit refuses each
 * write of a full storage on its own request, where Chromium and Firefox abort the transaction).
 */
function namesOf(error: unknown): string[] {
  const names: string[] = [];
  const queue = [error as Wrapped | undefined];
  for (let i = 0; i < queue.length && i < 8; i++) {
    const e = queue[i];
    if (!e || typeof e !== 'object') continue;
    if (typeof e.name === 'string') names.push(e.name);
    queue.push(e.inner as Wrapped | undefined);
    if (Array.isArray(e.failures)) queue.push(...(e.failures.slice(0, 2) as Wrapped[]));
  }
  return names;
}

/** A storage error of ours in the chain (refuseNewerSchema's `storage_upgraded`), which says it best. */
function ownError(error: unknown): LookupError | null {
  for (
    let e = error as { code?: unknown; message?: unknown; inner?: unknown } | undefined, i = 0;
    e && i < 4;
    e = e.inner as typeof e, i++
  ) {
    if (typeof e.code === 'string' && e.code.startsWith('storage_') && typeof e.message === 'string')
      return { code: e.code as LookupErrorCode, message: e.message };
  }
  return null;
}

/** The storage failure as a readable LookupError, or null when `error` is not a storage failure. */
export function storageError(error: unknown): LookupError | null {
  const own = ownError(error);
  if (own) return own;
  const names = namesOf(error);
  for (const name of names) {
    const known = ADVICE[name];
    if (known) return { ...known };
  }
  const dexie = names.find((n) => /^(Abort|Unknown|OpenFailed|DataError|ConstraintError|Database)/.test(n));
  if (!dexie) return null;
  const detail = (error as Error)?.message ?? dexie;
  return {
    code: 'storage_error',
    message: `The local database failed (${dexie}: ${detail}). Lookups keep answering from what is stored.`,
  };
}

/** Any error of the engine as plain data, storage failures in words. */
export function engineError(error: unknown): LookupError {
  return storageError(error) ?? toLookupError(error);
}

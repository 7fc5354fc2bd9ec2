// The key of a journal entry: unique on this till and on every other, made once when the verdict is given, so
// writing the entry again (a retry after storage refused part of a batch) finds it stored instead of adding it twice.

/**
 * 128 random bits from the platform's random source, as 32 hex digits (`crypto.getRandomValues`, which insecure
 * contexts such as a till on plain http have too, unlike `crypto.randomUUID`).
 * @example newEntryKey() // '3b241101e2bb42558caf4136c566a962'
 */
export const newEntryKey = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => (b + 256).toString(16).slice(1)).join('');

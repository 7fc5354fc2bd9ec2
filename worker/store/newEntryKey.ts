// The key of a journal entry: unique on this till and on every other, made once when the verdict is given, so
// writing the entry again (a retry after storage refused part of a batch) finds it stored instead of adding it twice.

/**
 * A version 4 UUID from the platform's random source (`crypto.getRandomValues`, which insecure contexts such as a
 * till on plain http have too, unlike `crypto.randomUUID`).
 * @example newEntryKey() // '3b241101-e2bb-4255-8caf-4136c566a962'
 */
export function newEntryKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

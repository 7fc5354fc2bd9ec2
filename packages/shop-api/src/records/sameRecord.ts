// Deep equality of JSON-like records, to skip writing what did not change: an unchanged record is not rewritten,
// so live queries do not wake up for nothing and a re-sync of an unchanged shop writes nothing.

/** @example sameRecord({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }) // true */
export function sameRecord(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameRecord(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = Object.keys(ao);
  if (keys.length !== Object.keys(bo).length) return false;
  for (const k of keys) {
    if (!Object.hasOwn(bo, k) || !sameRecord(ao[k], bo[k])) return false;
  }
  return true;
}

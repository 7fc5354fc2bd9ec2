// Where in a message a schema found a problem, as a reader writes it: `uses[3].at`, `[2].coupon_code`.

/**
 * `path` (a zod issue's) in words, after `base` when given.
 * @example pathText(['uses', 3, 'at']) // 'uses[3].at'; pathText(['name'], 'coupons[4]') // 'coupons[4].name'
 */
export function pathText(path: readonly PropertyKey[], base = ''): string {
  return path.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc === '' ? String(p) : `${acc}.${String(p)}`),
    base,
  );
}

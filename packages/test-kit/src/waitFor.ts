// `vi.waitFor` with the tests' long timeout.
import { vi } from 'vitest';

/** `vi.waitFor` with a long timeout (its default is 1 s; the test command shares 2 cores between two lanes). */
export function waitFor<T>(
  check: () => T | Promise<T>,
  options: { timeout?: number; interval?: number } = {},
): Promise<T> {
  return vi.waitFor(check, { timeout: 15_000, ...options });
}

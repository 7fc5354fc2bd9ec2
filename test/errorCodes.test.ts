// The error and verdict codes as string-literal unions: docs/errors.md lists exactly the members of LookupErrorCode
// and CouponRejection, and a `switch` over them is checked by the compiler (`tsc -b` compiles this file:
// each @ts-expect-error below fails the compile if its line stops being an error).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RELAY_ERROR_CODES } from '../packages/shop-api/src';
import type { CouponRejection, LookupError, LookupErrorCode } from '../packages/shop-lookup/src';

const read = (path: string) => readFileSync(join(process.cwd(), path), 'utf8');

/** The members of the string-literal union `name` as written in `path`. */
function unionMembers(path: string, name: string): string[] {
  const body = new RegExp(`export type ${name} =([^;]*);`).exec(read(path))?.[1] ?? '';
  return [...body.matchAll(/\| '([a-z_]+)'/g)].map((m) => m[1]!).sort();
}

/** A host's switch over an error's code, as docs/errors.md shows it. */
function errorText(error: LookupError): string {
  switch (error.code) {
    case 'network_error':
      return 'offline';
    // @ts-expect-error a code that is not a LookupErrorCode is a type error in a case
    case 'network_eror':
      return 'never';
    default:
      return error.message;
  }
}

/** A host's exhaustive switch over a verdict's reason. */
function reasonGroup(reason: CouponRejection): 'unknown' | 'later' | 'ask' {
  switch (reason) {
    case 'not_found':
    case 'unknown_offline':
      return 'unknown';
    case 'not_started':
    case 'expired':
    case 'inactive':
      return 'later';
    case 'unchecked':
    case 'below_minimum':
    case 'app_only':
    case 'not_combinable':
    case 'stale':
    case 'unreadable':
    case 'used_on_this_till':
    case 'used_on_another_till':
      return 'ask';
    // @ts-expect-error a reason that is not a CouponRejection is a type error in a case
    case 'used_elsewhere':
      return 'ask';
    default: {
      const unhandled: never = reason;
      return unhandled;
    }
  }
}

describe('error codes', () => {
  it("docs/errors.md's table of the engine lists every LookupErrorCode, and no other code", () => {
    const engine = /## The engine \(a till\)([\s\S]*?)\n## /.exec(read('docs/errors.md'))?.[1] ?? '';
    const documented = [...engine.matchAll(/^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \|/gm)]
      .flatMap((m) => m[1]!.split(', ').map((c) => c.slice(1, -1)))
      .sort();
    expect(documented).toEqual(unionMembers('packages/shop-api/src/types.ts', 'LookupErrorCode'));
  });

  it("docs/errors.md's table of the relay lists every code of the relay's error answers (RELAY_ERROR_CODES), and no other", () => {
    const relay = /## The relay and the credential proxy([\s\S]*?)(?:\n## |$)/.exec(read('docs/errors.md'))?.[1] ?? '';
    const documented = [...relay.matchAll(/^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \|/gm)]
      .flatMap((m) => m[1]!.split(', ').map((c) => c.slice(1, -1)))
      .filter((code) => code !== 'bad_options') // thrown by the factories, never answered
      .sort();
    expect(documented).toEqual([...RELAY_ERROR_CODES].sort());
  });

  it('docs/errors.md names every verdict reason of CouponRejection, and no other', () => {
    const sentence = /its `reason`s \(([^)]*)\)/.exec(read('docs/errors.md'))?.[1] ?? '';
    const documented = [...sentence.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).sort();
    expect(documented).toEqual(unionMembers('packages/shop-lookup/src/types.ts', 'CouponRejection'));
  });

  it('a switch over the codes answers as written', () => {
    const code: LookupErrorCode = 'network_error';
    expect(errorText({ code, message: 'No answer' })).toBe('offline');
    expect(errorText({ code: 'timeout', message: 'No answer within 10 s' })).toBe('No answer within 10 s');
    expect(reasonGroup('used_on_another_till')).toBe('ask');
  });
});

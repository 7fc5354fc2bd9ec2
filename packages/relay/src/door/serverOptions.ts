// The options the door takes (the proxy's options, and the part of the relay's they share), checked with zod when
// the server is created:
// a wrong option throws there (`bad_options`), naming the option and what is expected, instead of failing later,
// asynchronously, somewhere inside. Messages never repeat a value (it could be a key, a secret or a password).
import type { IncomingMessage } from 'node:http';
import * as z from 'zod';
import { ShopLookupError } from '@shop-lookup/shop-api';
import type { Authorize, ClientId } from './types';

const fn = <T>() => z.custom<T>((value) => typeof value === 'function');
const wholeNumber = (min: number) => z.number().int().min(min);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** The options the proxy and the relay have in common, with what each must be. */
export const serverOptionShape = {
  key: z.string().min(1),
  secret: z.string().min(1),
  target: z.optional(z.string().refine(isHttpUrl)),
  basePath: z.optional(z.string().refine((p) => p === '' || p.startsWith('/'))),
  timeoutMs: z.optional(wholeNumber(1)),
  maxAnswerBytes: z.optional(
    z.strictObject({ list: z.optional(wholeNumber(1024)), item: z.optional(wholeNumber(1024)) }),
  ),
  rateLimits: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({ list: z.optional(z.number().positive()), other: z.optional(z.number().positive()) }),
    ]),
  ),
  maxUrlLength: z.optional(wholeNumber(1)),
  fetch: z.optional(fn<typeof fetch>()),
  authorize: z.optional(fn<Authorize>()),
  public: z.optional(z.boolean()),
  clientId: z.optional(fn<(req: IncomingMessage) => ClientId>()),
  clientLimits: z.optional(
    z.union([
      z.literal(false),
      z.strictObject({
        concurrent: z.optional(wholeNumber(1)),
        queued: z.optional(wholeNumber(0)),
        perSecond: z.optional(z.number().positive()),
        burst: z.optional(wholeNumber(1)),
        maxWaitMs: z.optional(wholeNumber(0)),
        upstreamQueued: z.optional(wholeNumber(1)),
        anonymousWaitMs: z.optional(wholeNumber(1)),
        refusedPerMinute: z.optional(z.number().positive()),
      }),
    ]),
  ),
};

/** What each option must be, in words (by option, or option.field). */
const SERVER_EXPECTED: Record<string, string> = {
  key: "the shop's API key, a non-empty string (server side only)",
  secret: "the shop's API secret, a non-empty string (server side only)",
  target: "an http(s) URL of the shop API's origin, such as 'https://api.imweb.me'",
  basePath: "a path starting with '/', such as '/shop-api' (or '')",
  timeoutMs: 'a whole number of milliseconds, at least 1',
  maxAnswerBytes: '{ list?, item? }: the most bytes of one upstream answer, decoded',
  'maxAnswerBytes.list': 'a whole number of bytes, at least 1024',
  'maxAnswerBytes.item': 'a whole number of bytes, at least 1024',
  rateLimits: 'false, or { list?: number > 0, other?: number > 0 } (requests per second)',
  maxUrlLength: 'a whole number of characters, at least 1',
  fetch: 'a fetch function',
  authorize: 'a function (req, route) => boolean | { status, message } (may be async)',
  public: 'true or false',
  clientId: 'a function (req) => string or { id, identified, network? }',
  clientLimits:
    'false, or { concurrent, queued, perSecond, burst, maxWaitMs, upstreamQueued, anonymousWaitMs, refusedPerMinute }',
  'clientLimits.concurrent': 'a whole number, at least 1',
  'clientLimits.queued': 'a whole number, at least 0',
  'clientLimits.perSecond': 'a number of requests per second > 0',
  'clientLimits.burst': 'a whole number, at least 1',
  'clientLimits.maxWaitMs': 'a whole number of milliseconds, at least 0',
  'clientLimits.upstreamQueued': 'a whole number, at least 1',
  'clientLimits.anonymousWaitMs': 'a whole number of milliseconds, at least 1',
  'clientLimits.refusedPerMinute': 'a number of refused requests per minute > 0',
};

type Issue = z.core.$ZodIssue;

/** The issues to report: a union's (false | { … }) are those of the branch the value was meant for. */
function flatten(issues: readonly Issue[], base: PropertyKey[] = []): { path: PropertyKey[]; issue: Issue }[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union') {
      const meant = issue.errors.find(
        (branch) =>
          !branch.some((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value')),
      );
      if (meant) return flatten(meant, path);
    }
    return [{ path, issue }];
  });
}

/**
 * The options, checked; throws `bad_options` naming each wrong option and what it must be.
 * @example const options = checkOptions(z.strictObject(serverOptionShape), raw, 'createShopApiProxy');
 */
export function checkOptions<T>(
  schema: z.ZodType<T>,
  options: unknown,
  component: string,
  expected: Record<string, string> = SERVER_EXPECTED,
): T {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new ShopLookupError(
      'bad_options',
      `${component}: its options must be an object, such as { key, secret, authorize }.`,
    );
  }
  const parsed = schema.safeParse(options);
  if (parsed.success) return options as T; // as given: functions and clients stay the host's own objects
  const problems = flatten(parsed.error.issues).map(({ path, issue }) => {
    const name = path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      const where = name === '' ? '' : ` in "${name}"`;
      return `unknown option${issue.keys.length > 1 ? 's' : ''}${where}: ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    }
    // named by the longest part of the path that has words of its own ('products', not 'products.0')
    for (let n = path.length; n > 0; n--) {
      const part = path.slice(0, n).map(String).join('.');
      if (expected[part] !== undefined) return `option "${part}" must be ${expected[part]}`;
    }
    return `option "${name}": ${issue.message}`;
  });
  throw new ShopLookupError('bad_options', `${component}: ${[...new Set(problems)].join('; ')}.`);
}

export { SERVER_EXPECTED };

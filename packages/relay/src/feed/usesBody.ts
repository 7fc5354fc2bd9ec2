// The body of POST relay/v1/uses, read strictly: `{ "device": "…", "uses": [ { "entry", "code", "couponCode",
// "orderId", "at", "override" } ], "claim"?: true, "releases"?: [ { "entry", "code", "use" } ] }`, at most 64 kB and
// 500 uses and releases; a wrong field is named (`uses[3].at`, `releases[0].use`), never guessed.
import type { IncomingMessage } from 'node:http';
import { described, readJsonBody } from '../door/jsonBody';
import type { ReleaseInput, UseInput } from '../store/useRecords';

const MAX_BYTES = 64 * 1024;
const MAX_USES_AT_ONCE = 500;
/** Ids and codes: 1 to 200 characters, no control characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: keeping control characters out is this pattern's job
const TEXT = /^[^\u0000-\u001f\u007f]{1,200}$/;

const isText = (v: unknown): v is string => typeof v === 'string' && TEXT.test(v);

/** One use, or what is wrong with it (naming the field). */
function readUse(value: unknown, at: string): UseInput | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${at} must be an object, got ${described(value)}`;
  const v = value as Record<string, unknown>;
  const text = (name: string, nullable: boolean): string | null | undefined => {
    const field = v[name];
    if (nullable && (field === null || field === undefined)) return null;
    return isText(field) ? field : undefined;
  };
  const entry = text('entry', false);
  if (entry === undefined)
    return `${at}.entry must be the journal entry's key (1 to 200 characters), got ${described(v.entry)}`;
  const code = text('code', false);
  if (code === undefined)
    return `${at}.code must be the issued coupon's code (1 to 200 characters), got ${described(v.code)}`;
  const couponCode = text('couponCode', true);
  if (couponCode === undefined)
    return `${at}.couponCode must be the coupon's code or null, got ${described(v.couponCode)}`;
  const orderId = text('orderId', true);
  if (orderId === undefined) return `${at}.orderId must be the order's id or null, got ${described(v.orderId)}`;
  if (!Number.isSafeInteger(v.at) || (v.at as number) < 0)
    return `${at}.at must be epoch milliseconds (a whole number), got ${described(v.at)}`;
  if (typeof v.override !== 'boolean') return `${at}.override must be true or false, got ${described(v.override)}`;
  return { entry: entry!, code: code!, couponCode, orderId, at: v.at as number, override: v.override };
}

/** One release, or what is wrong with it (naming the field). */
function readRelease(value: unknown, at: string): ReleaseInput | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `${at} must be an object, got ${described(value)}`;
  const v = value as Record<string, unknown>;
  if (!isText(v.entry))
    return `${at}.entry must be the release's journal entry key (1 to 200 characters), got ${described(v.entry)}`;
  if (!isText(v.code))
    return `${at}.code must be the issued coupon's code (1 to 200 characters), got ${described(v.code)}`;
  if (!isText(v.use))
    return `${at}.use must be the journal entry key of the use released (1 to 200 characters), got ${described(v.use)}`;
  return { entry: v.entry, code: v.code, use: v.use };
}

/** A POST's body, read. */
export interface UsesBody {
  device: string;
  uses: UseInput[];
  /** The uses are claims (an online verdict waits for the answer). */
  claim: boolean;
  releases: ReleaseInput[];
}

/**
 * The device, its uses and releases, or what is wrong with the body.
 * @example const body = await readUsesBody(req); if (typeof body === 'string') answer400(body);
 */
export async function readUsesBody(req: IncomingMessage): Promise<UsesBody | string> {
  const parsed = await readJsonBody(
    req,
    MAX_BYTES,
    `the body must be at most ${MAX_BYTES} bytes; send the uses in several requests`,
    'the body must be JSON: { "device": "…", "uses": [ … ] }',
  );
  if (!parsed.ok) return parsed.why;
  const body = parsed.value;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'the body must be { "device": "…", "uses": [ … ] }';
  const { device, uses, claim, releases } = body as {
    device?: unknown;
    uses?: unknown;
    claim?: unknown;
    releases?: unknown;
  };
  if (!isText(device)) return `device must be the till's device id (1 to 200 characters), got ${described(device)}`;
  if (!Array.isArray(uses)) return `uses must be an array of uses, got ${described(uses)}`;
  if (claim !== undefined && typeof claim !== 'boolean') return `claim must be true or false, got ${described(claim)}`;
  if (releases !== undefined && !Array.isArray(releases))
    return `releases must be an array of releases, got ${described(releases)}`;
  const released = (releases as unknown[] | undefined) ?? [];
  if (uses.length + released.length > MAX_USES_AT_ONCE)
    return `uses must hold at most ${MAX_USES_AT_ONCE} uses at once, got ${uses.length + released.length} with the releases; send the rest in another request`;
  const read: UseInput[] = [];
  for (const [i, use] of uses.entries()) {
    const one = readUse(use, `uses[${i}]`);
    if (typeof one === 'string') return one;
    read.push(one);
  }
  const readReleases: ReleaseInput[] = [];
  for (const [i, release] of released.entries()) {
    const one = readRelease(release, `releases[${i}]`);
    if (typeof one === 'string') return one;
    readReleases.push(one);
  }
  return { device, uses: read, claim: claim === true, releases: readReleases };
}

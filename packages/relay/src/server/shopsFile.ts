// SHOPS_FILE, the relay command's hub mode: one JSON file of every shop the process serves, `{ "<shopId>": { "key",
// "secret", "target"?, "tills"?: { "<till>": "<static token>" } } }`, checked with zod; a problem is one line naming
// SHOPS_FILE and the shop (never a value). Read at start and again on SIGHUP or when the file changes.
import { z } from 'zod';
import { SHOP_ID } from '../hub/shopPath';
import { TILL_NAME, type TillTokenEntry } from './tillTokens';

/** One shop of SHOPS_FILE, checked. */
export interface ShopsFileEntry {
  key: string;
  secret: string;
  /** Its own upstream origin; default SHOP_API_TARGET. */
  target: string | undefined;
  /** Its static till tokens (they open this shop only). */
  tills: TillTokenEntry[];
}

const shopSchema = z
  .object({
    key: z.string().trim().min(1),
    secret: z.string().trim().min(1),
    target: z
      .string()
      .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol))
      .transform((v) => v.replace(/\/+$/, ''))
      .optional(),
    tills: z.record(z.string().regex(TILL_NAME), z.string().min(16)).optional(),
  })
  .strict();

const WHAT =
  'a JSON object { "<shopId>": { "key": "...", "secret": "...", "target"?: "https://...", "tills"?: { "<till>": "<token of 16+ characters>" } } }';

/**
 * Parses SHOPS_FILE's text into its shops, or one line saying what is wrong (never a key, secret or token).
 * @example parseShopsFile('{"shop-a":{"key":"k","secret":"s"}}') // { ok: true, shops: Map { 'shop-a' => … } }
 */
export function parseShopsFile(
  text: string,
): { ok: true; shops: Map<string, ShopsFileEntry> } | { ok: false; message: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, message: `not JSON: expected ${WHAT}` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, message: `expected ${WHAT}` };
  const shops = new Map<string, ShopsFileEntry>();
  for (const [shopId, value] of Object.entries(raw)) {
    if (!SHOP_ID.test(shopId) || shopId === '.' || shopId === '..') {
      return {
        ok: false,
        message: `shop ${JSON.stringify(shopId.slice(0, 70))}: expected a shop id of 1 to 64 letters, digits, dots, dashes or underscores, not starting with a dot, dash or underscore`,
      };
    }
    const parsed = shopSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(the entry)';
      return { ok: false, message: `shop ${shopId}: ${where} is wrong (${issue.code}): expected ${WHAT}` };
    }
    const tills = Object.entries(parsed.data.tills ?? {}).map(([name, token]) => ({ name, token }));
    shops.set(shopId, { key: parsed.data.key, secret: parsed.data.secret, target: parsed.data.target, tills });
  }
  return { ok: true, shops };
}

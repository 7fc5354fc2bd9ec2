// The body of POST relay/v1/uses, read strictly with the feed protocol's schema (usesPostSchema in
// @shop-lookup/shop-api: the same the engine's bodies are typed with), at most 64 kB and 500 uses and releases; a
// wrong field is named (`uses[3].at`, `releases[0].use`), never guessed.
import { MAX_USES_BODY_BYTES, readWire, type UsesPostRead, usesPostSchema } from '@shop-lookup/shop-api';
import type { IncomingMessage } from 'node:http';
import { readJsonBody } from '../door/jsonBody';

/**
 * The device, its uses (claims, with `claim`) and releases, or what is wrong with the body.
 * @example const body = await readUsesBody(req); if (typeof body === 'string') answer400(body);
 */
export async function readUsesBody(req: IncomingMessage): Promise<UsesPostRead | string> {
  const parsed = await readJsonBody(
    req,
    MAX_USES_BODY_BYTES,
    `the body must be at most ${MAX_USES_BODY_BYTES} bytes; send the uses in several requests`,
    'the body must be JSON: { "device": "…", "uses": [ … ] }',
  );
  if (!parsed.ok) return parsed.why;
  const body = readWire(usesPostSchema, parsed.value, 'the body');
  return body.ok ? body.value : body.why;
}
